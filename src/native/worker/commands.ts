/**
 * What the native command bridge executes once it claimed a command (review-engine 3.5, live authority).
 * `replay-webhook` reads the stored delivery (its body in D1, else the R2 object it was offloaded to) and
 * sends it to the review queue again; a delivery already processed needs `force`. `retry-publish` has the
 * run's container publish its stored result again under a lease of its own (`publish:{runId}`). The other
 * kinds of the Node bridge (`requeue`, `sync-repositories`) have no native executor and fail saying so.
 */
import { callContainer, intEnv, leaseCall } from './consumer.js';
import type { Env } from './env.js';
import { enqueue, planMessage } from './ingress.js';
import { DEFAULT_LEASE_MS } from './lease.js';

/** A command that could not be done: its code and message are the command's error. */
export class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type NativeCommand = { id: string; kind: string; payload: Record<string, unknown> };

/** Dispatch outcomes after which a delivery counts as processed (a replay then needs `force`). */
const PROCESSED = new Set(['dispatched', 'skipped_completed', 'skipped_obsolete', 'ignored']);

async function replayWebhook(env: Env, command: NativeCommand): Promise<Record<string, unknown>> {
  const id = command.payload.deliveryId;
  if (typeof id !== 'string' || id === '')
    throw new CommandFailure('invalid_command', 'replay-webhook needs a deliveryId');
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
  if (row.dispatch_outcome && PROCESSED.has(row.dispatch_outcome) && command.payload.force !== true)
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
  return { deliveryId: id, event: row.event, replayed: true, forced: command.payload.force === true };
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
  const key = command.payload.reviewKey;
  if (typeof key !== 'string' || key === '')
    throw new CommandFailure('invalid_command', 'retry-publish needs a reviewKey');
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

export async function executeCommand(env: Env, command: NativeCommand): Promise<Record<string, unknown>> {
  if (command.kind === 'replay-webhook') return replayWebhook(env, command);
  if (command.kind === 'retry-publish') return retryPublish(env, command);
  throw new CommandFailure('no_native_executor', `command kind ${command.kind} has no native executor`);
}
