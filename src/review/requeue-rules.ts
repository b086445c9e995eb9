/**
 * What a requeue reviews and under which review key (review-engine 4.5), over lookups each runtime
 * answers from its own storage: the Node store (requeue.ts) or the native worker's D1
 * (src/native/worker/requeue.ts). Nothing Node-only is imported, so the edge worker can bundle it.
 */
import { reviewKey } from './keys.js';

/** The trigger of a requeued review (review-engine 4.5; a manual trigger for admission). */
export const REQUEUE_TRIGGER = 'operator_requeue';

/** What to requeue: a review key, or a repository and pull-request number (requeue.ts re-exports it). */
export type RequeueRef = { reviewKey?: string | null; repo?: string | null; prNumber?: number | null };
export type RequeueTarget = { repo: string; prNumber: number; headSha: string; installationId: number };

/**
 * Why a requeue cannot happen: its code and reason (requeue.ts exports it as RequeueError; the native
 * bridge's requeue refuses with these).
 */
export class RequeueRefusal extends Error {
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
    this.name = 'RequeueRefusal';
  }
}

/** A variant joined to a review key (NAMES.md): letters, digits, dots, dashes, underscores. */
export const VARIANT_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;
const REVIEW_KEY = /^([^/#]+)\/([^#]+)#(\d+)@([0-9a-f]{40}|[0-9a-f]{64})(?::(.+))?$/;

/** The requeue's variant: the given one, else `operator-{now}`; refused unless it fits a review key. */
export function requeueVariant(variant: string | null | undefined, now: number): string {
  const chosen = variant || `operator-${now}`;
  if (!VARIANT_PATTERN.test(chosen)) {
    throw new RequeueRefusal(
      'invalid_variant',
      'the variant must be 1 to 100 letters, digits, dots, dashes or underscores',
    );
  }
  return chosen;
}

/** What a requeue reads of the stored state, in the runtime's own storage. */
export type RequeueLookups = {
  run(key: string): Promise<{
    repo: string;
    prNumber: number;
    headSha: string | null;
    installationId: number | null;
  } | null>;
  pullRequest(
    repo: string,
    prNumber: number,
  ): Promise<{ headSha: string | null; installationId: number | null } | null>;
  repository(repo: string): Promise<{ installationId: number | null } | null>;
};

/** The stored head a review key names: its stored run's, else the PR's stored head when the key names it. */
async function keyTarget(lookups: RequeueLookups, key: string) {
  const run = await lookups.run(key);
  const parts = REVIEW_KEY.exec(key);
  if (!run && !parts) throw new RequeueRefusal('invalid_request', `${key} is not a review key`);
  if (run) return run;
  const repo = `${parts![1]}/${parts![2]}`;
  const prNumber = Number(parts![3]);
  const pr = await lookups.pullRequest(repo, prNumber);
  if (!pr || pr.headSha !== parts![4]) {
    throw new RequeueRefusal(
      'review_not_found',
      `no stored review ${key}, and ${parts![4]!.slice(0, 12)} is not the stored head of ${repo}#${prNumber}`,
    );
  }
  return { repo, prNumber, headSha: pr.headSha, installationId: pr.installationId };
}

/**
 * What a requeue reviews (review-engine 4.5): the exact stored review key, or the stored head of the pull
 * request (by repo and number, or by a review key naming that head). It needs an installation id: the
 * run's, else the pull request's, else the repository's.
 */
export async function resolveRequeueTarget(lookups: RequeueLookups, ref: RequeueRef): Promise<RequeueTarget> {
  let found: { repo: string; prNumber: number; headSha: string | null; installationId: number | null };
  if (ref.reviewKey) {
    found = await keyTarget(lookups, ref.reviewKey);
  } else {
    const repo = ref.repo ?? '';
    const prNumber = Number(ref.prNumber);
    if (!repo || !Number.isSafeInteger(prNumber) || prNumber < 1) {
      throw new RequeueRefusal('invalid_request', 'requeue needs a reviewKey, or repo plus number');
    }
    const pr = await lookups.pullRequest(repo, prNumber);
    if (!pr?.headSha) throw new RequeueRefusal('pr_not_found', `no stored head for ${repo}#${prNumber}`);
    found = { repo, prNumber, headSha: pr.headSha, installationId: pr.installationId };
  }
  const { repo, prNumber } = found;
  const installationId =
    found.installationId ??
    (await lookups.pullRequest(repo, prNumber))?.installationId ??
    (await lookups.repository(repo))?.installationId ??
    null;
  if (installationId === null) {
    throw new RequeueRefusal(
      'installation_missing',
      `cannot requeue ${repo}#${prNumber}: the installation id is missing`,
    );
  }
  return { repo, prNumber, headSha: found.headSha!, installationId };
}

/** The review key of a requeued target under its variant. */
export function requeueKey(target: RequeueTarget, variant: string): string {
  const i = target.repo.indexOf('/');
  return reviewKey(
    target.repo.slice(0, i),
    target.repo.slice(i + 1),
    target.prNumber,
    target.headSha,
    variant,
  );
}

/** Run statuses after which a review of the same key may run again (src/review/request.ts). */
const TERMINAL_RETRYABLE = new Set(['skipped', 'failed', 'superseded', 'abandoned']);

/**
 * What a review request does with the run its key has already: a queued or running one is left as it is
 * (`already_queued`), one that ended without a review is queued again (`revive`), any other is
 * `already_reviewed`.
 */
export function existingRunOutcome(status: string): 'already_queued' | 'already_reviewed' | 'revive' {
  if (status === 'queued' || status === 'running') return 'already_queued';
  return TERMINAL_RETRYABLE.has(status) ? 'revive' : 'already_reviewed';
}
