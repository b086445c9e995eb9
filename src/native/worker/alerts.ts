/**
 * Alerts of the native runtime (NAMES.md "Never missing a pull request"): what the Node runtime raises with
 * `raiseAlert`, from the same rules (audit-rules.ts, redelivery.ts), kept in D1 (`native_alerts`) and
 * delivered to `VERDICT_WATCHDOG_ALERT_URL` as the Node runtime delivers them (`{ source: 'verdict alerts',
 * alert }`). A repeated condition counts on its alert (`count`, `last_seen_at`) instead of adding one; an
 * alert is delivered when it is new or its last delivery failed, and to Telegram for a repository whose
 * stored configuration asks for it (`VERDICT_TELEGRAM_BOT_TOKEN`, `VERDICT_TELEGRAM_API_URL`), by the Node
 * runtime's rules (src/alerts/deliveries.ts). There is no operator API here to list or dismiss them: the
 * URL (and the D1 table) is where an operator reads them.
 */
import { alertDeliveries, deliverAlert } from '../../alerts/deliveries.js';
import type { AlertInput } from '../../store/alerts.js';
import type { Env } from './env.js';

type Row = {
  id: number;
  kind: string;
  repo: string | null;
  severity: string;
  message: string;
  first_seen_at: string;
  last_seen_at: string;
  count: number;
  delivery_error: string | null;
};

/** Delivers an alert where the Node runtime would (src/alerts/deliveries.ts); null when it went through. */
async function deliver(env: Env, row: Row): Promise<string | null> {
  const alert = {
    id: row.id,
    kind: row.kind,
    repo: row.repo,
    severity: row.severity,
    message: row.message,
    firstSeenAt: Date.parse(row.first_seen_at),
    lastSeenAt: Date.parse(row.last_seen_at),
    count: row.count,
    dismissedAt: null,
  };
  const token = env.VERDICT_TELEGRAM_BOT_TOKEN ?? null;
  const config = await (token && row.repo
    ? env.DB.prepare('SELECT config FROM repositories WHERE full_name = ? COLLATE NOCASE')
        .bind(row.repo)
        .first<{ config: string | null }>()
    : null);
  let repoAlerts: unknown;
  try {
    repoAlerts = config?.config ? (JSON.parse(config.config) as { alerts?: unknown }).alerts : undefined;
  } catch {
    repoAlerts = undefined;
  }
  const deliveries = alertDeliveries(alert, repoAlerts, {
    alertUrl: env.VERDICT_WATCHDOG_ALERT_URL ?? null,
    telegramBotToken: token,
    telegramApiUrl: env.VERDICT_TELEGRAM_API_URL ?? 'https://api.telegram.org',
  });
  const failures = await deliverAlert(deliveries);
  return failures.length > 0 ? failures.join('; ') : null;
}

/** Records an occurrence of the alert and delivers it when it is new or its last delivery failed. */
export async function raiseNativeAlert(env: Env, input: AlertInput, now: number): Promise<void> {
  const at = new Date(now).toISOString();
  const row = await env.DB.prepare(
    `INSERT INTO native_alerts (kind, scope, alert_key, repo, severity, message, first_seen_at, last_seen_at, count)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
     ON CONFLICT (kind, scope, alert_key) DO UPDATE SET count = count + 1, last_seen_at = excluded.last_seen_at,
       severity = excluded.severity, message = excluded.message
     RETURNING id, kind, repo, severity, message, first_seen_at, last_seen_at, count, delivery_error`,
  )
    .bind(input.kind, input.repo ?? '', input.key ?? '', input.repo, input.severity, input.message, at, at)
    .first<Row>();
  console.log(JSON.stringify({ event: 'alert', kind: input.kind, repo: input.repo, count: row?.count }));
  if (!row || (row.count > 1 && row.delivery_error === null)) return;
  const error = await deliver(env, row);
  await env.DB.prepare('UPDATE native_alerts SET delivery_error = ?, delivered_at = ? WHERE id = ?')
    .bind(error, error ? null : at, row.id)
    .run();
  if (error) console.log(JSON.stringify({ event: 'alert-delivery-failed', alertId: row.id, error }));
}
