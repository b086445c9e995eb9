/**
 * Where an alert is delivered (NAMES.md "Never missing a pull request"), for both runtimes: every alert to
 * `VERDICT_WATCHDOG_ALERT_URL` (`{ source: 'verdict alerts', alert }`), and a repository's alert to
 * Telegram when its configuration sets `alerts.telegram` and `alerts.target` (a chat id) and a bot token
 * is configured. Nothing here is Node-only: the native worker bundles it.
 */

const TIMEOUT_MS = 10_000;

/** What the deliveries read of an alert (the Node store's `Alert`, the native runtime's D1 row). */
export type AlertFacts = {
  kind: string;
  repo: string | null;
  severity: string;
  message: string;
  count: number;
};

export type AlertDeliveryConfig = {
  alertUrl: string | null;
  telegramBotToken: string | null;
  telegramApiUrl: string;
};

/** One POST of an alert: to whom, where, what, and whether the answer means delivered. */
export type AlertDelivery = {
  what: string;
  url: string;
  body: unknown;
  delivered: (res: Response) => Promise<boolean>;
};

/** The Telegram message of an alert: one line of what, then where and how often. */
export function telegramText(alert: AlertFacts): string {
  return [
    `Verdict ${alert.severity}: ${alert.message}`,
    `${alert.kind}${alert.repo ? ` · ${alert.repo}` : ''}${alert.count > 1 ? ` · seen ${alert.count} times` : ''}`,
  ].join('\n');
}

/** The Telegram chat of a repository's `alerts` configuration, or null when it asks for none. */
export function telegramTarget(repoAlerts: unknown): string | null {
  const alerts = repoAlerts as { telegram?: unknown; target?: unknown } | null | undefined;
  if (alerts?.telegram !== true || typeof alerts.target !== 'string') return null;
  return alerts.target.trim() || null;
}

/** A POST of `body` to the alert URL (`VERDICT_WATCHDOG_ALERT_URL`): delivered when it answers 2xx. */
export const alertUrlDelivery = (url: string, body: unknown): AlertDelivery => ({
  what: 'the alert URL',
  url,
  body,
  delivered: async (r) => {
    await r.arrayBuffer().catch(() => undefined);
    return r.ok;
  },
});

/** The deliveries of `alert`; `repoAlerts` is its repository's `alerts` configuration (if any). */
export function alertDeliveries(
  alert: AlertFacts,
  repoAlerts: unknown,
  config: AlertDeliveryConfig,
): AlertDelivery[] {
  const out: AlertDelivery[] = [];
  if (config.alertUrl) out.push(alertUrlDelivery(config.alertUrl, { source: 'verdict alerts', alert }));
  const chat = alert.repo ? telegramTarget(repoAlerts) : null;
  if (config.telegramBotToken && chat) {
    out.push({
      what: 'Telegram',
      url: `${config.telegramApiUrl.replace(/\/$/, '')}/bot${config.telegramBotToken}/sendMessage`,
      body: { chat_id: chat, text: telegramText(alert) },
      delivered: async (r) =>
        r.ok && ((await r.json().catch(() => null)) as { ok?: unknown } | null)?.ok === true,
    });
  }
  return out;
}

/** Sends the deliveries one after another (10 s each at most); why each failed one did not go through. */
export async function deliverAlert(
  deliveries: AlertDelivery[],
  post: typeof fetch = fetch,
): Promise<string[]> {
  const failures: string[] = [];
  for (const d of deliveries) {
    try {
      const res = await post(d.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(d.body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (!(await d.delivered(res))) failures.push(`${d.what} answered ${res.status}`);
    } catch (error) {
      failures.push(`${d.what} failed: ${(error as Error).message}`);
    }
  }
  return failures;
}
