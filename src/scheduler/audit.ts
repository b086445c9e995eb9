import type { Logger } from 'pino';
import { raiseAlertQuietly, type AlertDeps } from '../alerts/raise.js';
import type { Clock } from '../clock.js';
import { DEFAULT_REVIEW_POLICY } from '../policy/policy.schema.js';
import type { Store } from '../store/index.js';
import {
  HOUR,
  STUCK_COMMAND_MS,
  check,
  failingRepos as lastRunsFailed,
  auditAlerts,
  budgetCheck,
  monthStart,
  type AuditFindings,
} from './audit-rules.js';
import { londonTime } from './london.js';

/** The cron expression of `nightly-audit`: 22:30 and 23:30 UTC, one of which is 23:30 in London. */
export const NIGHTLY_AUDIT_EXPRESSION = '30 22,23 * * *';

export type AuditArtifact =
  | { ran: false; londonTime: string; reason: 'not_2330_in_london' }
  | {
      ran: true;
      londonTime: string;
      checks: AuditFindings;
      alerts: string[];
    };

export type AuditDeps = { store: Store; clock: Clock; log: Logger; alerts: AlertDeps };

/**
 * `nightly-audit` (NAMES.md "Never missing a pull request"): scheduled at 22:30 and 23:30 UTC, it runs
 * only when it is 23:30 in Europe/London (so once a night, summer or winter; `manual` runs it whatever
 * the time). It checks what should not be: analysed runs never published, publications pending for more
 * than an hour, dead-lettered jobs, commands stuck running, deliveries stored and not processed for more
 * than an hour, repositories whose last runs all failed, and the month's model spend against the
 * policy's budget; each finding is an alert and is in the artifact.
 */
export async function runNightlyAudit(deps: AuditDeps, opts: { manual: boolean }): Promise<AuditArtifact> {
  const { store, clock } = deps;
  const now = clock.now();
  const london = londonTime(now);
  if (!opts.manual && london !== '23:30')
    return { ran: false, londonTime: london, reason: 'not_2330_in_london' };
  const knex = store.db.knex;

  const unpublished: Array<{ review_key: string }> = await knex('runs')
    .select('review_key')
    .whereIn('analysis_status', ['analysed', 'degraded'])
    .where('publish_status', 'failed')
    .orderBy('updated_at', 'desc');
  const pending: Array<{ review_key: string }> = await knex('runs')
    .select('review_key')
    .whereIn('analysis_status', ['analysed', 'degraded'])
    .where('publish_status', 'pending')
    .where('updated_at', '<', now - HOUR)
    .orderBy('updated_at', 'asc');
  const dead: Array<{ id: number; queue: string; dead_reason: string | null }> = await knex('jobs')
    .select('id', 'queue', 'dead_reason')
    .where('status', 'dead')
    .orderBy('id', 'desc');
  const stuck = await store.commands.runningSince(now - STUCK_COMMAND_MS, 100);
  const notProcessed: Array<{ id: string }> = await knex('deliveries')
    .select('id')
    .where('status', 'queued')
    .where('received_at', '<', now - HOUR)
    .orderBy('received_at', 'asc')
    .limit(1000);
  const failing = await failingRepos(store, now);
  const budget = await monthBudget(store, now);

  const checks = {
    analysedNeverPublished: check(unpublished.map((r) => r.review_key)),
    publicationsPending: check(pending.map((r) => r.review_key)),
    deadLetters: check(
      dead.map((j) => `job ${j.id} (${j.queue}${j.dead_reason ? `: ${j.dead_reason}` : ''})`),
    ),
    commandsStuck: check(stuck.map((c) => `${c.id} (${c.kind})`)),
    deliveriesNotProcessed: check(notProcessed.map((d) => d.id)),
    reviewsFailing: check(failing),
    budget,
  };

  const alerts = auditAlerts(checks, failing);
  for (const alert of alerts) await raiseAlertQuietly(deps.alerts, alert);
  const raised = alerts.map((alert) => alert.kind);
  deps.log.info(
    { event: 'nightly-audit', alerts: raised.length },
    `nightly audit: ${raised.length} finding(s)`,
  );
  return { ran: true, londonTime: london, checks, alerts: raised };
}

/** Repositories whose last FAILING_RUNS runs of the last day all failed, sorted. */
async function failingRepos(store: Store, now: number): Promise<string[]> {
  const recent: Array<{ repo: string; status: string }> = await store.db
    .knex('runs')
    .select('repo', 'status')
    .where('created_at', '>=', now - 24 * HOUR)
    .whereIn('status', ['completed', 'failed'])
    .orderBy('created_at', 'desc')
    .limit(10_000);
  return lastRunsFailed(recent);
}

/** The month's model spend against the policy's budget. */
async function monthBudget(store: Store, now: number): Promise<AuditFindings['budget']> {
  const policy = (await store.policy.get())?.settings ?? DEFAULT_REVIEW_POLICY;
  const usage = await store.reads.usage(monthStart(now), now + 1);
  return budgetCheck(policy.monthlyModelBudgetUsd, usage.model.costUsd, usage.model.complete);
}
