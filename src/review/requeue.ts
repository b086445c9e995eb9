import {
  REQUEUE_TRIGGER,
  RequeueRefusal,
  requeueVariant,
  resolveRequeueTarget,
  VARIANT_PATTERN,
  type RequeueRef,
  type RequeueTarget,
} from './requeue-rules.js';
import { reviewKey as buildReviewKey } from './keys.js';
import type { QueueBackend } from '../queue/types.js';
import type { Store } from '../store/index.js';
import { splitFullName } from '../store/repositories.js';
import { REVIEW_QUEUE, requestReview, type ReviewJobPayload, type ReviewRequestResult } from './request.js';

export { RequeueRefusal as RequeueError, VARIANT_PATTERN, type RequeueRef, type RequeueTarget };

/** What a requeue reviews (review-engine 4.5): the shared rule over the store. */
export function requeueTarget(store: Store, ref: RequeueRef): Promise<RequeueTarget> {
  return resolveRequeueTarget(
    {
      run: (key) => store.runs.getByKey(key),
      pullRequest: (repo, prNumber) => store.pullRequests.get(repo, prNumber),
      repository: (repo) => store.repositories.get(repo),
    },
    ref,
  );
}

export type RequeueResult = {
  outcome: ReviewRequestResult['outcome'];
  reviewKey: string;
  runId: string;
  jobId: number | null;
  headSha: string;
  variant: string;
};

/**
 * Requeue (the bridge's `requeue` command and the CLI's): a new run of the target under `variant`
 * (default `operator-{now}`), enqueued on the `reviews` lane. By default run and job are written together
 * in the store; with `queue` (a separate queue a worker claims from) the run is created in the store and
 * its job enqueued there, and an existing run of that key is refused (`review_exists`).
 */
export async function requeueReview(
  store: Store,
  ref: RequeueRef,
  opts: { variant?: string | null; now: number; queue?: QueueBackend },
): Promise<RequeueResult> {
  const variant = requeueVariant(opts.variant, opts.now);
  const target = await requeueTarget(store, ref);
  const { owner, name } = splitFullName(target.repo);
  const request = {
    owner,
    repo: name,
    number: target.prNumber,
    headSha: target.headSha,
    installationId: target.installationId,
    trigger: REQUEUE_TRIGGER,
    variant,
  };
  const done = (outcome: RequeueResult['outcome'], key: string, runId: string, jobId: number | null) => ({
    outcome,
    reviewKey: key,
    runId,
    jobId,
    headSha: target.headSha,
    variant,
  });
  if (!opts.queue) {
    const result = await requestReview(store, request);
    return done(result.outcome, result.run.reviewKey, result.run.id, result.jobId);
  }
  const key = buildReviewKey(owner, name, target.prNumber, target.headSha, variant);
  const { run, created } = await store.runs.createOrGet({
    reviewKey: key,
    repo: target.repo,
    prNumber: target.prNumber,
    headSha: target.headSha,
    variant,
    trigger: REQUEUE_TRIGGER,
    installationId: target.installationId,
  });
  if (!created) throw new RequeueRefusal('review_exists', `run ${key} exists already`);
  const payload: ReviewJobPayload = { ...request, runId: run.id, reviewKey: key };
  const result = await opts.queue.enqueue({
    queue: REVIEW_QUEUE,
    kind: 'review',
    key,
    mode: 'keep_existing',
    payload,
  });
  await store.runs.update(run.id, { jobId: result.jobId });
  return done('enqueued', key, run.id, result.jobId);
}
