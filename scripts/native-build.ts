/**
 * Bundles the native edge worker for workerd (dist/native/worker.mjs); `nodejs_compat` serves node:*.
 * The state tables the worker keeps in D1 for `state.internal` are the Node store's own: the migrations
 * run on an in-memory SQLite database and their DDL, columns and seeded rows (for the tables of
 * NATIVE_STATE_TABLES) are compiled into the bundle as `__VERDICT_STATE_SCHEMA__`, so there is no second
 * copy of the schema to keep in step.
 */
import { build } from 'esbuild';
import type { WorkerOptions } from 'miniflare';
import { fileURLToPath } from 'node:url';
import { randomId, systemClock } from '../src/clock.js';
import type { StateSchema } from '../src/native/worker/state-schema.js';
import { NATIVE_STATE_TABLES } from '../src/native/protocol.js';
import { openStore } from '../src/store/index.js';

export const WORKER_BUNDLE = fileURLToPath(new URL('../dist/native/worker.mjs', import.meta.url));

/** The DDL (idempotent), columns and seeded rows of the state tables, read off the migrated store. */
export async function stateSchema(): Promise<StateSchema> {
  const store = await openStore(
    { client: 'sqlite', filename: ':memory:' },
    { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
  );
  try {
    const knex = store.db.knex;
    const names = NATIVE_STATE_TABLES.map((t) => t.table);
    const objects = (await knex('sqlite_master')
      .whereIn('tbl_name', names)
      .whereNotNull('sql')
      .orderByRaw("type = 'table' desc")
      .select('sql')) as Array<{ sql: string }>;
    const ddl = objects.map(({ sql }) =>
      sql.replace(
        /^CREATE (UNIQUE )?(TABLE|INDEX) /i,
        (_m, u, kind) => `CREATE ${u ?? ''}${kind} IF NOT EXISTS `,
      ),
    );
    const columns: StateSchema['columns'] = {};
    const seeds: StateSchema['seeds'] = {};
    for (const name of names) {
      const info = (await knex.raw(`PRAGMA table_info(${JSON.stringify(name)})`)) as Array<{ name: string }>;
      columns[name] = info.map((c) => c.name);
      const rows = (await knex(name).select('*')) as Array<Record<string, unknown>>;
      if (rows.length > 0) seeds[name] = rows;
    }
    return { ddl, columns, seeds };
  } finally {
    await store.close();
  }
}

/** The review queue of wrangler.jsonc. */
export const REVIEW_QUEUE_NAME = 'verdict-reviews';
/** The consumer settings of review-engine 8 (wrangler.jsonc's `queues.consumers`). */
export const QUEUE_CONSUMER = { maxBatchSize: 1, maxBatchTimeout: 5, maxRetries: 8 };

/**
 * The edge worker as Miniflare runs it (native:dev, the tests, bench:native): the bundle and the bindings
 * of wrangler.jsonc (KV, R2, D1, the queue producer, the lease Durable Object); each caller adds the rest.
 */
export function nativeWorkerOptions(scriptPath: string) {
  return {
    name: 'verdict',
    modules: true,
    scriptPath,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: ['nodejs_compat'],
    kvNamespaces: ['DELIVERIES'],
    r2Buckets: ['PAYLOADS'],
    d1Databases: ['DB'],
    queueProducers: { REVIEW_QUEUE: { queueName: REVIEW_QUEUE_NAME } },
    durableObjects: { LEASES: 'DispatchLease' },
  } satisfies WorkerOptions;
}

export async function buildWorker(outfile = WORKER_BUNDLE): Promise<string> {
  await build({
    entryPoints: [fileURLToPath(new URL('../src/native/worker/index.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'import'],
    mainFields: ['module', 'main'],
    external: ['node:*', 'cloudflare:*'],
    define: { __VERDICT_STATE_SCHEMA__: JSON.stringify(await stateSchema()) },
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await buildWorker());
}
