import { z } from 'zod';
import type { Store } from '../store/index.js';
import { defineOperation, READ } from './operation.js';

export const MAX_FAILURE_REASONS = 100;

/**
 * The analytics projection: queue lanes by status with the oldest waiting job's age, deliveries, runs and
 * commands by status, the most frequent failure reasons (at most 100), read from indexed columns, and what
 * reviewers did with Verdict's line comments, overall (`feedback`) and per repository (`repositories`).
 */
export async function analytics(store: Store, now: number) {
  const lanes = new Map<string, Record<string, number>>();
  for (const { queue, status, count } of await store.jobs.stats()) {
    const lane = lanes.get(queue) ?? { waiting: 0, running: 0, done: 0, dead: 0 };
    lane[status] = count;
    lanes.set(queue, lane);
  }
  const oldestByQueue = await store.reads.oldestWaitingRunAt();
  const failureReasons = await store.reads.failureReasons(MAX_FAILURE_REASONS);
  return {
    generatedAt: new Date(now).toISOString(),
    queue: {
      lanes: [...lanes.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([queue, counts]) => ({
          queue,
          ...counts,
          oldestWaitingAgeMs: oldestByQueue.has(queue) ? Math.max(0, now - oldestByQueue.get(queue)!) : null,
        })),
    },
    deliveries: await store.reads.countByStatus('deliveries'),
    runs: await store.reads.countByStatus('runs'),
    commands: await store.reads.countByStatus('operator_commands'),
    failureReasons: failureReasons.slice(0, MAX_FAILURE_REASONS).map((f) => ({
      ...f,
      reason: f.reason.length > 500 ? `${f.reason.slice(0, 500)}…` : f.reason,
    })),
    scheduler: await schedulerProjection(store),
    // Open SCM alerts by severity (GET /scm lists them; DELETE /scm/alerts/:id dismisses one).
    alerts: { open: await store.alerts.openCounts() },
    ...(await feedbackProjection(store)),
  };
}

/** What reviewers did with Verdict's line comments (NAMES.md "Memory": analytics `feedback`). */
export type FeedbackFigures = {
  /** Line comments Verdict posted on GitHub (shadow mode posts none). */
  posted: number;
  /** Findings the code then fixed: an accepted `resolved` disposition, or lines changed and thread resolved. */
  addressed: number;
  /** Findings dismissed: a 👎, `@verdict ignore`, or a thread resolved with its lines unchanged. */
  dismissed: number;
  /** 👍 reactions. */
  up: number;
  /** 👎 reactions. */
  down: number;
  /** addressed / posted, from 0 to 1; 0 when nothing was posted. */
  addressedRate: number;
};

function figures(c: Omit<FeedbackFigures, 'addressedRate'>): FeedbackFigures {
  const { posted, addressed, dismissed, up, down } = c;
  return { posted, addressed, dismissed, up, down, addressedRate: posted > 0 ? addressed / posted : 0 };
}

/**
 * Feedback overall and per repository (the most line comments first, then by name). A finding counts
 * once as addressed and once as dismissed however many events say so; 👍 and 👎 count reactions.
 */
export async function feedbackProjection(store: Store) {
  const rows = await store.feedback.totalsByRepo();
  const total = { posted: 0, addressed: 0, dismissed: 0, up: 0, down: 0 };
  for (const r of rows) for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += r[k];
  return {
    feedback: figures(total),
    repositories: rows
      .sort((a, b) => b.posted - a.posted || a.repo.localeCompare(b.repo))
      .map((r) => ({ repo: r.repo, feedback: figures(r) })),
  };
}

/**
 * Scheduled jobs with their heartbeats, and the watchdog's last messages (review-engine 6.4): `watchdog`
 * is null until the watchdog has run.
 */
async function schedulerProjection(store: Store) {
  const records = await store.scheduler.list();
  const watchdog = records.find((r) => r.name === 'watchdog');
  const artifact = watchdog?.artifact as { generatedAt?: unknown; messages?: unknown } | null | undefined;
  return {
    jobs: records.map((r) => ({
      name: r.name,
      expression: r.expression,
      lastStartedAt: r.lastStartedAt,
      lastFinishedAt: r.lastFinishedAt,
      lastStatus: r.lastStatus,
      lastError: r.lastError,
      runs: r.runs,
    })),
    watchdog: artifact
      ? {
          generatedAt: typeof artifact.generatedAt === 'string' ? artifact.generatedAt : null,
          messages: Array.isArray(artifact.messages) ? artifact.messages.map(String) : [],
        }
      : null,
  };
}

/** The analytics projection: the operator read token only (operator-api 5.2 rule 2). */
export const analyticsOperations = {
  analytics: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { analytics: await analytics(ctx.store, ctx.now()) };
    },
  }),
};
