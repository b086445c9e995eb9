import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { guard, type AccessRule, type ServiceTokens } from '../http/auth.js';
import { parseLimit } from '../http/query.js';
import { sendJson, type Router } from '../http/router.js';
import type { Store } from '../store/index.js';

const DELIVERY_STATUSES = ['queued', 'ignored', 'processed', 'failed'] as const;
export const MAX_FAILURE_REASONS = 100;

/** Operator read token; API keys with `read` only where operator-api 5.2 rule 2 lets them. */
const READ: AccessRule = { classes: ['operatorRead'] };
const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };

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
