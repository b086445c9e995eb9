import type { Knex } from 'knex';
import { z } from 'zod';
import type { Logger } from 'pino';
import { guard, type AccessRule, type ServiceTokens } from '../http/auth.js';
import { readJsonBody } from '../http/json.js';
import { parseLimit } from '../http/query.js';
import { sendJson, type Router } from '../http/router.js';
import type { Store } from '../store/index.js';

const DELIVERY_STATUSES = ['queued', 'ignored', 'processed', 'failed'] as const;
export const MAX_FAILURE_REASONS = 100;

/** Operator read token; API keys with `read` only where operator-api 5.2 rule 2 lets them. */
const READ: AccessRule = { classes: ['operatorRead'] };
const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
const ADMIN: AccessRule = { classes: ['operatorAdmin'] };
const REPO_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters');
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

type Count = { key: string; count: number };

async function countBy(knex: Knex, table: string, column: string): Promise<Count[]> {
  const rows: Array<Record<string, unknown>> = await knex(table)
    .select(column)
    .count({ n: '*' })
    .groupBy(column);
  return rows.map((r) => ({ key: String(r[column]), count: Number(r.n) }));
}

export type FailureReason = { source: 'queue' | 'review' | 'webhook'; reason: string; count: number };

/**
 * The analytics projection: queue lanes by status with the oldest waiting job's age, deliveries, runs and
 * commands by status, and the most frequent failure reasons (at most 100), read from indexed columns.
 */
export async function analytics(store: Store, now: number) {
  const knex = store.db.knex;
  const lanes = new Map<string, Record<string, number>>();
  for (const { queue, status, count } of await store.jobs.stats()) {
    const lane = lanes.get(queue) ?? { waiting: 0, running: 0, done: 0, dead: 0 };
    lane[status] = count;
    lanes.set(queue, lane);
  }
  const oldest: Array<Record<string, unknown>> = await knex('jobs')
    .where('status', 'waiting')
    .select('queue')
    .min({ runAt: 'run_at' })
    .groupBy('queue');
  const oldestByQueue = new Map(oldest.map((r) => [String(r.queue), Number(r.runAt)]));
  const failureReasons: FailureReason[] = [];
  const grouped = async (
    source: FailureReason['source'],
    table: string,
    column: string,
    where: Record<string, string>,
  ) => {
    const rows: Array<Record<string, unknown>> = await knex(table)
      .where(where)
      .whereNotNull(column)
      .select(column)
      .count({ n: '*' })
      .groupBy(column)
      .orderBy('n', 'desc')
      .limit(MAX_FAILURE_REASONS);
    for (const r of rows) failureReasons.push({ source, reason: String(r[column]), count: Number(r.n) });
  };
  await grouped('queue', 'jobs', 'dead_reason', { status: 'dead' });
  await grouped('review', 'runs', 'error', { status: 'failed' });
  await grouped('webhook', 'deliveries', 'error', { status: 'failed' });
  failureReasons.sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  const byKey = (rows: Count[]) => Object.fromEntries(rows.map((r) => [r.key, r.count]));
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
    deliveries: byKey(await countBy(knex, 'deliveries', 'status')),
    runs: byKey(await countBy(knex, 'runs', 'status')),
    commands: byKey(await countBy(knex, 'operator_commands', 'status')),
    failureReasons: failureReasons.slice(0, MAX_FAILURE_REASONS).map((f) => ({
      ...f,
      reason: f.reason.length > 500 ? `${f.reason.slice(0, 500)}…` : f.reason,
    })),
  };
}

/** Read routes of operator-api 4.1 that exist so far: repositories, webhook history, analytics. */
export function registerReadRoutes(
  router: Router,
  deps: { store: Store; tokens: ServiceTokens; log: Logger; now: () => number },
): void {
  const { store } = deps;
  const auth = { tokens: deps.tokens, apiKeys: store.apiKeys };

  router.add('GET', '/operator/api/repos', async (req, res) => {
    if (!(await guard(req, res, auth, READ_OR_KEY))) return;
    sendJson(res, 200, { ok: true, repos: await store.repositories.list() });
  });

  router.add('PATCH', '/operator/api/repos/:repo', async (req, res, params) => {
    const who = await guard(req, res, auth, ADMIN);
    if (!who) return;
    const fullName = params.repo!;
    if (!REPO_PATTERN.test(fullName)) {
      req.resume();
      return sendJson(res, 400, {
        ok: false,
        error: 'invalid_request',
        message: 'Invalid repository: use one URL-encoded owner%2Fname segment',
      });
    }
    const body = await readJsonBody(req, res, repoConfigPatch, 64 * 1024);
    if (!body.ok) return;
    const { reason, ...patch } = body.value;
    const repo = await store.repositories.configure(fullName, patch, {
      actor: who.actor,
      reason: reason ?? null,
    });
    if (!repo)
      return sendJson(res, 404, { ok: false, error: 'not_found', message: `No repository ${fullName}` });
    sendJson(res, 200, { ok: true, repo });
  });

  router.add('GET', '/operator/api/webhooks', async (req, res, _params, url) => {
    if (!(await guard(req, res, auth, READ))) return;
    const status = url.searchParams.get('status');
    if (status !== null && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
      return sendJson(res, 400, {
        ok: false,
        error: 'invalid_request',
        message: `Invalid parameter status: one of ${DELIVERY_STATUSES.join(', ')}`,
      });
    }
    const deliveries = await store.deliveries.list({
      status: status ?? undefined,
      limit: parseLimit(url.searchParams.get('limit')),
    });
    sendJson(res, 200, { ok: true, deliveries });
  });

  router.add('GET', '/operator/api/webhooks/:deliveryId', async (req, res, params) => {
    if (!(await guard(req, res, auth, READ))) return;
    const delivery = await store.deliveries.get(params.deliveryId!);
    if (!delivery) {
      return sendJson(res, 404, { ok: false, error: 'not_found', message: 'No such webhook delivery' });
    }
    sendJson(res, 200, { ok: true, delivery });
  });

  router.add('GET', '/operator/api/analytics', async (req, res) => {
    if (!(await guard(req, res, auth, READ))) return;
    sendJson(res, 200, { ok: true, analytics: await analytics(store, deps.now()) });
  });
}
