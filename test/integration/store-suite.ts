import { migrationSource, migrationNames } from '../../src/store/migrations/index.js';
import pino from 'pino';
import { pullRequestDetail, pullRequestItems, snapshotOperations } from '../../src/services/snapshot.js';
import { analytics } from '../../src/services/analytics.js';
import type { Clock } from '../../src/clock.js';
import { randomId } from '../../src/clock.js';
import { createRequire } from 'node:module';
import { DeliveryRecorder, type IncomingDelivery, type RecordResult } from '../../src/store/deliveries.js';
import {
  migrationState,
  SQLITE_PRAGMAS,
  sqliteScriptRunner,
  type SqliteDatabase,
} from '../../src/store/db.js';
import type { EnqueueInput, EnqueueMode } from '../../src/queue/types.js';
import { openStore } from '../../src/store/index.js';
import { localContext, OperatorError } from '../../src/services/operation.js';
import type { StampedCache } from '../../src/services/read-cache.js';
import { findRun } from '../../src/services/runs.js';
import { failInsertsWhere } from '../helpers/faults.js';
import { migrateDownTo, openTestStore, type TestDialect, type TestStore } from '../helpers/store.js';

// better-sqlite3 (no type declarations here), as the intake thread opens it.
const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (
  file: string,
) => SqliteDatabase & { pragma(sql: string): unknown; close(): void };

function delivery(id: string, overrides: Partial<IncomingDelivery> = {}): IncomingDelivery {
  return {
    id,
    event: 'pull_request',
    action: 'opened',
    raw: JSON.stringify({ action: 'opened', marker: id }),
    bytes: 42,
    repo: 'octo/demo',
    prNumber: 1,
    installationId: 7,
    outcome: 'enqueued',
    job: { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: id } },
    ...overrides,
  };
}

/** A job of the `reviews` queue with a key. */
function reviewJob(key: string, payload: unknown, mode?: EnqueueMode): EnqueueInput {
  return { queue: 'reviews', kind: 'review', key, payload, mode };
}

/** The store's behaviour, run once per dialect. */
export function storeSuite(dialect: TestDialect): void {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  describe('migrations', () => {
    test('step down and up one at a time', async () => {
      const knex = t.store.db.knex;
      for (let i = 0; i < migrationNames.length; i++) await knex.migrate.down({ migrationSource });
      expect(await knex.schema.hasTable('deliveries')).toBe(false);
      for (let i = 0; i < migrationNames.length; i++) await knex.migrate.up({ migrationSource });
      expect(await knex.schema.hasTable('deliveries')).toBe(true);
      expect(await knex.schema.hasTable('jobs')).toBe(true);
    });
  });

  test('migrationState: applied, pending and unknown migrations, read without writing', async () => {
    const knex = t.store.db.knex;
    expect(await migrationState(knex)).toEqual({ applied: migrationNames, pending: [], unknown: [] });
    await knex.migrate.down({ migrationSource });
    const last = migrationNames[migrationNames.length - 1]!;
    expect(await migrationState(knex)).toEqual({
      applied: migrationNames.slice(0, -1),
      pending: [last],
      unknown: [],
    });
    await knex.migrate.latest({ migrationSource });
    await knex('knex_migrations').insert({
      name: '999-from-the-future',
      batch: 99,
      migration_time: new Date(),
    });
    expect((await migrationState(knex)).unknown).toEqual(['999-from-the-future']);
    await knex('knex_migrations').where({ name: '999-from-the-future' }).del();
  });

  describe('migration 016 (fewer B-trees per delivery)', () => {
    /** The definitions of the jobs and markers tables' indexes and of the markers table. */
    async function schema(): Promise<Record<string, string>> {
      const knex = t.store.db.knex;
      const rows: Array<{ name: string; sql: string }> =
        dialect === 'pg'
          ? (
              await knex.raw(
                `SELECT indexname AS name, indexdef AS sql FROM pg_indexes
                 WHERE tablename IN ('jobs', 'dedupe_markers') AND schemaname = current_schema()`,
              )
            ).rows
          : await knex.raw(
              `SELECT name, sql FROM sqlite_master WHERE tbl_name IN ('jobs', 'dedupe_markers') AND sql IS NOT NULL`,
            );
      return Object.fromEntries(rows.map((r) => [r.name, String(r.sql)]));
    }

    test('indexes job_key only where set, drops jobs_lease_idx, and keeps markers and jobs through down and up', async () => {
      await t.store.deliveries.recordBatch([delivery('kept')]);
      await t.store.jobs.enqueue(reviewJob('octo/demo#1:latest-waiting', {}));
      const after = await schema();
      expect(after.jobs_job_key_index).toMatch(/WHERE \(?job_key IS NOT NULL\)?/);
      expect(after.jobs_waiting_key_uq).toMatch(/WHERE .*status.* AND .*job_key IS NOT NULL/);
      expect(after.jobs_lease_idx).toBeUndefined();
      if (dialect === 'sqlite') expect(after.dedupe_markers).toMatch(/WITHOUT ROWID/);

      const knex = t.store.db.knex;
      await migrateDownTo(knex, '016-lean-delivery-writes');
      await knex.migrate.down({ migrationSource });
      const before = await schema();
      expect(before.jobs_job_key_index).not.toMatch(/WHERE/);
      expect(before.jobs_waiting_key_uq).not.toMatch(/job_key IS NOT NULL/);
      expect(before.jobs_lease_idx).toBeDefined();
      if (dialect === 'sqlite') expect(before.dedupe_markers).not.toMatch(/WITHOUT ROWID/);
      expect(await t.store.deliveries.markerExists('kept')).toBe(true);

      await knex.migrate.latest({ migrationSource });
      expect(await schema()).toEqual(after);
      expect(await t.store.deliveries.markerExists('kept')).toBe(true);
      expect(await t.store.jobs.findByKey('octo/demo#1:latest-waiting')).toHaveLength(1);
      // The marker still dedupes, and the unique waiting key still holds.
      expect((await t.store.deliveries.recordBatch([delivery('kept')]))[0]!.status).toBe('duplicate');
      const again = await t.store.jobs.enqueue(reviewJob('octo/demo#1:latest-waiting', { second: true }));
      expect(again).toMatchObject({ outcome: 'replace_waiting' });
      expect(await t.store.jobs.findByKey('octo/demo#1:latest-waiting')).toHaveLength(1);
      // Two waiting jobs with one key are refused by the database itself; keyless ones never conflict.
      const [waiting] = await t.store.jobs.findByKey('octo/demo#1:latest-waiting');
      const { id: _id, ...row } = await knex('jobs').where({ id: waiting!.id }).first();
      // Driver errors are matched by what they say: better-sqlite3's errors belong to the Jest realm that
      // loaded the native module first, so they are not `Error`s of this one.
      await expect(knex('jobs').insert(row)).rejects.toMatchObject({
        message: expect.stringMatching(/unique|UNIQUE/),
      });
      await knex('jobs').insert([
        { ...row, job_key: null },
        { ...row, job_key: null },
      ]);
    });
  });

  describe('installed means reviewed (021, upsertInstalled)', () => {
    const audits = async (target: string) =>
      (await t.store.db.knex('audit_events').where({ target, action: 'repos.configure' })).length;

    test('an installation enables a repository without configuration, never one an operator configured', async () => {
      const repos = t.store.repositories;
      const enable = { actor: 'github:installation/7', reason: 'installed' };
      expect(await repos.upsertInstalled('octo/new', 7, enable)).toEqual({ enabled: true });
      expect((await repos.get('octo/new'))!.config).toEqual({ enabled: true });
      expect(await audits('octo/new')).toBe(1);
      // Again (a redelivered event): nothing changes, no second audit entry.
      expect(await repos.upsertInstalled('octo/new', 7, enable)).toEqual({ enabled: false });
      expect(await audits('octo/new')).toBe(1);
      // An operator's configuration, even a disabling one, is kept.
      await repos.configure('octo/off', { enabled: false }, { actor: 'admin', reason: null });
      expect(await repos.upsertInstalled('octo/off', 7, enable)).toEqual({ enabled: false });
      expect((await repos.get('octo/off'))!).toMatchObject({ config: { enabled: false }, installed: true });
      // Without `enable` (other installation actions) only the installation is recorded.
      await repos.upsertInstalled('octo/plain', 7);
      expect((await repos.get('octo/plain'))!).toMatchObject({ config: null, installationId: 7 });
    });

    test('the migration enables repositories recorded as installed, and nothing else', async () => {
      const knex = t.store.db.knex;
      await migrateDownTo(knex, '021-installed-enabled');
      await knex.migrate.down({ migrationSource });
      const row = (full: string, over: Record<string, unknown>) => ({
        full_name: full,
        owner: full.split('/')[0],
        name: full.split('/')[1],
        installed: true,
        installation_id: 7,
        config: null,
        created_at: 1,
        updated_at: 1,
        ...over,
      });
      await knex('repositories').insert([
        row('octo/installed', {}),
        row('octo/pr-only', { installation_id: null }),
        row('octo/configured', { config: JSON.stringify({ enabled: false }) }),
        row('octo/removed', { installed: false }),
      ]);
      await knex.migrate.latest({ migrationSource });
      const config = async (name: string) => (await t.store.repositories.get(name))!.config;
      expect(await config('octo/installed')).toEqual({ enabled: true });
      expect(await config('octo/pr-only')).toBeNull();
      expect(await config('octo/configured')).toEqual({ enabled: false });
      expect(await config('octo/removed')).toBeNull();
      expect(await audits('octo/installed')).toBe(1);
      expect(await audits('octo/pr-only')).toBe(0);
    });
  });

  describe('executor costs (020)', () => {
    test('records runs, sums them per executor as numbers, and refuses amounts that would corrupt the total', async () => {
      const costs = t.store.executorCosts;
      expect(await costs.totalUsd('e2b')).toBe(0);
      const first = await costs.record({
        executor: 'e2b',
        runId: 'run-1',
        seconds: 12.5,
        costUsd: 0.000378125,
      });
      t.clock.advance(1000);
      await costs.record({ executor: 'e2b', seconds: 100, costUsd: 0.003025 });
      await costs.record({ executor: 'other', seconds: 1, costUsd: 7 });
      const total = await costs.totalUsd('e2b');
      expect(typeof total).toBe('number');
      expect(total).toBeCloseTo(0.003403125, 12);
      expect(await costs.totalUsd('other')).toBe(7);
      const listed = await costs.list('e2b');
      expect(listed.map((c) => c.runId)).toEqual([null, 'run-1']);
      expect(listed[1]).toEqual(first);
      expect(typeof listed[1]!.seconds).toBe('number');
      await expect(costs.record({ executor: 'e2b', seconds: 1, costUsd: -1 })).rejects.toThrow(/costUsd/);
      await expect(costs.record({ executor: 'e2b', seconds: Number.NaN, costUsd: 1 })).rejects.toThrow(
        /seconds/,
      );
      expect(await costs.totalUsd('e2b')).toBeCloseTo(0.003403125, 12);
      const knex = t.store.db.knex;
      await migrateDownTo(knex, '020-executor-costs');
      await knex.migrate.down({ migrationSource });
      expect(await knex.schema.hasTable('executor_costs')).toBe(false);
      await knex.migrate.latest({ migrationSource });
      expect(await costs.totalUsd('e2b')).toBe(0);
    });
  });

  /**
   * The group commit's tests, through the store (knex) and, on SQLite, through the intake thread's
   * recorder: its own better-sqlite3 connection and prepared statements (src/ingress/intake-writer.ts).
   */
  const recorders: Array<[string, () => (items: IncomingDelivery[]) => Promise<RecordResult[]>]> = [
    ['the store', () => (items) => t.store.deliveries.recordBatch(items)],
  ];
  let connection: { close(): void } | null = null;
  if (dialect === 'sqlite') {
    recorders.push([
      "the intake thread's recorder",
      () => {
        const config = t.config as { filename: string };
        const db = new Sqlite(config.filename);
        for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
        connection = db;
        const recorder = new DeliveryRecorder(
          'sqlite',
          t.clock as Clock,
          604800 * 1000,
          sqliteScriptRunner(db),
        );
        return (items) => recorder.recordBatch(items);
      },
    ]);
  }
  afterEach(() => {
    connection?.close();
    connection = null;
  });

  describe.each(recorders)('deliveries (group commit) through %s', (_name, recorderFor) => {
    let record: (items: IncomingDelivery[]) => Promise<RecordResult[]>;
    beforeEach(() => {
      record = recorderFor();
    });

    test('records deliveries, markers and jobs in one batch', async () => {
      const results = await record([
        delivery('d1'),
        delivery('d2', { job: null, outcome: 'unsupported_action' }),
      ]);
      expect(results).toEqual([
        { status: 'recorded', outcome: 'enqueued', enqueued: true },
        { status: 'recorded', outcome: 'unsupported_action', enqueued: false },
      ]);
      expect((await t.store.deliveries.get('d1'))?.status).toBe('queued');
      expect((await t.store.deliveries.get('d2'))?.status).toBe('ignored');
      expect(await t.store.deliveries.payload('d1')).toContain('"marker":"d1"');
      expect(await t.store.deliveries.markerExists('d2')).toBe(true);
      const jobs = await t.store.jobs.list({ queue: 'webhooks' });
      expect(jobs.map((j) => j.payload)).toEqual([{ deliveryId: 'd1' }]);
    });

    test('a repeated delivery id is a duplicate, within a batch and across batches', async () => {
      const first = await record([delivery('d1'), delivery('d1')]);
      expect(first.map((r) => r.status)).toEqual(['recorded', 'duplicate']);
      const second = await record([delivery('d1')]);
      expect(second[0]!.status).toBe('duplicate');
      expect(await t.store.jobs.list({ queue: 'webhooks' })).toHaveLength(1);
    });

    test('a batch larger than one statement (250 deliveries, some repeated) is written whole', async () => {
      await record([delivery('big-7')]);
      const items = Array.from({ length: 250 }, (_, i) =>
        delivery(`big-${i}`, i % 2 ? { job: null, outcome: 'ping' } : {}),
      );
      const results = await record([...items, delivery('big-3')]);
      expect(results.filter((r) => r.status === 'recorded')).toHaveLength(249);
      expect(results[7]).toEqual({ status: 'duplicate' });
      expect(results[250]).toEqual({ status: 'duplicate' });
      const count = async (table: string) => Number((await t.store.db.knex(table).count({ n: '*' }))[0]!.n);
      expect(await count('deliveries')).toBe(250);
      expect(await count('dedupe_markers')).toBe(250);
      // One job per recorded delivery that asks for work (the 125 even ones) and big-7's from before.
      expect(await t.store.jobs.list({ queue: 'webhooks', limit: 1000 })).toHaveLength(126);
      expect(await t.store.deliveries.payload('big-249')).toContain('"marker":"big-249"');
    });

    test('an expired marker lets the same delivery in again', async () => {
      await record([delivery('d1')]);
      t.clock.advance(604800 * 1000 + 1);
      const again = await record([delivery('d1')]);
      expect(again[0]!.status).toBe('recorded');
      expect((await t.store.deliveries.get('d1'))?.attempts).toBe(2);
      expect(await t.store.deliveries.expireMarkers()).toBe(0);
      t.clock.advance(604800 * 1000 + 1);
      expect(await t.store.deliveries.expireMarkers()).toBe(1);
    });

    test('a failing enqueue fails only its own delivery, leaves nothing half-written and frees its marker', async () => {
      const restore = await failInsertsWhere(t.store, 'jobs', 'payload', 'poison');
      const results = await record([
        delivery('ok-1'),
        delivery('bad', {
          job: { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: 'bad', poison: true } },
        }),
        delivery('ok-2', { job: null, outcome: 'ping' }),
      ]);
      expect(results[0]).toEqual({ status: 'recorded', outcome: 'enqueued', enqueued: true });
      expect(results[1]).toMatchObject({ status: 'failed', code: 'enqueue_failed' });
      expect(results[2]).toMatchObject({ status: 'recorded', enqueued: false });
      expect(await t.store.deliveries.get('bad')).toBeNull();
      expect(await t.store.deliveries.markerExists('bad')).toBe(false);
      await restore();
      const retry = await record([delivery('bad')]);
      expect(retry[0]!.status).toBe('recorded');
      expect((await t.store.jobs.list({ queue: 'webhooks' })).length).toBe(2);
    });

    test('batches in flight together on one store (as the ingress keeps them): a delivery in two is recorded once', async () => {
      const restore = await failInsertsWhere(t.store, 'jobs', 'payload', 'poison');
      try {
        // The first batch fails whole and retries each delivery alone, around the second batch.
        const [a, b] = await Promise.all([
          record([
            delivery('both'),
            delivery('bad', {
              job: { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: 'bad', poison: true } },
            }),
          ]),
          record([delivery('both'), delivery('other')]),
        ]);
        expect([a[0]!.status, b[0]!.status].sort()).toEqual(['duplicate', 'recorded']);
        expect(a[1]).toMatchObject({ status: 'failed', code: 'enqueue_failed' });
        expect(b[1]).toEqual({ status: 'recorded', outcome: 'enqueued', enqueued: true });
        expect(await t.store.deliveries.markerExists('bad')).toBe(false);
        expect((await t.store.deliveries.get('both'))?.attempts).toBe(1);
        const jobs = await t.store.jobs.list({ queue: 'webhooks' });
        expect(jobs.map((j) => (j.payload as { deliveryId: string }).deliveryId).sort()).toEqual([
          'both',
          'other',
        ]);
      } finally {
        await restore();
      }
    });

    // Two ingress processes share PostgreSQL. (On SQLite, one process owns the file: a second store in the
    // same process would wait on the busy timeout with the event loop held, since better-sqlite3 runs
    // statements on the main thread; other processes' transactions take the write lock first, as tested in
    // store.test.ts.)
    const pgOnly = dialect === 'pg' ? test : test.skip;
    pgOnly(
      'two processes recording the same deliveries at once: each is recorded once, the other copy is a duplicate',
      async () => {
        // A second store on the same database, as a second ingress process has.
        const second = await openStore(t.config, {
          clock: t.clock as Clock,
          ids: randomId,
          dedupeTtlSeconds: 604800,
        });
        try {
          for (let round = 0; round < 20; round++) {
            const id = `same-${round}`;
            const [a, b] = await Promise.all([
              t.store.deliveries.recordBatch([delivery(id)]),
              second.deliveries.recordBatch([delivery(id)]),
            ]);
            expect([a[0]!.status, b[0]!.status].sort()).toEqual(['duplicate', 'recorded']);
            // The duplicate wrote nothing: the delivery row is the first copy's, not written again.
            expect((await t.store.deliveries.get(id))?.attempts).toBe(1);
          }
          expect(await t.store.jobs.list({ queue: 'webhooks', limit: 100 })).toHaveLength(20);
        } finally {
          await second.close();
        }
      },
    );

    test("a body given as bytes is stored as its text, only the view's bytes", async () => {
      const text = JSON.stringify({ action: 'opened', title: 'ünïcödé ✓ '.repeat(100) });
      // A view into a larger buffer, as a socket read gives it.
      const whole = Buffer.concat([Buffer.from('before'), Buffer.from(text), Buffer.from('after')]);
      const body = whole.subarray(6, 6 + Buffer.byteLength(text));
      const [result] = await record([delivery('bytes-1', { raw: body, bytes: body.length })]);
      expect(result).toEqual({ status: 'recorded', outcome: 'enqueued', enqueued: true });
      expect(await t.store.deliveries.payload('bytes-1')).toBe(text);
      expect((await t.store.deliveries.get('bytes-1'))?.payloadBytes).toBe(Buffer.byteLength(text));
    });

    test('a failing record of an ignored delivery answers delivery_record_failed', async () => {
      const restore = await failInsertsWhere(t.store, 'deliveries', 'repo', 'poison');
      const [result] = await record([delivery('x', { job: null, outcome: 'ping', repo: 'poison/repo' })]);
      expect(result).toMatchObject({ status: 'failed', code: 'delivery_record_failed' });
      expect(await t.store.deliveries.markerExists('x')).toBe(false);
      await restore();
    });
  });

  describe('pull requests, runs and comment commands', () => {
    test('upsert keeps fields that are not given', async () => {
      await t.store.pullRequests.upsert({
        repo: 'o/r',
        number: 5,
        headSha: 'a'.repeat(40),
        title: 'T',
        labels: ['x'],
        draft: true,
      });
      await t.store.pullRequests.upsert({ repo: 'o/r', number: 5, headSha: 'b'.repeat(40) });
      const pr = await t.store.pullRequests.get('o/r', 5);
      expect(pr).toMatchObject({ headSha: 'b'.repeat(40), title: 'T', labels: ['x'], draft: true });
    });

    test('one run per review key', async () => {
      const input = {
        reviewKey: 'o/r#5@abc',
        repo: 'o/r',
        prNumber: 5,
        headSha: 'abc',
        trigger: 'opened',
        installationId: 1,
      };
      const a = await t.store.runs.createOrGet(input);
      const b = await t.store.runs.createOrGet(input);
      expect(a.created).toBe(true);
      expect(b.created).toBe(false);
      expect(b.run.id).toBe(a.run.id);
      expect((await t.store.runs.latestForPr('o/r', 5))?.id).toBe(a.run.id);
    });

    test('a review key whose head is abbreviated to 7 or more characters finds its one run (findRun)', async () => {
      const make = (head: string, variant?: string, pr = 12) =>
        t.store.runs.createOrGet({
          reviewKey: `acme/web#${pr}@${head}${variant ? `:${variant}` : ''}`,
          repo: 'acme/web',
          prNumber: pr,
          headSha: head,
          variant: variant ?? null,
          trigger: 'opened',
          installationId: 1,
        });
      const one = `1a2b3c4d${'0'.repeat(32)}`;
      const twinA = `9f8e7d6c${'1'.repeat(32)}`;
      const twinB = `9f8e7d6c${'2'.repeat(32)}`;
      const { run } = await make(one);
      const { run: rerun } = await make(one, 'rerun');
      await make(twinA);
      await make(twinB);
      await make(one, undefined, 13); // the same head on another pull request
      // Exact keys, and heads abbreviated to 7 or more characters, with or without the variant.
      expect((await findRun(t.store, run.reviewKey)).id).toBe(run.id);
      expect((await findRun(t.store, 'acme/web#12@1a2b3c4')).id).toBe(run.id);
      expect((await findRun(t.store, 'acme/web#12@1A2B3C4D')).id).toBe(run.id);
      expect((await findRun(t.store, 'acme/web#12@1a2b3c4:rerun')).id).toBe(rerun.id);
      // Several runs match: a 409 naming every candidate; 8 characters tell them apart.
      const ambiguous = await findRun(t.store, 'acme/web#12@9f8e7d6').catch((e: unknown) => e);
      expect(ambiguous).toBeInstanceOf(OperatorError);
      expect(ambiguous).toMatchObject({
        status: 409,
        code: 'ambiguous_review_key',
        extra: { candidates: expect.arrayContaining([`acme/web#12@${twinA}`, `acme/web#12@${twinB}`]) },
      });
      expect((ambiguous as Error).message).toContain(`acme/web#12@${twinA}`);
      expect((ambiguous as Error).message).toContain(`acme/web#12@${twinB}`);
      expect((await findRun(t.store, `acme/web#12@${twinB.slice(0, 12)}`)).headSha).toBe(twinB);
      // Under 7 characters: refused, even when only one run would match.
      await expect(findRun(t.store, 'acme/web#12@1a2b3c')).rejects.toMatchObject({
        status: 400,
        code: 'invalid_request',
        message: 'review key acme/web#12@1a2b3c abbreviates the head to 6 characters: give at least 7',
      });
      // No match: another head, a variant that does not exist, another repository.
      for (const key of ['acme/web#12@7777777', 'acme/web#12@1a2b3c4:nope', 'acme/api#12@1a2b3c4']) {
        await expect(findRun(t.store, key)).rejects.toMatchObject({
          status: 404,
          code: 'not_found',
          message: `no run with review key ${key}`,
        });
      }
    });

    test('a comment command is claimed once', async () => {
      const input = {
        repo: 'o/r',
        prNumber: 5,
        commentId: 99,
        verb: 'review',
        author: 'u',
        association: 'OWNER',
        deliveryId: 'd',
      };
      expect(await t.store.commentCommands.claim(input)).toBe(true);
      expect(await t.store.commentCommands.claim(input)).toBe(false);
      expect(await t.store.commentCommands.claimConfigReport('o/r', 5, 'fp', 'm')).toBe(true);
      expect(await t.store.commentCommands.claimConfigReport('o/r', 5, 'fp', 'm')).toBe(false);
    });
  });

  describe('jobs', () => {
    test('replace_waiting replaces the waiting job but never a running one', async () => {
      const jobs = t.store.jobs;
      const a = await jobs.enqueue(reviewJob('k', { v: 1 }, 'replace_waiting'));
      const b = await jobs.enqueue(reviewJob('k', { v: 2 }, 'replace_waiting'));
      expect(a.outcome).toBe('enqueued');
      expect(b).toMatchObject({ outcome: 'replace_waiting', jobId: a.jobId, replacedPayload: { v: 1 } });
      const claimed = await jobs.claim('reviews', 'w1', 60_000);
      expect(claimed?.payload).toEqual({ v: 2 });
      const c = await jobs.enqueue(reviewJob('k', { v: 3 }, 'replace_waiting'));
      expect(c.outcome).toBe('enqueued');
      expect(c.jobId).not.toBe(a.jobId);
      expect((await jobs.get(a.jobId))?.status).toBe('running');
    });

    test('receipts fence renew, ack and fail', async () => {
      const jobs = t.store.jobs;
      const { jobId } = await jobs.enqueue({ queue: 'q', kind: 'k', payload: {} });
      const first = (await jobs.claim('q', 'w1', 1000))!;
      expect(first.id).toBe(jobId);
      t.clock.advance(1001);
      const second = (await jobs.claim('q', 'w2', 1000))!;
      expect(second.id).toBe(jobId);
      expect(second.receipt).not.toBe(first.receipt);
      expect(await jobs.renew(jobId, first.receipt, 1000)).toBeNull();
      expect(await jobs.ack(jobId, first.receipt)).toBe(false);
      expect(await jobs.fail(jobId, first.receipt, 'x')).toBeNull();
      expect(await jobs.ack(jobId, second.receipt)).toBe(true);
      expect((await jobs.get(jobId))?.status).toBe('done');
      expect(await jobs.claim('q', 'w3', 1000)).toBeNull();
    });

    test('a failing job walks its retries to the dead letter', async () => {
      const jobs = t.store.jobs;
      const { jobId } = await jobs.enqueue({ queue: 'q', kind: 'k', payload: {}, maxAttempts: 3 });
      for (let i = 1; i <= 3; i++) {
        const job = (await jobs.claim('q', 'w', 1000))!;
        expect(job.attempts).toBe(i);
        const r = await jobs.fail(jobId, job.receipt, `boom ${i}`);
        if (i < 3) {
          expect(r?.status).toBe('waiting');
          expect(await jobs.claim('q', 'w', 1000)).toBeNull(); // backing off
          t.clock.advance(700_000);
        } else {
          expect(r).toEqual({ status: 'dead', reason: 'max_attempts' });
        }
      }
      expect(await jobs.get(jobId)).toMatchObject({
        status: 'dead',
        deadReason: 'max_attempts',
        lastError: 'boom 3',
      });
    });

    test('an expired lease on the last attempt is reaped to the dead letter', async () => {
      const jobs = t.store.jobs;
      const { jobId } = await jobs.enqueue({ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 });
      await jobs.claim('q', 'w', 1000);
      t.clock.advance(1001);
      expect(await jobs.claim('q', 'w', 1000)).toBeNull();
      expect(await jobs.reapExpired()).toBe(1);
      expect((await jobs.get(jobId))?.deadReason).toBe('max_attempts');
    });

    test('release gives the job back without counting the attempt', async () => {
      const jobs = t.store.jobs;
      await jobs.enqueue({ queue: 'q', kind: 'k', payload: {} });
      const a = (await jobs.claim('q', 'w', 1000))!;
      expect(await jobs.release(a.id, a.receipt)).toBe(true);
      const b = (await jobs.claim('q', 'w', 1000))!;
      expect(b.attempts).toBe(1);
    });
  });

  describe('repository configuration', () => {
    test('configure creates an unseen repository, matches names ignoring case, and keeps config through installation', async () => {
      const repos = t.store.repositories;
      const audit = { actor: 'ops', reason: null };
      const created = await repos.configure('octo/Fresh', { enabled: true }, audit);
      expect(created).toMatchObject({
        created: true,
        repo: {
          fullName: 'octo/Fresh',
          owner: 'octo',
          name: 'Fresh',
          installed: false,
          installationId: null,
          config: { enabled: true },
        },
      });
      const again = await repos.configure('OCTO/fresh', { validation: { provider: 'e2b' } }, audit);
      expect(again).toMatchObject({
        created: false,
        repo: { fullName: 'octo/Fresh', config: { enabled: true, validation: { provider: 'e2b' } } },
      });
      await repos.upsertInstalled('octo/Fresh', 5);
      expect(await repos.list()).toEqual([
        expect.objectContaining({
          fullName: 'octo/Fresh',
          installed: true,
          installationId: 5,
          config: { enabled: true, validation: { provider: 'e2b' } },
        }),
      ]);
      const entries = await t.store.audit.list({ action: 'repos.configure' });
      expect(entries.map((e) => [e.target, e.detail])).toEqual(
        expect.arrayContaining([
          ['octo/Fresh', { patch: { enabled: true }, created: true }],
          ['octo/Fresh', { patch: { validation: { provider: 'e2b' } } }],
        ]),
      );
    });

    test('concurrent configurations of one unseen repository leave one row with both patches', async () => {
      const repos = t.store.repositories;
      const audit = { actor: 'ops', reason: null };
      await Promise.all([
        repos.configure('octo/race', { enabled: true }, audit),
        repos.configure('octo/race', { branches: { include: ['main'] } }, audit),
      ]);
      expect(await repos.list()).toEqual([
        expect.objectContaining({
          fullName: 'octo/race',
          config: { enabled: true, branches: { include: ['main'] } },
        }),
      ]);
    });
  });

  describe('operator commands', () => {
    test('concurrent creations with one id leave exactly one command and one created event', async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          t.store.commands.create({ id: 'same', kind: 'requeue', payload: { i }, actor: `a${i}` }),
        ),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(await t.store.commands.list()).toHaveLength(1);
      expect(await t.store.commands.events('same')).toHaveLength(1);
    });

    test('racing status updates: exactly one moves the command', async () => {
      await t.store.commands.create({ id: 'c', kind: 'requeue', payload: {}, actor: 'x' });
      await t.store.commands.patch('c', { status: 'running' }, 'bridge');
      const results = await Promise.all([
        t.store.commands.patch('c', { status: 'succeeded' }, 'b1'),
        t.store.commands.patch('c', { status: 'failed' }, 'b2'),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect((await t.store.commands.events('c')).filter((e) => e.fromStatus === 'running')).toHaveLength(1);
    });
  });

  test('the analytics projection reads on this dialect', async () => {
    const job = (await t.store.jobs.enqueue({ queue: 'lane', kind: 'k', payload: {}, maxAttempts: 1 })) as {
      jobId: number;
    };
    const claimed = (await t.store.jobs.claim('lane', 'w:1', 1000))!;
    await t.store.jobs.fail(claimed.id, claimed.receipt, 'boom');
    await t.store.jobs.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    const a = await analytics(t.store, t.clock.now() + 5);
    expect(a.queue.lanes).toEqual([
      { queue: 'lane', waiting: 1, running: 0, done: 0, dead: 1, oldestWaitingAgeMs: 5 },
    ]);
    expect(a.failureReasons).toEqual([{ source: 'queue', reason: 'max_attempts', count: 1 }]);
    expect(job.jobId).toBe(claimed.id);
  });

  test('the snapshot pull-request items and PR detail read on this dialect', async () => {
    for (const number of [1, 2]) {
      await t.store.pullRequests.upsert({
        repo: 'acme/api',
        number,
        title: `PR ${number}`,
        headSha: 'a'.repeat(40),
      });
    }
    await t.store.runs.createOrGet({
      reviewKey: `acme/api#2@${'a'.repeat(40)}`,
      repo: 'acme/api',
      prNumber: 2,
      headSha: 'a'.repeat(40),
      trigger: 'opened',
      installationId: 1,
    });
    const page = await pullRequestItems(t.store, { q: 'pr', status: 'queued' });
    expect(page.items.map((i) => [i.number, i.latestRun?.status])).toEqual([[2, 'queued']]);
    expect((await pullRequestItems(t.store, {})).items).toHaveLength(2);
    const detail = await pullRequestDetail(t.store, 'acme/api', 2);
    expect(detail?.runs).toHaveLength(1);
    expect(await pullRequestDetail(t.store, 'acme/api', 3)).toBeNull();
    // The PR-detail cache's stamp moves with each table the detail shows.
    const stamps = [await t.store.reads.pullRequestDetailStamp('acme/api', 2)];
    const moved = async () => {
      const next = await t.store.reads.pullRequestDetailStamp('acme/api', 2);
      expect(stamps).not.toContain(next);
      stamps.push(next);
    };
    t.clock.advance(1);
    await t.store.runs.update(detail!.runs[0]!.id, { status: 'running' });
    await moved();
    await t.store.publications.record({
      runId: detail!.runs[0]!.id,
      repo: 'acme/api',
      prNumber: 2,
      kind: 'review',
      mode: 'shadow',
      status: 'shadowed',
      receipt: null,
      body: null,
      error: null,
    });
    await moved();
    await t.store.commands.create({
      id: 'c-stamp',
      kind: 'requeue',
      payload: {},
      repo: 'acme/api',
      prNumber: 2,
      actor: 't',
    });
    await moved();
    t.clock.advance(1);
    await t.store.pullRequests.upsert({ repo: 'acme/api', number: 2, title: 'renamed' });
    await moved();
    expect(await t.store.reads.pullRequestDetailStamp('acme/api', 2)).toBe(stamps.at(-1));
  });

  describe('PR detail as JSON text (built by SQLite on SQLite)', () => {
    const repo = 'acme/web';
    // The columns a run and its findings share: run-a reviews head aaa…, run-b head bbb…
    const ofRun = (runId: string) => {
      const sha = runId.slice(-1).repeat(40);
      return { review_key: `${repo}#5@${sha}`, repo, pr_number: 5, head_sha: sha };
    };
    const insertRows = async (table: string, rows: Array<Record<string, unknown>>) => {
      for (let i = 0; i < rows.length; i += 100) await t.store.db.knex(table).insert(rows.slice(i, i + 100));
    };
    const run = (id: string, at: number, extra: Record<string, unknown> = {}) => ({
      id,
      ...ofRun(id),
      trigger: 'synchronize',
      status: 'completed',
      analysis_status: 'analysed',
      publish_status: 'published',
      installation_id: 9,
      created_at: at,
      updated_at: at + 1,
      ...extra,
    });
    const finding = (runId: string, i: number, at: number, extra: Record<string, unknown> = {}) => ({
      run_id: runId,
      ...ofRun(runId),
      severity: 'high',
      category: 'correctness',
      path: `src/f${i}.ts`,
      line: i,
      title: `Finding ${i} "quoted" \\ ünïcode`,
      body: `Line one\nline two\t${'x'.repeat(i)}`,
      fingerprint: `fp-${runId}-${i}`,
      outside_diff: false,
      still_open: false,
      created_at: at,
      ...extra,
    });
    const delivery = (id: string, at: number, extra: Record<string, unknown> = {}) => ({
      id,
      event: 'pull_request',
      action: 'synchronize',
      status: 'processed',
      outcome: 'enqueued',
      repo,
      pr_number: 5,
      installation_id: 9,
      payload: '{}',
      payload_bytes: 2,
      received_at: at,
      processed_at: at + 5,
      ...extra,
    });
    const command = (id: string, at: number) => ({
      id,
      kind: 'requeue',
      status: 'queued',
      payload: '{}',
      repo,
      pr_number: 5,
      actor: 'ops',
      created_at: at,
      updated_at: at,
    });
    // The detail the pull-request operation answers as JSON text, and the stamp its cache stored it with.
    const detailText = async (number: number) => {
      let stamp = '';
      const prCache = {
        get: async (_key: string, _stamp: unknown, load: () => Promise<{ stamp: string; json: string }>) => {
          const loaded = await load();
          stamp = loaded.stamp;
          return loaded.json;
        },
      } as unknown as StampedCache;
      const ctx = { ...localContext({ store: t.store, log: pino({ level: 'silent' }) }, 'ops'), prCache };
      const answer = await snapshotOperations.pullRequest.run(ctx, { repo, number });
      return { stamp, text: answer.data as unknown };
    };
    const bothBuilds = async (number = 5) => {
      const { stamp, text } = await detailText(number);
      // The stamp read with the detail is the stamp of what it shows.
      expect(stamp).toBe(await t.store.reads.pullRequestDetailStamp(repo, number));
      const built = await pullRequestDetail(t.store, repo, number);
      return { text, built: JSON.parse(JSON.stringify(built)) };
    };

    test('gives what the JavaScript build gives: values, JSON columns, booleans, orders and ties', async () => {
      await t.store.pullRequests.upsert({
        repo,
        number: 5,
        title: 'Émoji 🚀 and "quotes"',
        body: 'multi\nline',
        draft: true,
        labels: ['bug', 'ui'],
        headSha: 'c'.repeat(40),
        changedFiles: 3,
        installationId: 9,
      });
      await insertRows('runs', [
        run('run-a', 1000, { result: JSON.stringify({ summary: 'ok', n: [1, 2.5], nested: { x: null } }) }),
        run('run-b', 1000, { result: 'not json {', confidence: 87, verdict: 'approve', job_id: 12 }),
        run('run-c', 900, {
          shadow_review: JSON.stringify('a shadow body'),
          status: 'failed',
          reason: 'model_timeout',
        }),
      ]);
      await insertRows('findings', [
        finding('run-a', 1, 1000, { outside_diff: true, still_open: true }),
        finding('run-a', 2, 1000, { path: null, line: null, head_sha: null }),
        finding('run-c', 3, 900),
        finding('run-c', 4, 900),
      ]);
      await insertRows('deliveries', [
        delivery('d-1', 1000),
        delivery('d-3', 1000, { action: null, outcome: null }),
        delivery('d-2', 1200),
      ]);
      await insertRows('operator_commands', [command('c-1', 1000), command('c-2', 800)]);
      await t.store.publications.record({
        runId: 'run-a',
        repo,
        prNumber: 5,
        kind: 'review',
        mode: 'live',
        status: 'published',
        receipt: '42',
        body: 'Review body',
        error: null,
      });
      const { text, built } = await bothBuilds();
      expect(text).toEqual(built);
      const detail = text as {
        pullRequest: { draft: boolean; labels: string[]; title: string };
        runs: Array<{ id: string; result: unknown; shadowReview: unknown; confidence: number | null }>;
        findings: Array<{ title: string; outsideDiff: boolean; stillOpen: boolean; path: string | null }>;
        events: Array<{ type: string; at: number; deliveryId?: string; commandId?: string; runId?: string }>;
        publications: Array<{ receipt: string }>;
      };
      expect(detail.pullRequest).toMatchObject({
        draft: true,
        labels: ['bug', 'ui'],
        title: 'Émoji 🚀 and "quotes"',
      });
      expect(detail.runs.map((r) => r.id)).toEqual(['run-b', 'run-a', 'run-c']);
      expect(detail.runs.map((r) => [r.result, r.shadowReview, r.confidence])).toEqual([
        [null, null, 87],
        [{ summary: 'ok', n: [1, 2.5], nested: { x: null } }, null, null],
        [null, 'a shadow body', null],
      ]);
      expect(detail.findings.map((f) => [f.title.slice(0, 9), f.outsideDiff, f.stillOpen, f.path])).toEqual([
        ['Finding 1', true, true, 'src/f1.ts'],
        ['Finding 2', false, false, null],
        ['Finding 3', false, false, 'src/f3.ts'],
        ['Finding 4', false, false, 'src/f4.ts'],
      ]);
      expect(detail.events.map((e) => e.deliveryId ?? e.commandId ?? e.runId)).toEqual([
        'd-2',
        'd-3',
        'd-1',
        'c-1',
        'run-b',
        'run-a',
        'run-c',
        'c-2',
      ]);
      expect(detail.publications.map((p) => p.receipt)).toEqual(['42']);
    });

    test('the same limits: the newest 200 events and at most 2,000 findings', async () => {
      await insertRows('runs', [run('run-a', 5000)]);
      await insertRows(
        'deliveries',
        Array.from({ length: 150 }, (_, i) =>
          delivery(`d-${String(i).padStart(3, '0')}`, 1000 + (i % 40) * 10),
        ),
      );
      await insertRows(
        'operator_commands',
        Array.from({ length: 120 }, (_, i) =>
          command(`c-${String(i).padStart(3, '0')}`, 1000 + (i % 30) * 10),
        ),
      );
      await insertRows(
        'findings',
        Array.from({ length: 2005 }, (_, i) => finding('run-a', i % 7, 5000 - (i % 3))),
      );
      const { text, built } = await bothBuilds();
      expect(text).toEqual(built);
      const detail = text as { events: unknown[]; findings: unknown[] };
      expect(detail.events).toHaveLength(200);
      expect(detail.findings).toHaveLength(2000);
    });

    test('null when nothing is known; runs alone are enough', async () => {
      await expect(detailText(5)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await insertRows('runs', [run('run-a', 1000)]);
      const { text, built } = await bothBuilds();
      expect(text).toEqual(built);
      expect((text as { pullRequest: unknown }).pullRequest).toBeNull();
    });
  });

  test('policy writes: of concurrent writers with one revision exactly one wins, with one audit entry', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => t.store.policy.update(1, { fileChangeLimit: 10 + i }, `w${i}`)),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.code === 'revision_conflict')).toHaveLength(5);
    expect((await t.store.policy.get())!.revision).toBe(2);
    expect(await t.store.audit.list({ action: 'settings.update' })).toHaveLength(1);
  });

  describe('review records: findings, traces, usage', () => {
    const owner = {
      runId: 'run-1',
      reviewKey: 'octo/demo#1@' + 'a'.repeat(40),
      repo: 'octo/demo',
      prNumber: 1,
      headSha: 'a'.repeat(40),
    };
    const finding = (i: number) => ({
      severity: i % 2 ? 'high' : 'low',
      category: 'bug',
      path: i === 0 ? null : `src/f${i}.ts`,
      line: i === 0 ? null : i,
      title: `Finding ${i}`,
      body: 'why',
      fingerprint: `fp${i}`,
      outsideDiff: i === 2,
    });

    test('findings: a run records all its findings at once; location stays null when not given', async () => {
      await t.store.findings.recordMany(
        owner,
        Array.from({ length: 450 }, (_, i) => finding(i)),
      );
      const all = await t.store.findings.listForRun('run-1');
      expect(all).toHaveLength(450);
      expect(all[0]).toMatchObject({ path: null, line: null, severity: 'low', outsideDiff: false });
      expect(all[2]).toMatchObject({ path: 'src/f2.ts', line: 2, outsideDiff: true });
      expect(await t.store.findings.listForPr('octo/demo', 1, 10)).toHaveLength(10);
    });

    test('findings: a failing insert leaves none of the run behind', async () => {
      const bad = [finding(1), { ...finding(2), title: null as unknown as string }];
      await expect(t.store.findings.recordMany(owner, bad)).rejects.toHaveProperty('message');
      expect(await t.store.findings.listForRun('run-1')).toEqual([]);
    });

    test('run analysis: status, verdict, result and findings in one transaction; a retry replaces them', async () => {
      const { run } = await t.store.runs.createOrGet({
        reviewKey: owner.reviewKey,
        repo: owner.repo,
        prNumber: 1,
        headSha: owner.headSha,
        variant: null,
        trigger: 'opened',
        installationId: 7,
        deliveryId: null,
      });
      const mine = { ...owner, runId: run.id };
      expect(await t.store.runs.repoHasAnalysis('octo/demo')).toBe(false);
      const analysis = {
        analysisStatus: 'analysed' as const,
        verdict: 'needs-attention',
        confidence: 4,
        result: { coverage: { complete: true } },
        shadowReview: { model: 'm' },
      };
      await t.store.runs.recordAnalysis(mine, analysis, [finding(1), finding(2)], t.store.findings);
      await t.store.runs.recordAnalysis(
        mine,
        analysis,
        [{ ...finding(3), stillOpen: true }],
        t.store.findings,
      );
      const stored = await t.store.runs.get(run.id);
      expect(stored).toMatchObject({
        analysisStatus: 'analysed',
        verdict: 'needs-attention',
        confidence: 4,
        result: { coverage: { complete: true } },
        shadowReview: { model: 'm' },
      });
      expect((await t.store.findings.listForRun(run.id)).map((f) => [f.fingerprint, f.stillOpen])).toEqual([
        ['fp3', true],
      ]);
      // A failing findings insert leaves the run's earlier analysis and findings as they were.
      await expect(
        t.store.runs.recordAnalysis(
          mine,
          { ...analysis, verdict: 'clear' },
          [{ ...finding(4), title: null as unknown as string }],
          t.store.findings,
        ),
      ).rejects.toHaveProperty('message');
      expect((await t.store.runs.get(run.id))!.verdict).toBe('needs-attention');
      expect(await t.store.findings.listForRun(run.id)).toHaveLength(1);
      expect(await t.store.runs.repoHasAnalysis('octo/demo')).toBe(true);
      expect(await t.store.runs.previousAnalysed('octo/demo', 1, 'other')).toMatchObject({ id: run.id });
      expect(await t.store.runs.previousAnalysed('octo/demo', 1, run.id)).toBeNull();
    });

    test('competitor reviews: stored once per kind and GitHub id, newest first', async () => {
      const review = (githubId: number, kind: 'review' | 'comment' = 'review') => ({
        repo: 'octo/demo',
        prNumber: 1,
        login: 'coderabbitai[bot]',
        kind,
        githubId,
        state: null,
        body: `body ${githubId}`,
        submittedAt: null,
      });
      expect(await t.store.competitors.record(review(1))).toBe(true);
      expect(await t.store.competitors.record(review(1))).toBe(false);
      expect(await t.store.competitors.record(review(1, 'comment'))).toBe(true);
      expect(await t.store.competitors.record(review(2))).toBe(true);
      const listed = await t.store.competitors.listForPr('octo/demo', 1);
      expect(listed.map((r) => [r.kind, r.githubId])).toEqual([
        ['review', 2],
        ['comment', 1],
        ['review', 1],
      ]);
    });

    test('traces: filters, spans in order, bodies never stored, finish once', async () => {
      t.clock.set(1_000);
      await t.store.traces.start({
        id: 'tr-1',
        runId: 'run-1',
        reviewKey: owner.reviewKey,
        repo: 'octo/demo',
        prNumber: 1,
        name: 'review',
        attributes: { trigger: 'opened', prompt: 'secret diff' },
      });
      t.clock.set(2_000);
      await t.store.traces.start({
        id: 'tr-2',
        runId: 'run-2',
        repo: 'octo/other',
        prNumber: 5,
        name: 'review',
      });
      await t.store.traces.addSpan({
        traceId: 'tr-1',
        spanId: 's1',
        kind: 'stage',
        name: 'context',
        status: 'ok',
        startedAt: 1_000,
        endedAt: 1_500,
      });
      await t.store.traces.addSpan({
        traceId: 'tr-1',
        spanId: 's2',
        parentSpanId: 's1',
        kind: 'model',
        name: 'chunk 1',
        status: 'ok',
        provider: 'direct_a',
        model: 'm',
        inputTokens: 1200,
        outputTokens: 300,
        costUsd: 0.0123,
        startedAt: 1_100,
        endedAt: 1_400,
        attributes: { response: 'model text', chunk: 1 },
      });
      t.clock.set(3_000);
      expect(await t.store.traces.finish('tr-1', 'ok')).toBe(true);
      expect(await t.store.traces.finish('tr-1', 'error')).toBe(false);
      expect((await t.store.traces.list({ limit: 50 })).map((x) => x.traceId)).toEqual(['tr-2', 'tr-1']);
      expect((await t.store.traces.list({ limit: 50, repo: 'octo/demo' })).map((x) => x.traceId)).toEqual([
        'tr-1',
      ]);
      expect((await t.store.traces.list({ limit: 50, prNumber: 5 })).map((x) => x.traceId)).toEqual(['tr-2']);
      expect((await t.store.traces.list({ limit: 50, status: 'running' })).map((x) => x.traceId)).toEqual([
        'tr-2',
      ]);
      expect(
        (await t.store.traces.list({ limit: 50, reviewKey: owner.reviewKey })).map((x) => x.traceId),
      ).toEqual(['tr-1']);
      expect((await t.store.traces.list({ limit: 50, runId: 'run-2' })).map((x) => x.traceId)).toEqual([
        'tr-2',
      ]);
      expect(await t.store.traces.list({ limit: 1 })).toHaveLength(1);
      const detail = (await t.store.traces.get('tr-1'))!;
      expect(detail.trace).toMatchObject({
        status: 'ok',
        durationMs: 2_000,
        attributes: { trigger: 'opened' },
      });
      expect(detail.trace.attributes).not.toHaveProperty('prompt');
      expect(detail.spans.map((x) => [x.spanId, x.parentSpanId])).toEqual([
        ['s1', null],
        ['s2', 's1'],
      ]);
      expect(detail.spans[1]).toMatchObject({
        kind: 'model',
        inputTokens: 1200,
        outputTokens: 300,
        costUsd: 0.0123,
        attributes: { chunk: 1 },
      });
      expect(detail.spans[1]!.attributes).not.toHaveProperty('response');
      expect(await t.store.traces.get('nope')).toBeNull();
    });

    test('usage: sums known telemetry; one call without a value makes that total unknown, not 0', async () => {
      const { usageReport } = await import('../../src/store/usage.js');
      await t.store.traces.start({ id: 'tr-1', runId: 'run-1', name: 'review', startedAt: 10 });
      const span = (
        id: string,
        kind: 'model' | 'chat',
        at: number,
        usage: { i?: number | null; o?: number | null; c?: number | null },
      ) =>
        t.store.traces.addSpan({
          traceId: 'tr-1',
          spanId: id,
          kind,
          name: id,
          status: 'ok',
          provider: 'direct_a',
          model: kind === 'chat' ? 'small' : 'big',
          inputTokens: usage.i,
          outputTokens: usage.o,
          costUsd: usage.c,
          startedAt: at,
          endedAt: at,
        });
      await span('a', 'model', 100, { i: 1000, o: 100, c: 0.5 });
      await span('b', 'model', 200, { i: 3000, o: 300, c: 1.25 });
      await span('c', 'chat', 300, { i: 10, o: 5, c: null });
      await span('old', 'model', 5, { i: 1, o: 1, c: 1 });
      await t.store.traces.addSpan({
        traceId: 'tr-1',
        spanId: 'stage',
        kind: 'stage',
        name: 'x',
        status: 'ok',
        startedAt: 150,
      });
      const report = await usageReport(t.store.db.knex, 50, 1_000);
      expect(report.sourceRows).toBe(3);
      expect(report.model).toMatchObject({
        calls: 2,
        inputTokens: 4000,
        outputTokens: 400,
        costUsd: 1.75,
        complete: true,
        runsWithoutTelemetry: 0,
      });
      expect(report.model.byModel).toEqual([
        { provider: 'direct_a', model: 'big', calls: 2, inputTokens: 4000, outputTokens: 400, costUsd: 1.75 },
      ]);
      expect(report.chat).toMatchObject({
        calls: 1,
        inputTokens: 10,
        outputTokens: 5,
        costUsd: null,
        complete: false,
        unreported: { inputTokens: 0, outputTokens: 0, costUsd: 1 },
      });
      const empty = await usageReport(t.store.db.knex, 2_000, 3_000);
      expect(empty.model).toMatchObject({ calls: 0, inputTokens: 0, costUsd: 0, complete: true });
    });

    test('usage: an analysed run without model telemetry makes the model totals unknown', async () => {
      const { usageReport } = await import('../../src/store/usage.js');
      t.clock.set(500);
      const { run } = await t.store.runs.createOrGet({
        reviewKey: owner.reviewKey,
        repo: 'octo/demo',
        prNumber: 1,
        headSha: owner.headSha,
        trigger: 'opened',
        installationId: 7,
      });
      await t.store.runs.update(run.id, { analysisStatus: 'analysed' });
      const report = await usageReport(t.store.db.knex, 0, 1_000);
      expect(report.model).toMatchObject({
        calls: 0,
        costUsd: null,
        inputTokens: null,
        complete: false,
        runsWithoutTelemetry: 1,
      });
      await t.store.traces.start({ id: 'tr-x', runId: run.id, name: 'review', startedAt: 400 });
      await t.store.traces.addSpan({
        traceId: 'tr-x',
        spanId: 'm',
        kind: 'model',
        name: 'm',
        status: 'ok',
        inputTokens: 5,
        outputTokens: 6,
        costUsd: 0.01,
        startedAt: 450,
      });
      expect((await usageReport(t.store.db.knex, 0, 1_000)).model).toMatchObject({
        calls: 1,
        costUsd: 0.01,
        complete: true,
        runsWithoutTelemetry: 0,
      });
    });

    test('usage: more than 50,000 source rows is refused before aggregating', async () => {
      const { usageReport, UsageTooLargeError } = await import('../../src/store/usage.js');
      const rows = Array.from({ length: 50_001 }, (_, i) => ({
        trace_id: 'big',
        span_id: `s${i}`,
        kind: 'model',
        name: 'm',
        status: 'ok',
        started_at: 100 + (i % 50),
      }));
      for (let i = 0; i < rows.length; i += 500)
        await t.store.db.knex('spans').insert(rows.slice(i, i + 500));
      await expect(usageReport(t.store.db.knex, 0, 1_000)).rejects.toBeInstanceOf(UsageTooLargeError);
      expect((await usageReport(t.store.db.knex, 100, 149)).sourceRows).toBe(1001 + 48 * 1000);
    }, 60_000);
  });
}
