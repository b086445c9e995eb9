/**
 * `nightly-audit` in the native runtime (review-engine 6.4; NAMES.md "Never missing a pull request"): the
 * Node audit's checks over what this runtime keeps, with its rules (src/scheduler/audit-rules.ts). The
 * runs are the Node store's own table in D1; dead letters, unprocessed deliveries and stuck commands are
 * the worker's (`native_deliveries`, `native_commands`). The month's model spend is read from the model
 * spans the containers flushed (as the Node usage report reads them) against the stored policy's budget.
 * Each finding is also raised as an alert (alerts.ts), as the Node audit raises it.
 */
import { sanitizeStoredPolicy } from '../../policy/merge.js';
import { DEFAULT_REVIEW_POLICY } from '../../policy/policy.schema.js';
import {
  HOUR,
  STUCK_COMMAND_MS,
  budgetCheck,
  check,
  failingRepos,
  monthStart,
  auditAlerts,
  type AuditCheck,
  type AuditFindings,
  type BudgetCheck,
} from '../../scheduler/audit-rules.js';
import { raiseNativeAlert } from './alerts.js';
import type { Env } from './env.js';

export type NativeAudit = {
  checks: AuditFindings;
  findings: string[];
};

/** The policy's monthly budget (the default policy's without a stored one). */
async function budgetUsd(env: Env): Promise<number | null> {
  const row = await env.DB.prepare("SELECT document FROM review_policies WHERE workspace = 'default'").first<{
    document: string;
  }>();
  let stored: unknown = null;
  try {
    stored = row ? JSON.parse(row.document) : null;
  } catch {
    stored = null;
  }
  const policy = stored ? sanitizeStoredPolicy(stored).policy : DEFAULT_REVIEW_POLICY;
  return policy.monthlyModelBudgetUsd;
}

/**
 * The month's model spend as the Node usage report counts it: the model spans since the month began, complete
 * only when every span reported its tokens and cost and every analysed run of the month has a model span.
 */
async function monthBudget(env: Env, now: number): Promise<BudgetCheck> {
  const from = monthStart(now);
  const spans = await env.DB.prepare(
    `SELECT count(*) AS calls, coalesce(sum(cost_usd), 0) AS cost, count(cost_usd) AS cost_known,
       count(input_tokens) AS input_known, count(output_tokens) AS output_known
     FROM spans WHERE kind = 'model' AND started_at >= ? AND started_at < ?`,
  )
    .bind(from, now + 1)
    .first<{ calls: number; cost: number; cost_known: number; input_known: number; output_known: number }>();
  const missing = await env.DB.prepare(
    `SELECT count(*) AS n FROM runs r WHERE r.analysis_status = 'analysed' AND r.updated_at >= ? AND r.updated_at < ?
     AND NOT EXISTS (SELECT 1 FROM traces t JOIN spans s ON s.trace_id = t.id WHERE t.run_id = r.id AND s.kind = 'model')`,
  )
    .bind(from, now + 1)
    .first<{ n: number }>();
  const calls = Number(spans?.calls ?? 0);
  const complete =
    Number(missing?.n ?? 0) === 0 &&
    [spans?.cost_known, spans?.input_known, spans?.output_known].every((k) => Number(k ?? 0) === calls);
  const spent =
    Number(spans?.cost_known ?? 0) === calls ? Math.round(Number(spans?.cost ?? 0) * 1e6) / 1e6 : null;
  return budgetCheck(await budgetUsd(env), complete ? spent : null, complete);
}

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
  const checks: AuditFindings = {
    analysedNeverPublished: check(unpublished),
    publicationsPending: check(pending),
    deadLetters: check(dead),
    commandsStuck: check(stuck),
    deliveriesNotProcessed: check(notProcessed),
    reviewsFailing: check(failing),
    budget: await monthBudget(env, now),
  };
  const findings = Object.entries(checks)
    .filter(([, c]) => 'count' in c && c.count > 0)
    .map(([name, c]) => `${name}: ${(c as AuditCheck).count}`);
  if (checks.budget.reached)
    findings.push(`budget: ${checks.budget.spentUsd} USD spent of ${checks.budget.budgetUsd} this month`);
  for (const alert of auditAlerts(checks, failing)) await raiseNativeAlert(env, alert, now);
  return { checks, findings };
}
