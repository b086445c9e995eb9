import type { Logger } from 'pino';
import type { SchedulerConfig } from '../config/index.js';
import type { AlertInput, RaisedAlert } from '../store/alerts.js';
import type { Store } from '../store/index.js';

export type AlertDeps = {
  store: Store;
  log: Logger;
  config: Pick<SchedulerConfig, 'alertUrl' | 'telegramBotToken' | 'telegramApiUrl'>;
  /** Delivery (tests give their own); default `fetch`. */
  fetch?: typeof fetch;
};

const TIMEOUT_MS = 10_000;

/** The Telegram message of an alert: one line of what, then where and how often. */
export function telegramText(raised: RaisedAlert): string {
  const { alert } = raised;
  return [
    `Verdict ${alert.severity}: ${alert.message}`,
    `${alert.kind}${alert.repo ? ` · ${alert.repo}` : ''}${alert.count > 1 ? ` · seen ${alert.count} times` : ''}`,
  ].join('\n');
}

/**
 * Raises an alert (NAMES.md "Never missing a pull request"): stored, or counted on its open alert; then,
 * when it is new or its last delivery failed, delivered to `VERDICT_WATCHDOG_ALERT_URL` (every alert) and
 * to Telegram for a repository whose configuration sets `alerts.telegram` and `alerts.target`. A delivery
 * that fails is logged and kept pending, so the next occurrence delivers it again; it never throws.
 */
export async function raiseAlert(deps: AlertDeps, input: AlertInput): Promise<RaisedAlert> {
  const raised = await deps.store.alerts.raise(input);
  deps.log.warn(
    {
      event: 'alert',
      kind: input.kind,
      repo: input.repo,
      severity: input.severity,
      count: raised.alert.count,
    },
    `alert: ${input.message}`,
  );
  if (!raised.deliver) return raised;
  const post = deps.fetch ?? fetch;
  const failures: string[] = [];
  let attempted = false;
  const send = async (what: string, url: string, body: unknown, ok: (res: Response) => Promise<boolean>) => {
    attempted = true;
    try {
      const res = await post(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (!(await ok(res))) failures.push(`${what} answered ${res.status}`);
    } catch (error) {
      failures.push(`${what} failed: ${(error as Error).message}`);
    }
  };
  if (deps.config.alertUrl) {
    await send(
      'the alert URL',
      deps.config.alertUrl,
      { source: 'verdict alerts', alert: raised.alert },
      async (r) => {
        await r.arrayBuffer().catch(() => undefined);
        return r.ok;
      },
    );
  }
  const token = deps.config.telegramBotToken;
  if (token && input.repo) {
    const alerts = (await deps.store.repositories.get(input.repo))?.config?.alerts as
      { telegram?: unknown; target?: unknown } | undefined;
    if (alerts?.telegram === true && typeof alerts.target === 'string' && alerts.target.trim() !== '') {
      await send(
        'Telegram',
        `${deps.config.telegramApiUrl}/bot${token}/sendMessage`,
        { chat_id: alerts.target.trim(), text: telegramText(raised) },
        async (r) => r.ok && ((await r.json().catch(() => null)) as { ok?: unknown } | null)?.ok === true,
      );
    }
  }
  if (attempted || raised.created) {
    const error = failures.length > 0 ? failures.join('; ') : null;
    await deps.store.alerts.markDelivery(raised.alert.id, error);
    if (error) {
      deps.log.error(
        { event: 'alert-delivery-failed', alertId: raised.alert.id, error },
        `alert not delivered: ${error}`,
      );
    }
  }
  return raised;
}

/** `raiseAlert` for a caller whose own work must go on whatever happens to the alert (logged). */
export async function raiseAlertQuietly(deps: AlertDeps, input: AlertInput): Promise<void> {
  try {
    await raiseAlert(deps, input);
  } catch (error) {
    deps.log.error(
      { event: 'alert-failed', kind: input.kind, err: error },
      `alert could not be recorded: ${input.message}`,
    );
  }
}
