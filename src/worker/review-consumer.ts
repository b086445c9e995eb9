import type { Logger } from 'pino';
import type { ReviewJobPayload } from '../review/request.js';
import type { RunResult } from '../review/run-result.js';
import type { Store } from '../store/index.js';
import type { ClaimedJob } from '../queue/types.js';
import type { RunRecord } from '../store/runs.js';
import type { JobContext, JobHandler, JobOutcome } from './runner.js';

/** What the review engine reports for one run: the run's final status, and why when it did not review. */
export type ReviewExecution =
  /** Analysed: the analysis as stored (absent for an executor that does not hand it back). */
  | { status: 'completed'; analysis?: RunResult }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; error: string; retry: boolean };

/**
 * Runs one review (admission, context, model, publication). It must call `ctx.assertLease()` right before
 * anything it publishes, and stop when `ctx.signal` aborts.
 */
export type ReviewExecutor = (run: RunRecord, job: ClaimedJob, ctx: JobContext) => Promise<ReviewExecution>;

/** The dispatch outcomes of review-engine 3.4, as logged and as returned to the tests. */
export type DispatchOutcome =
  'dispatched' | 'skipped_completed' | 'skipped_locked' | 'skipped_obsolete' | 'dead_lettered';

export function missingHeadShaMessage(reviewKey: string): string {
  return `review run ${reviewKey} has no headSha: resolve the pull request head before dispatch`;
}

/**
 * Handler of the `reviews` lane. Before it runs a review it settles the dispatch outcome:
 * - the run is already completed (or was skipped by admission): `skipped_completed`, acknowledged;
 * - another job holds the run's dispatch lease and its lease is live: `skipped_locked`, retried later;
 * - the run was superseded by a newer head or abandoned: `skipped_obsolete`, acknowledged;
 * - the job names no run, or a run that does not exist: `dead_lettered` with `unroutable`;
 * - the run has no head SHA: the run fails with a message saying so, and the job is dead-lettered.
 * The dispatch lease is the job's own lease, so a worker that lost its job lease loses the run too.
 */
export function reviewJobHandler(
  store: Store,
  execute: ReviewExecutor,
  log: Logger,
  opts: {
    lockedRetryMs?: number;
    onDispatch?: (jobId: number, outcome: DispatchOutcome) => void;
    /** A run failed for good (no retry left): the `reviews_failing` check (src/alerts/moments.ts). */
    onRunFailed?: (repo: string) => Promise<void>;
  } = {},
): JobHandler {
  const report = (job: ClaimedJob, outcome: DispatchOutcome, extra: Record<string, unknown> = {}) => {
    opts.onDispatch?.(job.id, outcome);
    log.info({ event: 'review-dispatch', outcome, jobId: job.id, ...extra }, `review dispatch ${outcome}`);
  };
  return async (job, ctx): Promise<JobOutcome> => {
    const payload = job.payload as Partial<ReviewJobPayload> | null;
    const runId = typeof payload?.runId === 'string' ? payload.runId : null;
    if (!runId) {
      report(job, 'dead_lettered', { reason: 'unroutable' });
      return { type: 'dead', reason: 'unroutable', error: 'review job names no run' };
    }
    const run = await store.runs.get(runId);
    if (!run) {
      report(job, 'dead_lettered', { reason: 'unroutable', runId });
      return { type: 'dead', reason: 'unroutable', error: `review run ${runId} does not exist` };
    }
    if (!run.headSha) {
      const message = missingHeadShaMessage(run.reviewKey);
      await store.runs.update(run.id, { status: 'failed', error: message });
      report(job, 'dead_lettered', { reason: 'unroutable', reviewKey: run.reviewKey });
      return { type: 'dead', reason: 'unroutable', error: message };
    }
    const dispatch = await store.runs.acquireDispatch(run.id, job.receipt);
    switch (dispatch.outcome) {
      case 'missing':
        report(job, 'dead_lettered', { reason: 'unroutable', runId });
        return { type: 'dead', reason: 'unroutable', error: `review run ${runId} does not exist` };
      case 'completed':
        report(job, 'skipped_completed', { reviewKey: run.reviewKey });
        return { type: 'ack' };
      case 'obsolete':
        report(job, 'skipped_obsolete', { reviewKey: run.reviewKey, status: dispatch.run.status });
        return { type: 'ack' };
      case 'locked':
        report(job, 'skipped_locked', { reviewKey: run.reviewKey });
        return { type: 'release', delayMs: opts.lockedRetryMs ?? 30_000 };
      case 'acquired':
        break;
    }
    report(job, 'dispatched', { reviewKey: run.reviewKey });
    let result: ReviewExecution;
    try {
      result = await execute(dispatch.run, job, ctx);
    } catch (error) {
      if (ctx.signal.aborted) throw error; // lease lost or shutting down: the runner releases the job
      result = { status: 'failed', error: (error as Error)?.message ?? String(error), retry: true };
    }
    // Only the holder of a live lease may record the result.
    await ctx.assertLease();
    return recordExecution(store, run, job, result, opts.onRunFailed);
  };
}

/** Records the run's final status, releases its dispatch lease and says what becomes of the job. */
async function recordExecution(
  store: Store,
  run: RunRecord,
  job: ClaimedJob,
  result: ReviewExecution,
  onRunFailed?: (repo: string) => Promise<void>,
): Promise<JobOutcome> {
  // A retried run waits as `queued` with its last error; it fails for good on the last attempt.
  const requeued = result.status === 'failed' && result.retry && job.attempts < job.maxAttempts;
  await store.runs.update(
    run.id,
    result.status === 'completed'
      ? { status: 'completed', error: null, reason: null }
      : result.status === 'skipped'
        ? { status: 'skipped', reason: result.reason }
        : { status: requeued ? 'queued' : 'failed', error: result.error },
  );
  await store.runs.releaseDispatch(run.id, job.receipt);
  if (result.status !== 'failed') return { type: 'ack' };
  if (!requeued) await onRunFailed?.(run.repo).catch(() => undefined);
  return result.retry
    ? { type: 'retry', error: result.error }
    : { type: 'dead', reason: 'review_failed', error: result.error };
}
