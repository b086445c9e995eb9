import type { AlertDeps } from './raise.js';
import { raiseAlertQuietly } from './raise.js';
import { FAILING_RUNS } from '../scheduler/audit-rules.js';

/**
 * Alerts raised the moment their condition happens (NAMES.md "Never missing a pull request"), not only
 * when the nightly audit finds them: a job dead-lettered, a repository whose last reviews all failed, the
 * month's model budget reached at admission. Each is deduplicated on its open alert (count, lastSeenAt);
 * none throws: an alert that cannot be stored is logged.
 */

/** Jobs dead-lettered: by a worker when a job failed for good, or by the reaper. */
export function deadLettered(
  deps: AlertDeps,
  e: { queue: string; reason: string; count: number; jobId?: number; error?: string },
): Promise<void> {
  const which = e.jobId !== undefined ? `job ${e.jobId}` : `${e.count} job(s)`;
  const why = e.error ? `: ${e.error.slice(0, 300)}` : '';
  return raiseAlertQuietly(deps, {
    kind: 'dead_letters',
    repo: null,
    severity: 'warning',
    message: `${which} of the ${e.queue} queue dead-lettered (${e.reason})${why}; see GET /operator/api/queue or requeue with an operator command`,
  });
}

/** A review failed for good: `reviews_failing` when the repository's last FAILING_RUNS finished reviews failed. */
export async function reviewFailed(deps: AlertDeps, repo: string): Promise<void> {
  let statuses: string[];
  try {
    statuses = await deps.store.runs.lastFinishedStatuses(repo, FAILING_RUNS);
  } catch (error) {
    deps.log.warn(
      { event: 'alert-check-failed', kind: 'reviews_failing', err: error },
      'could not read runs',
    );
    return;
  }
  if (statuses.length < FAILING_RUNS || statuses.some((s) => s !== 'failed')) return;
  await raiseAlertQuietly(deps, {
    kind: 'reviews_failing',
    repo,
    severity: 'critical',
    message: `The last ${FAILING_RUNS} reviews of ${repo} failed`,
  });
}

/** Admission refused a review: the month's model budget is reached. */
export function budgetReached(deps: AlertDeps, detail: string): Promise<void> {
  return raiseAlertQuietly(deps, {
    kind: 'budget_reached',
    repo: null,
    severity: 'critical',
    message: `Automatic reviews are refused: ${detail}`,
  });
}
