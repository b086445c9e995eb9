/**
 * The native bridge's `requeue` (review-engine 4.5, operator-api 2.3): the payload, the variant, the target
 * and what an existing run of the key means are the shared rules of src/review/requeue-rules.ts (the Node
 * runtime's); here they read D1 and the review goes to the review queue as a `pull_request` message with
 * trigger `operator_requeue` and its variant, which the consumer dispatches as it dispatches a webhook's.
 */
import { CommandFailure, requeueFailureCode, requeueRequest } from '../../bridge/command-rules.js';
import {
  existingRunOutcome,
  REQUEUE_TRIGGER,
  RequeueRefusal,
  requeueKey,
  requeueVariant,
  resolveRequeueTarget,
  type RequeueLookups,
} from '../../review/requeue-rules.js';
import { insertRun } from './consumer.js';
import type { Env } from './env.js';
import { queueReview } from './ingress.js';

type RunRow = { repo: string; pr_number: number; head_sha: string | null; installation_id: number | null };
const asRun = (row: RunRow) => ({
  repo: row.repo,
  prNumber: row.pr_number,
  headSha: row.head_sha,
  installationId: row.installation_id,
});

/**
 * The stored state a requeue reads, in D1: a review key's run in the state tables (`runs`, flushed by the
 * containers) or the worker's own record (`native_runs`). A pull request's stored head is the head of its
 * latest run the worker recorded: the containers' `pull_requests` rows carry no head (the Node runtime's
 * webhook intake writes it, and there is none here).
 */
function d1Lookups(env: Env): RequeueLookups {
  const columns = 'repo, pr_number, head_sha, installation_id';
  return {
    run: async (key) => {
      const row = await env.DB.prepare(
        `SELECT ${columns} FROM runs WHERE review_key = ?
         UNION ALL SELECT ${columns} FROM native_runs WHERE review_key = ? LIMIT 1`,
      )
        .bind(key, key)
        .first<RunRow>();
      return row ? asRun(row) : null;
    },
    pullRequest: async (repo, prNumber) => {
      const row = await env.DB.prepare(
        `SELECT ${columns} FROM native_runs WHERE repo = ? AND pr_number = ? AND head_sha IS NOT NULL
         ORDER BY created_at DESC, rowid DESC LIMIT 1`,
      )
        .bind(repo, prNumber)
        .first<RunRow>();
      return row ? { headSha: row.head_sha, installationId: row.installation_id } : null;
    },
    repository: async (repo) => {
      const row = await env.DB.prepare('SELECT installation_id FROM repositories WHERE full_name = ?')
        .bind(repo)
        .first<{ installation_id: number | null }>();
      return row ? { installationId: row.installation_id } : null;
    },
  };
}

/** A run that ended is queued again, here and in the state table the container reads. */
async function revive(env: Env, runId: string, now: number): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("UPDATE native_runs SET status = 'queued', updated_at = ? WHERE id = ?").bind(
      new Date(now).toISOString(),
      runId,
    ),
    env.DB.prepare(
      "UPDATE runs SET status = 'queued', reason = NULL, error = NULL, updated_at = ? WHERE id = ?",
    ).bind(now, runId),
  ]);
}

/**
 * What to do with the run the key has already (the shared rule). A `skipped` review is final here as well:
 * its dispatch lease is `completed`, so the consumer would end a revived one `skipped_completed`.
 */
function outcomeOf(status: string): ReturnType<typeof existingRunOutcome> {
  return status === 'skipped' ? 'already_reviewed' : existingRunOutcome(status);
}

/**
 * A new run of the target under the variant (default `operator-{now}`), queued; an existing run of that key
 * is answered as it is (`already_queued`, `already_reviewed`) or queued again when it ended without a
 * review. The result is the Node bridge's (`outcome`, `reviewKey`, `runId`, `jobId`: none here, `headSha`,
 * `variant`) with the `deliveryId` of the queued message.
 */
export async function requeueCommand(
  env: Env,
  command: { id: string; payload: Record<string, unknown> },
  now: number,
): Promise<Record<string, unknown>> {
  const { ref, variant: asked } = requeueRequest(command.payload);
  let variant, target;
  try {
    variant = requeueVariant(asked, now);
    target = await resolveRequeueTarget(d1Lookups(env), ref);
  } catch (error) {
    if (error instanceof RequeueRefusal)
      throw new CommandFailure(requeueFailureCode(error.code), error.message);
    throw error;
  }
  const key = requeueKey(target, variant);
  const deliveryId = `requeue:${command.id}`;
  const answer = (outcome: string, runId: string, queued: boolean) => ({
    outcome,
    reviewKey: key,
    runId,
    jobId: null,
    headSha: target.headSha,
    variant,
    deliveryId: queued ? deliveryId : null,
  });
  const existing = await env.DB.prepare('SELECT id, status FROM native_runs WHERE review_key = ?')
    .bind(key)
    .first<{ id: string; status: string }>();
  let runId: string;
  if (existing) {
    const outcome = outcomeOf(existing.status);
    if (outcome !== 'revive') return answer(outcome, existing.id, false);
    await revive(env, existing.id, now);
    runId = existing.id;
  } else {
    runId = await insertRun(env, { ...target, trigger: REQUEUE_TRIGGER }, key, deliveryId);
  }
  await queueReview(env, deliveryId, REQUEUE_TRIGGER, { ...target, variant });
  return answer('enqueued', runId, true);
}
