/**
 * The rules of `nightly-audit` that both runtimes apply (NAMES.md "Never missing a pull request"), with no
 * store behind them, so that the native edge worker bundles this module as the Node audit imports it.
 */

export const HOUR = 3_600_000;
/** A command running longer than this is stuck (as the watchdog says). */
export const STUCK_COMMAND_MS = 10 * 60_000;
/** A repository whose last this many finished reviews all failed gets `reviews_failing`. */
export const FAILING_RUNS = 3;
const SAMPLE = 5;

export type AuditCheck = { count: number; sample: string[] };

/** A check's count and the first few of what it found. */
export const check = (items: string[], count = items.length): AuditCheck => ({
  count,
  sample: items.slice(0, SAMPLE),
});

/**
 * The repositories whose last FAILING_RUNS finished runs all failed, sorted; `recent` are the finished
 * runs of the last day, newest first.
 */
export function failingRepos(recent: ReadonlyArray<{ repo: string; status: string }>): string[] {
  const lastRuns = new Map<string, string[]>();
  for (const r of recent) {
    const list = lastRuns.get(r.repo) ?? [];
    if (list.length < FAILING_RUNS) list.push(r.status);
    lastRuns.set(r.repo, list);
  }
  return [...lastRuns]
    .filter(([, statuses]) => statuses.length === FAILING_RUNS && statuses.every((s) => s === 'failed'))
    .map(([repo]) => repo)
    .sort();
}

/** The start (UTC) of the month `now` is in: the budget check counts the spend since then. */
export const monthStart = (now: number): number =>
  Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);

export type BudgetCheck = {
  budgetUsd: number | null;
  spentUsd: number | null;
  reached: boolean;
  known: boolean;
};

/** The month's model spend against the policy's budget: reached only when the spend is known in full. */
export function budgetCheck(
  budgetUsd: number | null,
  spentUsd: number | null,
  complete: boolean,
): BudgetCheck {
  const known = complete && spentUsd !== null;
  return { budgetUsd, spentUsd, reached: budgetUsd !== null && known && spentUsd! >= budgetUsd, known };
}
