import type { AlertInput } from '../store/alerts.js';

/**
 * The rules of `pr-agent-loop` that both runtimes apply (NAMES.md "Never missing a pull request"): which
 * of the App's webhook deliveries never reached Verdict. No store and no GitHub client here, so the
 * native edge worker bundles this module as the Node loop (catch-up.ts) imports it.
 */

/** How far back the loop looks at the App's webhook deliveries (NAMES.md: the last 72 hours). */
export const REDELIVERY_WINDOW_MS = 72 * 3_600_000;
/** Most redeliveries one pass asks GitHub for. */
export const MAX_REDELIVERIES_PER_PASS = 50;
/** The trigger of a review the loop queues for a head that has no run. */
export const CATCH_UP_TRIGGER = 'catch_up';

/** One attempt to deliver a webhook, as `GET /app/hook/deliveries` lists it. */
export type HookDelivery = {
  /** The attempt's id (what `POST /app/hook/deliveries/{id}/attempts` takes). */
  id: number;
  /** The delivery's GUID: the `x-github-delivery` header, shared by every attempt of one delivery. */
  guid: string;
  /** When the attempt was made (ms since the epoch). */
  deliveredAt: number;
  /** The HTTP status our endpoint answered (0 or null: no answer). */
  statusCode: number | null;
  event: string;
  action: string | null;
};

/** An attempt as `GET /app/hook/deliveries` answers it. */
export function hookDelivery(d: {
  id: number;
  guid: string;
  delivered_at: string;
  status_code?: number | null;
  event: string;
  action?: string | null;
}): HookDelivery {
  return {
    id: d.id,
    guid: d.guid,
    deliveredAt: Date.parse(d.delivered_at),
    statusCode: d.status_code ?? null,
    event: d.event,
    action: d.action ?? null,
  };
}

/**
 * The deliveries of the window that no attempt delivered (no 2xx), each as its latest attempt (the one a
 * redelivery names), oldest first so that a backlog drains in the order GitHub sent it. Whether the
 * runtime holds one anyway (recorded, or its dedupe marker) is the caller's to check.
 */
export function undelivered(attempts: readonly HookDelivery[], now: number): HookDelivery[] {
  const since = now - REDELIVERY_WINDOW_MS;
  const latest = new Map<string, HookDelivery>();
  const delivered = new Set<string>();
  for (const attempt of attempts) {
    if (attempt.deliveredAt < since) continue;
    if (attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300) {
      delivered.add(attempt.guid);
    }
    const seen = latest.get(attempt.guid);
    if (
      !seen ||
      attempt.deliveredAt > seen.deliveredAt ||
      (attempt.deliveredAt === seen.deliveredAt && attempt.id > seen.id)
    ) {
      latest.set(attempt.guid, attempt);
    }
  }
  return [...latest.values()]
    .filter((a) => !delivered.has(a.guid))
    .sort((a, b) => a.deliveredAt - b.deliveredAt || a.id - b.id);
}

/**
 * The alerts of a pass: `webhook_deliveries_failed` when deliveries never reached Verdict, and
 * `redelivery_failed` when the pass could not list or redeliver them (its errors name which).
 */
export function catchUpAlerts(
  failed: number,
  pass: { redelivered: readonly string[]; deferred: number; errors: readonly string[] },
): AlertInput[] {
  const alerts: AlertInput[] = [];
  if (failed > 0) {
    const waiting = pass.deferred > 0 ? `, ${pass.deferred} wait for the next pass` : '';
    alerts.push({
      kind: 'webhook_deliveries_failed',
      repo: null,
      severity: 'warning',
      message: `${failed} webhook deliveries of the last 72 hours never reached Verdict; ${pass.redelivered.length} were redelivered${waiting}`,
    });
  }
  const refused = pass.errors.filter(
    (e) => e.startsWith('redelivery of ') || e.startsWith('listing the App'),
  );
  if (refused.length > 0) {
    const more = refused.length > 1 ? ` (and ${refused.length - 1} more)` : '';
    alerts.push({
      kind: 'redelivery_failed',
      repo: null,
      severity: 'critical',
      message: `pr-agent-loop could not recover missed webhooks: ${refused[0]}${more}`,
    });
  }
  return alerts;
}
