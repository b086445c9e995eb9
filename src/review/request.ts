import type { Store, StoreTransaction } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { existingRunOutcome } from './requeue-rules.js';
import { reviewKey, waitingJobKey } from './keys.js';

export const REVIEW_QUEUE = 'reviews';

export type ReviewRequest = {
  owner: string;
  repo: string;
  number: number;
  headSha: string;
  installationId: number | null;
  /** What asked for it: a pull_request action, `manual_command`, `operator_requeue`, … */
  trigger: string;
  /** `manual-{commentId}`, `operator-{timestamp}`: a variant makes a fresh run on an unchanged head. */
  variant?: string | null;
  deliveryId?: string | null;
  /** Attempts of the job before it fails for good (default: the job table's). */
  maxAttempts?: number;
};

export type ReviewJobPayload = ReviewRequest & { runId: string; reviewKey: string };

export type ReviewRequestResult = {
  outcome: 'enqueued' | 'replace_waiting' | 'already_queued' | 'already_reviewed';
  run: RunRecord;
  jobId: number | null;
};

/**
 * Creates (or revives) the run of a review key and enqueues its job, in one transaction. Automatic
 * requests share the PR's waiting slot `{owner}/{repo}#{pr}:latest-waiting`: a newer head replaces the
 * waiting job (`replace_waiting`) and the run it replaces becomes `superseded`; a job already running is
 * never replaced. A variant (manual command, operator requeue) gets its own job key.
 */
export async function requestReview(
  store: Store,
  req: ReviewRequest,
  /** A write transaction of the caller's to do it in (several requests, one commit); absent: its own. */
  within?: StoreTransaction,
): Promise<ReviewRequestResult> {
  const key = reviewKey(req.owner, req.repo, req.number, req.headSha, req.variant ?? null);
  const fullName = `${req.owner}/${req.repo}`;
  const inTransaction = (work: (trx: StoreTransaction) => Promise<ReviewRequestResult>) =>
    within ? work(within) : store.write(work);
  return inTransaction(async (trx) => {
    const { run, created } = await store.runs.createOrGet(
      {
        reviewKey: key,
        repo: fullName,
        prNumber: req.number,
        headSha: req.headSha,
        variant: req.variant ?? null,
        trigger: req.trigger,
        installationId: req.installationId,
        deliveryId: req.deliveryId ?? null,
      },
      trx,
    );
    if (!created) {
      const outcome = existingRunOutcome(run.status);
      if (outcome !== 'revive') return { outcome, run, jobId: run.jobId };
      await store.runs.update(run.id, { status: 'queued', reason: null, error: null }, trx);
    }
    const { maxAttempts, ...request } = req;
    const payload: ReviewJobPayload = {
      ...request,
      variant: req.variant ?? null,
      runId: run.id,
      reviewKey: key,
    };
    const result = await store.jobs.enqueue(
      {
        queue: REVIEW_QUEUE,
        kind: 'review',
        key: req.variant ? key : waitingJobKey(req.owner, req.repo, req.number),
        mode: req.variant ? 'keep_existing' : 'replace_waiting',
        payload,
        ...(maxAttempts !== undefined ? { maxAttempts } : {}),
      },
      trx,
    );
    if (result.outcome === 'replace_waiting') {
      const replaced = result.replacedPayload as Partial<ReviewJobPayload> | null;
      if (replaced?.runId && replaced.runId !== run.id) {
        await store.runs.update(replaced.runId, { status: 'superseded', reason: 'superseded' }, trx);
      }
    }
    await store.runs.update(run.id, { jobId: result.jobId }, trx);
    const queued = { ...run, status: 'queued' as const, jobId: result.jobId };
    return {
      outcome:
        result.outcome === 'replace_waiting'
          ? 'replace_waiting'
          : result.outcome === 'already_waiting'
            ? 'already_queued'
            : 'enqueued',
      run: queued,
      jobId: result.jobId,
    };
  });
}
