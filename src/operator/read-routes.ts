import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import type { Router } from '../http/router.js';
import type { Store } from '../store/index.js';
import { TRACE_STATUSES } from '../store/traces.js';
import {
  defineOperation,
  describeInput,
  limitParam,
  notFound,
  positiveIntParam,
  REPO_PATTERN,
  restOperation,
  searchParam,
  text,
  type OperatorDeps,
} from './operation.js';

const DELIVERY_STATUSES = ['queued', 'ignored', 'processed', 'failed'] as const;
export const MAX_FAILURE_REASONS = 100;

/** Operator read token; API keys with `read` only where operator-api 5.2 rule 2 lets them. */
const READ: AccessRule = { classes: ['operatorRead'] };
const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
const ADMIN: AccessRule = { classes: ['operatorAdmin'] };
const branchList = z.array(text(255).min(1)).max(100);

/** The repository configuration PATCH body (operator-api 2.8): unknown fields at any level are refused. */
export const repoConfigPatch = z
  .strictObject({
    enabled: z.boolean().optional(),
    branches: z.strictObject({ include: branchList.optional(), exclude: branchList.optional() }).optional(),
    validation: z
      .strictObject({
        provider: z.enum(['local', 'executor_a', 'executor_b', 'shadow']).optional(),
        codeChangesOnly: z.boolean().optional(),
      })
      .optional(),
    model: z
      .strictObject({
        provider: text(100).min(1).optional(),
        model: text(200).min(1).optional(),
        fallbackProvider: text(100).min(1).optional(),
        fallbackModel: text(200).min(1).optional(),
        reasoningEffort: text(50).min(1).optional(),
      })
      .optional(),
    alerts: z.strictObject({ telegram: z.boolean().optional(), target: text(300).optional() }).optional(),
    reason: text(1000).optional(),
  })
  .refine((b) => Object.keys(b).some((k) => k !== 'reason'), {
    message: 'give at least one configuration field',
    path: ['enabled'],
  });

export type { FailureReason } from '../store/operator-reads.js';

/**
 * The analytics projection: queue lanes by status with the oldest waiting job's age, deliveries, runs and
 * commands by status, and the most frequent failure reasons (at most 100), read from indexed columns.
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

const nonEmpty = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);

export const readOperations = {
  repos: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { repos: await ctx.store.repositories.list() };
    },
  }),

  /** `PATCH /operator/api/repos/:encodedRepo` (operator-api 2.8), audited with the change. */
  configureRepo: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({
      repo: z.string().regex(REPO_PATTERN, 'use one URL-encoded owner%2Fname segment'),
      body: repoConfigPatch,
    }),
    describe: (error) =>
      error.issues[0]?.path[0] === 'repo'
        ? 'Invalid repository: use one URL-encoded owner%2Fname segment'
        : describeInput(error, 'field', 'body'),
    async run(ctx, { repo: fullName, body }) {
      const { reason, ...patch } = body;
      const repo = await ctx.store.repositories.configure(fullName, patch, {
        actor: ctx.principal.actor,
        reason: reason ?? null,
      });
      if (!repo) throw notFound(`No repository ${fullName}`);
      return { repo };
    },
  }),

  webhooks: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({
      status: z.enum(DELIVERY_STATUSES, { error: `one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
      limit: limitParam,
    }),
    async run(ctx, input) {
      return {
        deliveries: await ctx.store.deliveries.list({ status: input.status, limit: input.limit }),
      };
    },
  }),

  webhook: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({ deliveryId: z.string().min(1).max(1000) }),
    async run(ctx, { deliveryId }) {
      const delivery = await ctx.store.deliveries.get(deliveryId);
      if (!delivery) throw notFound('No such webhook delivery');
      return { delivery };
    },
  }),

  analytics: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { analytics: await analytics(ctx.store, ctx.now()) };
    },
  }),

  /** Trace summaries (operator-api 2.6, 4.1): filters on indexed columns; `pr` is `prNumber`'s alias. */
  traces: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z
      .object({
        repo: z.string().regex(REPO_PATTERN, 'must be owner/name').optional(),
        prNumber: positiveIntParam.optional(),
        pr: positiveIntParam.optional(),
        reviewKey: searchParam.optional(),
        runId: searchParam.optional(),
        status: z.enum(TRACE_STATUSES, { error: `one of ${TRACE_STATUSES.join(', ')}` }).optional(),
        limit: limitParam,
      })
      .refine((q) => q.pr === undefined || q.prNumber === undefined || q.pr === q.prNumber, {
        message: 'pr and prNumber disagree',
        path: ['pr'],
      }),
    async run(ctx, input) {
      const traces = await ctx.store.traces.list({
        repo: input.repo,
        prNumber: input.prNumber ?? input.pr,
        reviewKey: nonEmpty(input.reviewKey),
        runId: nonEmpty(input.runId),
        status: input.status,
        limit: input.limit,
      });
      return { traces };
    },
  }),

  trace: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ traceId: z.string().min(1).max(1000) }),
    async run(ctx, { traceId }) {
      const found = await ctx.store.traces.get(traceId);
      if (!found) throw notFound('No such trace');
      return { trace: found.trace, spans: found.spans };
    },
  }),
};

/** Read routes of operator-api 4.1: repositories, webhook history, analytics, traces. */
export function registerReadRoutes(router: Router, deps: OperatorDeps): void {
  const ops = readOperations;
  restOperation(router, 'GET', '/operator/api/repos', ops.repos, deps, { from: 'query' });
  restOperation(router, 'PATCH', '/operator/api/repos/:repo', ops.configureRepo, deps, {
    from: 'params+body',
    limit: 64 * 1024,
  });
  restOperation(router, 'GET', '/operator/api/webhooks', ops.webhooks, deps, { from: 'query' });
  restOperation(router, 'GET', '/operator/api/webhooks/:deliveryId', ops.webhook, deps, { from: 'params' });
  restOperation(router, 'GET', '/operator/api/analytics', ops.analytics, deps, { from: 'query' });
  restOperation(router, 'GET', '/operator/api/traces', ops.traces, deps, { from: 'query' });
  restOperation(router, 'GET', '/operator/api/traces/:traceId', ops.trace, deps, { from: 'params' });
}
