import type { AlertInput } from '../store/alerts.js';

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

/** The checks an audit's alerts are raised from (each runtime adds its own). */
export type AuditFindings = {
  analysedNeverPublished: AuditCheck;
  publicationsPending: AuditCheck;
  deadLetters: AuditCheck;
  commandsStuck: AuditCheck;
  deliveriesNotProcessed: AuditCheck;
  reviewsFailing: AuditCheck;
  budget: BudgetCheck;
};

const INCONSISTENCIES = [
  ['analysed_never_published', 'analysedNeverPublished', 'analysed run(s) never published'],
  ['publications_pending', 'publicationsPending', 'publication(s) pending for more than an hour'],
  ['commands_stuck', 'commandsStuck', 'command(s) stuck running'],
  [
    'deliveries_not_processed',
    'deliveriesNotProcessed',
    'delivery(ies) stored and not processed for more than an hour',
  ],
] as const;

/** The alerts an audit raises, in order: its inconsistencies, dead letters, failing repositories, the budget. */
export function auditAlerts(checks: AuditFindings, failing: readonly string[]): AlertInput[] {
  const alerts: AlertInput[] = [];
  const list = (c: AuditCheck) => `${c.sample.join(', ')}${c.count > c.sample.length ? ', …' : ''}`;
  for (const [key, name, what] of INCONSISTENCIES) {
    const c = checks[name];
    if (c.count > 0) {
      const message = `nightly audit: ${c.count} ${what}: ${list(c)}`;
      alerts.push({ kind: 'audit_inconsistency', severity: 'warning', message, repo: null, key });
    }
  }
  const dead = checks.deadLetters;
  if (dead.count > 0) {
    const message = `${dead.count} job(s) are dead-lettered: ${list(dead)}`;
    alerts.push({ kind: 'dead_letters', severity: 'critical', message, repo: null });
  }
  for (const repo of failing) {
    const message = `The last ${FAILING_RUNS} reviews of ${repo} failed`;
    alerts.push({ kind: 'reviews_failing', severity: 'critical', message, repo });
  }
  const { reached, spentUsd, budgetUsd } = checks.budget;
  if (reached) {
    const message = `This month's model spend $${spentUsd!.toFixed(2)} has reached the budget of $${budgetUsd!.toFixed(2)}: automatic reviews are refused`;
    alerts.push({ kind: 'budget_reached', severity: 'critical', message, repo: null });
  }
  return alerts;
}
