/**
 * Cron triggers of the native runtime (review-engine 6.4, 3.5). Which job a cron runs, the London gate
 * of `nightly-audit` (the Node runtime's `londonTime`), a heartbeat row per run in D1, the watchdog's
 * missing-heartbeat message, the command bridge's authority, pr-agent-loop's catch-up (catch-up.ts) and
 * the audit's checks (audit.ts); the bridge's executors are commands.ts.
 */
import { alertUrlDelivery, deliverAlert } from '../../alerts/deliveries.js';
import { londonTime } from '../../scheduler/london.js';
import { runNativeAudit } from './audit.js';
import { runNativeCatchUp } from './catch-up.js';
import { failureCode } from '../../bridge/command-rules.js';
import { executeCommand } from './commands.js';
import type { Env } from './env.js';
import { ensureSchema } from './schema.js';

export const CRON_JOBS: Record<string, string> = {
  '2-59/15 * * * *': 'pr-agent-loop',
  '3-59/15 * * * *': 'watchdog',
  '* * * * *': 'command-bridge',
  '30 22 * * *': 'nightly-audit',
  '30 23 * * *': 'nightly-audit',
};

/** A heartbeat older than this (3 bridge minutes) means the crons stopped. */
const HEARTBEAT_MS = 3 * 60_000;

export type JobResult = {
  job: string;
  status: 'ran' | 'gated' | 'unknown_cron';
  detail: Record<string, unknown>;
};

async function heartbeat(env: Env, job: string, at: number, status: string, detail: unknown) {
  await env.DB.prepare('INSERT INTO native_job_runs (job, ran_at, status, detail) VALUES (?, ?, ?, ?)')
    .bind(job, new Date(at).toISOString(), status, JSON.stringify(detail))
    .run();
}

/**
 * The bridge: `shadow` plans queued commands (dryRun, nothing claimed); `live` claims each one (a command
 * another bridge moved first is skipped, not executed) and runs it: succeeded with its result, or failed
 * with the executor's code and message (commands.ts).
 */
async function commandBridge(env: Env, at: number): Promise<Record<string, unknown>> {
  const authority = env.VERDICT_BRIDGE_AUTHORITY === 'live' ? 'live' : 'shadow';
  const { results } = await env.DB.prepare(
    "SELECT id, kind, payload FROM native_commands WHERE status = 'queued' ORDER BY id",
  ).all<{ id: string; kind: string; payload: string | null }>();
  if (authority === 'shadow') return { authority, dryRun: true, planned: results.map((c) => c.id) };
  const claimed: string[] = [];
  const skipped: string[] = [];
  const when = () => new Date(at).toISOString();
  for (const c of results) {
    const claim = await env.DB.prepare(
      "UPDATE native_commands SET status = 'running', updated_at = ? WHERE id = ? AND status = 'queued' RETURNING id",
    )
      .bind(when(), c.id)
      .first();
    if (!claim) {
      skipped.push(c.id);
      continue;
    }
    claimed.push(c.id);
    let payload: Record<string, unknown> = {};
    try {
      payload = c.payload ? (JSON.parse(c.payload) as Record<string, unknown>) : {};
    } catch {
      payload = {};
    }
    try {
      const result = await executeCommand(env, { id: c.id, kind: c.kind, payload }, at);
      await env.DB.prepare(
        "UPDATE native_commands SET status = 'succeeded', result = ?, updated_at = ? WHERE id = ?",
      )
        .bind(JSON.stringify(result), when(), c.id)
        .run();
    } catch (err) {
      const code = failureCode(err);
      await env.DB.prepare(
        "UPDATE native_commands SET status = 'failed', error = ?, updated_at = ? WHERE id = ?",
      )
        .bind(`${code}: ${(err as Error).message}`, when(), c.id)
        .run();
    }
  }
  return { authority, dryRun: false, claimed, skipped };
}

async function watchdog(env: Env, at: number): Promise<Record<string, unknown>> {
  const last = await env.DB.prepare(
    "SELECT MAX(ran_at) AS at FROM native_job_runs WHERE job = 'command-bridge'",
  ).first<{ at: string | null }>();
  const messages: string[] = [];
  if (!last?.at || at - Date.parse(last.at) > HEARTBEAT_MS) messages.push('no cron heartbeat');
  // As the Node watchdog: its messages go to VERDICT_WATCHDOG_ALERT_URL when one is set.
  const url = env.VERDICT_WATCHDOG_ALERT_URL;
  if (!url) return { alerts: 'disabled', messages };
  if (messages.length === 0) return { alerts: 'none', messages };
  const body = { source: 'Verdict watchdog', generatedAt: new Date(at).toISOString(), messages };
  const failures = await deliverAlert([alertUrlDelivery(url, body)]);
  return { alerts: failures.length > 0 ? 'failed' : 'delivered', messages };
}

export async function runScheduled(cron: string, scheduledTime: number, env: Env): Promise<JobResult> {
  await ensureSchema(env.DB);
  const job = CRON_JOBS[cron];
  if (!job) return { job: cron, status: 'unknown_cron', detail: {} };
  if (job === 'nightly-audit' && londonTime(scheduledTime) !== '23:30') {
    return { job, status: 'gated', detail: { london: londonTime(scheduledTime) } };
  }
  let detail: Record<string, unknown> = {};
  if (job === 'command-bridge') detail = await commandBridge(env, scheduledTime);
  else if (job === 'watchdog') detail = await watchdog(env, scheduledTime);
  else if (job === 'pr-agent-loop') detail = await runNativeCatchUp(env, scheduledTime);
  else if (job === 'nightly-audit') detail = await runNativeAudit(env, scheduledTime);
  await heartbeat(env, job, scheduledTime, 'ran', detail);
  console.log(JSON.stringify({ event: 'scheduled', job, ...detail }));
  return { job, status: 'ran', detail };
}
