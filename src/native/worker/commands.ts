/**
 * What the native command bridge executes once it claimed a command (review-engine 3.5, live authority),
 * each kind as the Node bridge does it. The payload fields, their refusals and the rules are the Node
 * bridge's own (src/bridge/command-rules.ts).
 *
 * - `replay-webhook` reads the stored delivery (its body in D1, else the R2 object it was offloaded to) and
 *   sends it to the review queue again; a delivery already processed needs `force`.
 * - `retry-publish` has the run's container publish its stored result again under a lease of its own
 *   (`publish:{runId}`).
 * - `requeue` (requeue.ts) records a new run of the stored head under a variant and sends it to the review
 *   queue as the catch-up sends its reviews.
 * - `sync-repositories` (repo-sync.ts) lists the App's installations and their repositories on GitHub and
 *   records them in D1's `repositories`.
 *
 * Any other kind fails with `no_native_executor`.
 */
import { CommandFailure, forced, requiredField } from '../../bridge/command-rules.js';
import { callContainer, intEnv, leaseCall } from './consumer.js';
import type { Env } from './env.js';
import { enqueue, planMessage } from './ingress.js';
import { DEFAULT_LEASE_MS } from './lease.js';
import { syncRepositoriesCommand } from './repo-sync.js';
import { requeueCommand } from './requeue.js';

export type NativeCommand = { id: string; kind: string; payload: Record<string, unknown> };

/** Dispatch outcomes after which a delivery counts as processed (a replay then needs `force`). */
const PROCESSED = new Set(['dispatched', 'skipped_completed', 'skipped_obsolete', 'ignored']);

async function replayWebhook(env: Env, command: NativeCommand): Promise<Record<string, unknown>> {
  const id = requiredField('replay-webhook', 'deliveryId', command.payload);
  const row = await env.DB.prepare(
    'SELECT id, event, dispatch_outcome, body, body_key FROM native_deliveries WHERE id = ?',
  )
    .bind(id)
    .first<{
      id: string;
      event: string;
      dispatch_outcome: string | null;
      body: string | null;
      body_key: string | null;
    }>();
  if (!row) throw new CommandFailure('delivery_not_found', `delivery ${id} is not recorded`);
  if (row.dispatch_outcome && PROCESSED.has(row.dispatch_outcome) && !forced(command.payload))
    throw new CommandFailure(
      'delivery_processed',
      `delivery ${id} was processed (${row.dispatch_outcome}); replay it with force`,
    );
  const body =
    row.body ?? (row.body_key && env.PAYLOADS ? await (await env.PAYLOADS.get(row.body_key))?.text() : null);
  if (!body) throw new CommandFailure('payload_missing', `the body of delivery ${id} is not stored`);
  await env.DB.prepare(
    'UPDATE native_deliveries SET attempts = 0, dispatch_outcome = NULL, dispatch_reason = NULL WHERE id = ?',
  )
    .bind(id)
    .run();
  await enqueue(env, planMessage(env, id, row.event, body), body);
  return { deliveryId: id, event: row.event, replayed: true, forced: forced(command.payload) };
}

type StoredRun = {
  id: string;
  review_key: string;
  repo: string;
  pr_number: number;
  head_sha: string | null;
  installation_id: number | null;
  trigger: string;
};

async function retryPublish(env: Env, command: NativeCommand): Promise<Record<string, unknown>> {
  const key = requiredField('retry-publish', 'reviewKey', command.payload);
  const run = await env.DB.prepare(
    `SELECT r.id, r.review_key, r.repo, r.pr_number, r.head_sha, r.installation_id, r.trigger
     FROM runs r JOIN native_runs n ON n.id = r.id WHERE r.review_key = ?`,
  )
    .bind(key)
    .first<StoredRun>();
  if (!run) throw new CommandFailure('run_not_found', `review run ${key} does not exist`);
  if (run.installation_id === null || run.head_sha === null)
    throw new CommandFailure('installation_missing', 'review run has no installation id');
  const leaseName = `publish:${run.id}`;
  const leaseMs = intEnv(env.LEASE_MS, DEFAULT_LEASE_MS);
  const token = crypto.randomUUID();
  const got = await leaseCall(env, leaseName, 'acquire', { token, leaseMs });
  if (got !== 'acquired') throw new CommandFailure('publish_locked', `a publication of ${key} is running`);
  try {
    const answer = await callContainer(
      env,
      {
        runId: run.id,
        reviewKey: run.review_key,
        repo: run.repo,
        prNumber: run.pr_number,
        headSha: run.head_sha,
        installationId: run.installation_id,
        trigger: run.trigger,
        variant: null,
        publishMode: env.VERDICT_PUBLISH_MODE === 'live' ? 'live' : 'shadow',
        leaseToken: token,
        leaseName,
        attempt: 1,
        mode: 'retry-publish',
      },
      leaseMs,
    );
    if (!answer.ok || answer.status === 'failed')
      throw new CommandFailure(
        answer.reason ?? 'publish_failed',
        answer.error ?? answer.reason ?? 'publication failed',
      );
    return { runId: run.id, reviewKey: run.review_key, publishStatus: answer.reason ?? 'published' };
  } finally {
    // Released as failed: the lease is gone, so a later retry-publish can take it again.
    await leaseCall(env, leaseName, 'release', { token, outcome: 'failed' }).catch(() => undefined);
  }
}

/** Runs one claimed command at `now` (the bridge's minute); resolves with its result or throws why it failed. */
export async function executeCommand(
  env: Env,
  command: NativeCommand,
  now: number,
): Promise<Record<string, unknown>> {
  if (command.kind === 'replay-webhook') return replayWebhook(env, command);
  if (command.kind === 'retry-publish') return retryPublish(env, command);
  if (command.kind === 'requeue') return requeueCommand(env, command, now);
  if (command.kind === 'sync-repositories') return syncRepositoriesCommand(env, now);
  throw new CommandFailure('no_native_executor', `command kind ${command.kind} has no native executor`);
}
