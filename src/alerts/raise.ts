import type { Logger } from 'pino';
import type { SchedulerConfig } from '../config/index.js';
import type { AlertInput, RaisedAlert } from '../store/alerts.js';
import { alertDeliveries, deliverAlert } from './deliveries.js';
import type { Store } from '../store/index.js';

export type AlertDeps = {
  store: Store;
  log: Logger;
  config: Pick<SchedulerConfig, 'alertUrl' | 'telegramBotToken' | 'telegramApiUrl'>;
  /** Delivery (tests give their own); default `fetch`. */
  fetch?: typeof fetch;
};

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
  const repoAlerts =
    deps.config.telegramBotToken && input.repo
      ? (await deps.store.repositories.get(input.repo))?.config?.alerts
      : undefined;
  const deliveries = alertDeliveries(raised.alert, repoAlerts, deps.config);
  const failures = await deliverAlert(deliveries, deps.fetch ?? fetch);
  if (deliveries.length > 0 || raised.created) {
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
