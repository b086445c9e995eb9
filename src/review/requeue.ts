import { reviewKey as buildReviewKey } from './keys.js';
import type { QueueBackend } from '../queue/types.js';
import type { Store } from '../store/index.js';
import { splitFullName } from '../store/repositories.js';
import { REVIEW_QUEUE, requestReview, type ReviewJobPayload, type ReviewRequestResult } from './request.js';

/** A variant joined to a review key (NAMES.md): letters, digits, dots, dashes, underscores. */
export const VARIANT_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

const REVIEW_KEY = /^([^/#]+)\/([^#]+)#(\d+)@([0-9a-f]{40}|[0-9a-f]{64})(?::(.+))?$/;

/** A requeue that cannot happen, with a short code and the reason. */
export class RequeueError extends Error {
  constructor(
    readonly code:
      | 'invalid_request'
      | 'invalid_variant'
      | 'review_not_found'
      | 'pr_not_found'
      | 'installation_missing'
      | 'review_exists',
    message: string,
  ) {
    super(message);
    this.name = 'RequeueError';
  }
}

/** What to requeue: a review key, or a repository and pull-request number. */
export type RequeueRef = { reviewKey?: string | null; repo?: string | null; prNumber?: number | null };

export type RequeueTarget = { repo: string; prNumber: number; headSha: string; installationId: number };

/**
 * What a requeue reviews (review-engine 4.5): the exact stored review key, or the stored head of the pull
 * request (by repo and number, or by a review key naming that head). It needs an installation id.
 */
export async function requeueTarget(store: Store, ref: RequeueRef): Promise<RequeueTarget> {
  const key = ref.reviewKey || null;
  let repo: string;
  let prNumber: number;
  let headSha: string | null = null;
  let installationId: number | null = null;
  if (key) {
    const run = await store.runs.getByKey(key);
    const parts = REVIEW_KEY.exec(key);
    if (!run && !parts) throw new RequeueError('invalid_request', `${key} is not a review key`);
    repo = run?.repo ?? `${parts![1]}/${parts![2]}`;
    prNumber = run?.prNumber ?? Number(parts![3]);
    if (run) {
      headSha = run.headSha;
      installationId = run.installationId;
    } else {
      const pr = await store.pullRequests.get(repo, prNumber);
      if (!pr || pr.headSha !== parts![4]) {
        throw new RequeueError(
          'review_not_found',
          `no stored review ${key}, and ${parts![4]!.slice(0, 12)} is not the stored head of ${repo}#${prNumber}`,
        );
      }
      headSha = pr.headSha;
      installationId = pr.installationId;
    }
  } else {
    repo = ref.repo ?? '';
    prNumber = Number(ref.prNumber);
    if (!repo || !Number.isSafeInteger(prNumber) || prNumber < 1) {
      throw new RequeueError('invalid_request', 'requeue needs a reviewKey, or repo plus number');
    }
    const pr = await store.pullRequests.get(repo, prNumber);
    if (!pr?.headSha) throw new RequeueError('pr_not_found', `no stored head for ${repo}#${prNumber}`);
    headSha = pr.headSha;
    installationId = pr.installationId;
  }
  installationId ??=
    (await store.pullRequests.get(repo, prNumber))?.installationId ??
    (await store.repositories.get(repo))?.installationId ??
    null;
  if (installationId === null) {
    throw new RequeueError(
      'installation_missing',
      `cannot requeue ${repo}#${prNumber}: the installation id is missing`,
    );
  }
  return { repo, prNumber, headSha: headSha!, installationId };
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
  const variant = opts.variant || `operator-${opts.now}`;
  if (!VARIANT_PATTERN.test(variant)) {
    throw new RequeueError(
      'invalid_variant',
      'the variant must be 1 to 100 letters, digits, dots, dashes or underscores',
    );
  }
  const target = await requeueTarget(store, ref);
  const { owner, name } = splitFullName(target.repo);
  const request = {
    owner,
    repo: name,
    number: target.prNumber,
    headSha: target.headSha,
    installationId: target.installationId,
    trigger: 'operator_requeue',
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
    trigger: 'operator_requeue',
    installationId: target.installationId,
  });
  if (!created) throw new RequeueError('review_exists', `run ${key} exists already`);
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
