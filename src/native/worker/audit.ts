/**
 * `nightly-audit` in the native runtime (review-engine 6.4; NAMES.md "Never missing a pull request"): the
 * Node audit's checks over what this runtime keeps, with its rules (src/scheduler/audit-rules.ts). The
 * runs are the Node store's own table in D1; dead letters, unprocessed deliveries and stuck commands are
 * the worker's (`native_deliveries`, `native_commands`). The month's model spend is not kept here
 * (usage rows are not in the state contract), so the budget check reports itself unknown. There is no
 * alert channel in the native runtime: the findings are the job's recorded detail and its log line.
 */
import { HOUR, STUCK_COMMAND_MS, check, failingRepos, type AuditCheck } from '../../scheduler/audit-rules.js';
import type { Env } from './env.js';

export type NativeAudit = {
  checks: Record<string, AuditCheck | { known: false }>;
  findings: string[];
};

const column = async (env: Env, sql: string, ...binds: unknown[]): Promise<string[]> =>
  (
    await env.DB.prepare(sql)
      .bind(...binds)
      .all<{ v: string }>()
  ).results.map((r) => String(r.v));

export async function runNativeAudit(env: Env, now: number): Promise<NativeAudit> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const unpublished = await column(
    env,
    `SELECT review_key AS v FROM runs WHERE analysis_status IN ('analysed', 'degraded') AND publish_status = 'failed'
     ORDER BY updated_at DESC`,
  );
  const pending = await column(
    env,
    `SELECT review_key AS v FROM runs WHERE analysis_status IN ('analysed', 'degraded') AND publish_status = 'pending'
     AND updated_at < ? ORDER BY updated_at`,
    now - HOUR,
  );
  const dead = await column(
    env,
    `SELECT id || ' (' || coalesce(dispatch_reason, 'dead_lettered') || ')' AS v FROM native_deliveries
     WHERE dispatch_outcome = 'dead_lettered' ORDER BY received_at DESC`,
  );
  const stuck = await column(
    env,
    `SELECT id || ' (' || kind || ')' AS v FROM native_commands WHERE status = 'running' AND updated_at < ? ORDER BY updated_at`,
    iso(now - STUCK_COMMAND_MS),
  );
  const notProcessed = await column(
    env,
    `SELECT id AS v FROM native_deliveries WHERE outcome = 'enqueued' AND dispatch_outcome IS NULL AND received_at < ?
     ORDER BY received_at LIMIT 1000`,
    iso(now - HOUR),
  );
  const recent = (
    await env.DB.prepare(
      `SELECT repo, status FROM runs WHERE created_at >= ? AND status IN ('completed', 'failed')
       ORDER BY created_at DESC LIMIT 10000`,
    )
      .bind(now - 24 * HOUR)
      .all<{ repo: string; status: string }>()
  ).results;
  const failing = failingRepos(recent);
  const checks = {
    analysedNeverPublished: check(unpublished),
    publicationsPending: check(pending),
    deadLetters: check(dead),
    commandsStuck: check(stuck),
    deliveriesNotProcessed: check(notProcessed),
    reviewsFailing: check(failing),
    budget: { known: false as const },
  };
  const findings = Object.entries(checks)
    .filter(([, c]) => 'count' in c && c.count > 0)
    .map(([name, c]) => `${name}: ${(c as AuditCheck).count}`);
  return { checks, findings };
}
