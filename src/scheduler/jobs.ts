import type { Logger } from 'pino';
import { alertUrlDelivery, deliverAlert } from '../alerts/deliveries.js';
import type { Clock } from '../clock.js';
import type { SchedulerConfig } from '../config/index.js';
import type { CommandBridge } from '../bridge/command-bridge.js';
import type { Store } from '../store/index.js';
import type { ScheduledJob, Scheduler } from './scheduler.js';
import { NIGHTLY_AUDIT_EXPRESSION, runNightlyAudit } from './audit.js';
import { STUCK_COMMAND_MS } from './audit-rules.js';
import { runCatchUp, type CatchUpGitHub } from './catch-up.js';
import { watchdogMessages } from './watchdog.js';

/** The cron expressions (UTC) of the scheduled jobs this runtime runs (review-engine 6.4). */
export const SCHEDULE = {
  commandBridge: '* * * * *',
  watchdog: '3-59/15 * * * *',
  maintenance: '17 * * * *',
  prAgentLoop: '2-59/15 * * * *',
  nightlyAudit: NIGHTLY_AUDIT_EXPRESSION,
} as const;

export const JOB_NAMES = {
  commandBridge: 'command-bridge',
  watchdog: 'watchdog',
  maintenance: 'maintenance',
  prAgentLoop: 'pr-agent-loop',
  nightlyAudit: 'nightly-audit',
} as const;

export type JobDeps = {
  store: Store;
  bridge: CommandBridge;
  config: SchedulerConfig;
  log: Logger;
  clock: Clock;
  productName: string;
  /** The scheduler the watchdog watches (its jobs and start time). */
  scheduler: () => Scheduler;
  /** Alert delivery (tests give their own); default `fetch`. */
  fetch?: typeof fetch;
  /** GitHub for `pr-agent-loop` (null or absent without App credentials: its pass says so). */
  catchUp?: CatchUpGitHub | null;
};

/**
 * The command bridge every minute, the watchdog and `pr-agent-loop` every 15 minutes, maintenance every
 * hour.
 */
export function scheduledJobs(deps: JobDeps): ScheduledJob[] {
  return [
    {
      name: JOB_NAMES.commandBridge,
      expression: SCHEDULE.commandBridge,
      run: async () => {
        const pass = await deps.bridge.runOnce();
        return pass.dryRun
          ? { authority: pass.authority, dryRun: true, planned: pass.planned.map((p) => p.id) }
          : {
              authority: pass.authority,
              dryRun: false,
              executed: pass.executed.length,
              succeeded: pass.executed.filter((e) => e.status === 'succeeded').length,
              failed: pass.executed.filter((e) => e.status === 'failed').length,
              skipped: pass.skipped.length,
            };
      },
    },
    {
      name: JOB_NAMES.watchdog,
      expression: SCHEDULE.watchdog,
      run: () => runWatchdog(deps),
    },
    {
      name: JOB_NAMES.prAgentLoop,
      expression: SCHEDULE.prAgentLoop,
      run: () =>
        runCatchUp({
          store: deps.store,
          github: deps.catchUp ?? null,
          clock: deps.clock,
          log: deps.log,
          alerts: { store: deps.store, log: deps.log, config: deps.config, fetch: deps.fetch },
        }),
    },
    {
      name: JOB_NAMES.nightlyAudit,
      expression: SCHEDULE.nightlyAudit,
      run: ({ manual }) =>
        runNightlyAudit(
          {
            store: deps.store,
            clock: deps.clock,
            log: deps.log,
            alerts: { store: deps.store, log: deps.log, config: deps.config, fetch: deps.fetch },
          },
          { manual },
        ),
    },
    {
      name: JOB_NAMES.maintenance,
      expression: SCHEDULE.maintenance,
      run: async () => {
        const markersExpired = await deps.store.deliveries.expireMarkers();
        let deliveriesDeleted = 0;
        const days = deps.config.deliveryRetentionDays;
        if (days > 0) {
          const before = deps.clock.now() - days * 86_400_000;
          for (let n = -1; n !== 0;) {
            n = await deps.store.deliveries.pruneFinished(before, 1000);
            deliveriesDeleted += n;
          }
        }
        // Dashboard sessions past their expiry (each is refused when used; this clears the rest).
        const sessionsExpired = await deps.store.uiSessions.deleteExpired();
        if (markersExpired + deliveriesDeleted + sessionsExpired > 0) {
          deps.log.info(
            { event: 'maintenance', markersExpired, deliveriesDeleted, sessionsExpired, retentionDays: days },
            `maintenance: ${markersExpired} expired dedupe markers, ${deliveriesDeleted} old deliveries and ${sessionsExpired} expired dashboard sessions removed`,
          );
        }
        return { markersExpired, deliveriesDeleted, sessionsExpired, retentionDays: days };
      },
    },
  ];
}

/**
 * The watchdog: checks every other job's heartbeat and artifact, logs each message, and delivers them to
 * `VERDICT_WATCHDOG_ALERT_URL` only when one is configured (alert delivery is off by default). Its own
 * artifact holds the messages, which analytics shows.
 */
export async function runWatchdog(deps: JobDeps): Promise<Record<string, unknown>> {
  const scheduler = deps.scheduler();
  const now = deps.clock.now();
  const messages = watchdogMessages({
    jobs: scheduler.jobs,
    records: await deps.store.scheduler.list(),
    now,
    schedulerStartedAt: scheduler.startedAt ?? now,
    self: JOB_NAMES.watchdog,
  });
  // A command a bridge claimed and never finished (the bridge died): the operator decides what to do.
  for (const command of await deps.store.commands.runningSince(now - STUCK_COMMAND_MS)) {
    messages.push(
      `command ${command.id} (${command.kind}) has been running since ${new Date(command.startedAt ?? now).toISOString()}, claimed by ${command.claimedBy ?? 'an unknown bridge'}`,
    );
  }
  for (const message of messages) deps.log.warn({ event: 'watchdog', message }, `watchdog: ${message}`);
  let alert: 'disabled' | 'none' | 'delivered' | 'failed' = 'disabled';
  if (deps.config.alertUrl) {
    alert = 'none';
    if (messages.length > 0) {
      const body = {
        source: `${deps.productName} watchdog`,
        generatedAt: new Date(now).toISOString(),
        messages,
      };
      const url = deps.config.alertUrl;
      const [failure] = await deliverAlert([alertUrlDelivery(url, body)], deps.fetch);
      alert = failure ? 'failed' : 'delivered';
      if (failure) {
        deps.log.error({ event: 'watchdog-alert-failed', error: failure }, `watchdog alert: ${failure}`);
      }
    }
  }
  return { messages, alert };
}
