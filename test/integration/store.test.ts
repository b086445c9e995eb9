import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import * as lz4 from 'lz4-napi';
import type { Knex } from 'knex';
import { pullRequestDetailText } from '../../src/operator/snapshot.js';
import { createRequire } from 'node:module';
import { createKnex, isUniqueViolation, runScript } from '../../src/store/db.js';
import { migrationSource } from '../../src/store/migrations/index.js';
import type { IncomingDelivery } from '../../src/store/deliveries.js';
import { readRows } from '../../src/store/read-workers.js';
import { ManualClock, randomId, type Clock } from '../../src/clock.js';
import type { StoreConfig } from '../../src/config.js';
import { lz4Param, WRITER_WAL_PAGES } from '../../src/store/sqlite-client.js';
import { openStore, type Store } from '../../src/store/index.js';
import { makeStoreConfig, migrateDownTo, openTestStore, type TestStore } from '../helpers/store.js';
import { storeSuite } from './store-suite.js';

const require = createRequire(import.meta.url);
// better-sqlite3 (no type declarations here): a connection of this process, the same copy of SQLite.
const Sqlite = require('better-sqlite3') as new (file: string) => {
  exec(sql: string): void;
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
  close(): void;
};

/** Turns of the event loop while `run` works. */
async function turnsDuring(run: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const spin = () => {
    turns++;
    if (!done) setImmediate(spin);
  };
  setImmediate(spin);
  try {
    await run();
  } finally {
    done = true;
  }
  return turns;
}

describe('store on SQLite', () => storeSuite('sqlite'));

describe('checkpointer: the WAL is copied into the database file beside the writer', () => {
  let dir: { config: StoreConfig; cleanup(): Promise<void> };
  let store: Store | null = null;
  beforeEach(async () => {
    dir = await makeStoreConfig('sqlite');
  });
  afterEach(async () => {
    await store?.close();
    store = null;
    await dir.cleanup();
  });
  const open = async (checkpointer: boolean, config: StoreConfig = dir.config) => {
    store = await openStore(config, {
      clock: new ManualClock() as Clock,
      ids: randomId,
      dedupeTtlSeconds: 604800,
      checkpointer,
    });
    return store;
  };
  const filename = () => (dir.config as { filename: string }).filename;
  const writerSetting = async (s: Store) =>
    Number(
      ((await s.db.knex.raw('PRAGMA wal_autocheckpoint')) as Array<{ wal_autocheckpoint: number }>)[0]!
        .wal_autocheckpoint,
    );
  /** About 200 pages of incompressible rows, in 20 commits: well under the writer's own threshold. */
  const write = async (s: Store) => {
    await s.db.knex.raw('CREATE TABLE scratch (b BLOB)');
    for (let i = 0; i < 20; i++) {
      await s.db.knex('scratch').insert(Array.from({ length: 10 }, () => ({ b: randomBytes(3000) })));
    }
  };

  test('with a checkpointer the commits reach the database file without the writer checkpointing', async () => {
    const s = await open(true);
    expect(s.db.checkpointer?.alive).toBe(true);
    // The writer checkpoints by itself only at 4000 pages: the checkpointer does the work before that.
    expect(await writerSetting(s)).toBe(WRITER_WAL_PAGES);
    const before = statSync(filename()).size;
    await write(s);
    const until = Date.now() + 10_000;
    while (statSync(filename()).size < before + 200 * 3000 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(statSync(filename()).size).toBeGreaterThanOrEqual(before + 200 * 3000);
    // Everything in the WAL is in the database file now.
    const pass = await s.db.checkpointer!.pass();
    expect(pass.busy).toBe(0);
    expect(pass.checkpointed).toBe(pass.log);
    expect(await s.db.knex('scratch').count({ n: '*' })).toEqual([{ n: 200 }]);
  });

  test('without one (the default) the writer checkpoints only at 4000 pages: the pages stay in the WAL', async () => {
    const s = await open(false);
    expect(s.db.checkpointer).toBeNull();
    expect(await writerSetting(s)).toBe(WRITER_WAL_PAGES);
    const before = statSync(filename()).size;
    await write(s);
    await new Promise((r) => setTimeout(r, 300));
    expect(statSync(filename()).size).toBe(before);
  });

  test('under a stream of commits the WAL file stays near the writer threshold: it starts over', async () => {
    const s = await open(true);
    await s.db.knex.raw('CREATE TABLE scratch (b BLOB)');
    // 1.5x the threshold in pages, one commit after the other.
    for (let i = 0; i < (WRITER_WAL_PAGES * 3) / 2 / 20; i++) {
      await s.db.knex('scratch').insert(Array.from({ length: 20 }, () => ({ b: randomBytes(4000) })));
    }
    const frame = 4096 + 24;
    expect(statSync(`${filename()}-wal`).size).toBeLessThanOrEqual(32 + (WRITER_WAL_PAGES + 200) * frame);
    expect(await s.db.knex('scratch').count({ n: '*' })).toEqual([{ n: (WRITER_WAL_PAGES * 3) / 2 }]);
  });

  test('closing the store stops the checkpointer', async () => {
    const s = await open(true);
    const checkpointer = s.db.checkpointer!;
    await s.close();
    store = null;
    expect(checkpointer.alive).toBe(false);
    await expect(checkpointer.pass()).rejects.toThrow(/checkpointer has stopped/);
  });

  test('an in-memory store has no checkpointer', async () => {
    const s = await open(true, { client: 'sqlite', filename: ':memory:' });
    expect(s.db.checkpointer).toBeNull();
  });
});

describe('read workers: heavy SQLite reads off the event loop', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(async () => {
    await t.cleanup();
  });
  // A query that keeps SQLite busy for a while (a recursive count).
  const heavy =
    'with recursive c(n) as (select 1 union all select n + 1 from c where n < :to) select count(*) as n from c';

  test('start at the first query, and the event loop keeps running while they work', async () => {
    const workers = t.store.db.readWorkers!;
    expect(workers.running).toBe(0);
    const inWorker = await turnsDuring(async () =>
      expect(await workers.all(heavy, { to: 3_000_000 })).toEqual([{ n: 3_000_000 }]),
    );
    expect(workers.running).toBe(2);
    // The same query on the main thread's reader holds the loop for all of its run.
    const onMain = await turnsDuring(() => t.store.db.reader.raw(heavy, { to: 3_000_000 }).then());
    expect(onMain).toBeLessThan(5);
    expect(inWorker).toBeGreaterThan(50);
  });

  test('named and positional parameters; an error answers its query and the worker goes on', async () => {
    const workers = t.store.db.readWorkers!;
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 3, title: 'three' });
    expect(
      await workers.all('select title from pull_requests where repo = :repo and number = :n', {
        repo: 'o/r',
        n: 3,
      }),
    ).toEqual([{ title: 'three' }]);
    expect(await workers.all('select number from pull_requests where repo = ?', ['o/r'])).toEqual([
      { number: 3 },
    ]);
    await expect(workers.all('select * from no_such_table', [])).rejects.toThrow(/no such table/);
    await expect(workers.all('select title from pull_requests', [])).resolves.toEqual([{ title: 'three' }]);
    expect(workers.running).toBe(2);
  });

  test('a knex query runs in a worker with its bindings as the reader binds them (booleans, dates)', async () => {
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 5, title: 'draft', draft: true });
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 6, title: 'ready', draft: false });
    const query = () =>
      t.store.db
        .reader('pull_requests')
        .select('number')
        .where('draft', true)
        .where('created_at', '<', new Date(Date.now() + 86_400_000));
    const rows = await readRows(t.store.db, query());
    expect(t.store.db.readWorkers!.running).toBe(2);
    expect(rows).toEqual([{ number: 5 }]);
    expect(rows).toEqual(await query());
  });

  test('when the threads stop, their queries fail and reads go to the reader again', async () => {
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 4, title: 'four' });
    const workers = t.store.db.readWorkers!;
    const viaWorker = await pullRequestDetailText(t.store, 'o/r', 4);
    const threads = (workers as unknown as { workers: Array<{ worker: { terminate(): Promise<number> } }> })
      .workers;
    const inFlight = expect(workers.all(heavy, { to: 50_000_000 })).rejects.toThrow(/read worker stopped/);
    await Promise.all(threads.map((w) => w.worker.terminate()));
    await inFlight;
    expect(workers.available).toBe(false);
    expect(await pullRequestDetailText(t.store, 'o/r', 4)).toEqual(viaWorker);
  });
});

describe('SQLite connections: the writer thread, the reader, other processes', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(async () => {
    await t.cleanup();
  });

  // SQLite's locks belong to the process. The writer, the reader and the read workers all use
  // better-sqlite3's one copy of SQLite, which keeps a file open while any of its connections holds a lock
  // on it; another process closing its last connection must lose no write of this one.
  test('the reader keeps its one connection: another process closing loses no write of this one', async () => {
    const file = (t.config as { filename: string }).filename;
    const pool = (t.store.db.reader.client as { pool: { min: number; max: number } }).pool;
    expect({ min: pool.min, max: pool.max }).toEqual({ min: 1, max: 1 });
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 1, title: 'one' });
    expect(await t.store.reads.pullRequests.get('o/r', 1)).not.toBeNull();
    const other = (sql: string) =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [
            '-e',
            `const D = require('better-sqlite3'); const c = new D(${JSON.stringify(file)}); ` +
              `console.log(JSON.stringify(c.prepare(${JSON.stringify(sql)}).all())); c.close();`,
          ],
          { cwd: process.cwd() },
        ).toString(),
      );
    // The read workers' connections (the same copy of SQLite as the reader) are open too.
    expect((await pullRequestDetailText(t.store, 'o/r', 1)).detail).not.toBeNull();
    expect(t.store.db.readWorkers!.running).toBe(2);
    other('select count(*) as n from pull_requests');
    expect(existsSync(`${file}-wal`)).toBe(true);
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 2, title: 'two' });
    expect(other('select number from pull_requests order by number')).toEqual([{ number: 1 }, { number: 2 }]);
  });

  test('closing the store closes the writer before the read workers and the reader', async () => {
    const order: string[] = [];
    const track = (name: string, knex: { client: { destroy(...args: unknown[]): unknown } }) => {
      const destroy = knex.client.destroy.bind(knex.client);
      knex.client.destroy = (...args: unknown[]) => {
        order.push(name);
        return destroy(...args);
      };
    };
    track('writer', t.store.db.knex);
    track('reader', t.store.db.reader);
    const workers = t.store.db.readWorkers!;
    await workers.all('select 1', []);
    const closeWorkers = workers.close.bind(workers);
    workers.close = () => {
      order.push('read workers');
      return closeWorkers();
    };
    await t.store.close();
    expect(order).toEqual(['writer', 'read workers', 'reader']);
    expect(workers.running).toBe(0);
  });

  test('a transaction that reads and then writes is not failed by another connection committing meanwhile', async () => {
    // Another connection to the same file, as a worker process has. With a deferred BEGIN the read takes a
    // snapshot, the other connection commits, and the write then fails at once with SQLITE_BUSY; with
    // BEGIN IMMEDIATE the other connection waits on its busy timeout until this transaction commits.
    const other = createKnex(t.config);
    try {
      await other.raw('select 1');
      let otherWrite: Promise<unknown> | null = null;
      await t.store.db.knex.transaction(async (trx) => {
        await trx('dedupe_markers').count({ n: '*' });
        // .then() runs the query once and gives a plain promise (a knex builder runs again on every then).
        otherWrite = other('dedupe_markers')
          .insert({ key: 'other', expires_at: 1 })
          .then(() => 'written');
        // Unblocked, the other write takes milliseconds; blocked by this transaction, it is still waiting.
        await Promise.race([otherWrite, new Promise((r) => setTimeout(r, 1000))]);
        await trx('dedupe_markers').insert({ key: 'mine', expires_at: 1 });
      });
      await otherWrite;
      const keys = await t.store.db.knex('dedupe_markers').orderBy('key').pluck('key');
      expect(keys).toEqual(['mine', 'other']);
    } finally {
      await other.destroy();
    }
  });

  test("the writer works in a worker thread: waiting on another connection's lock does not hold the event loop", async () => {
    const file = (t.config as { filename: string }).filename;
    const other = new Sqlite(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      other.exec("INSERT INTO dedupe_markers (key, expires_at) VALUES ('other', 1)");
      let written = false;
      const write = t.store.db
        .knex('dedupe_markers')
        .insert({ key: 'mine', expires_at: 1 })
        .then(() => (written = true));
      // The writer waits on its busy timeout while the other connection holds the write lock.
      const turns = await turnsDuring(() => new Promise((r) => setTimeout(r, 300)));
      expect(written).toBe(false);
      expect(turns).toBeGreaterThan(50);
      other.exec('COMMIT');
      await write;
      expect(await t.store.db.knex('dedupe_markers').orderBy('key').pluck('key')).toEqual(['mine', 'other']);
    } finally {
      other.close();
    }
  });

  test('queries answer as knex answers on SQLite: ids, counts, rows, RETURNING; errors keep their code', async () => {
    const knex = t.store.db.knex;
    const row = (key: string, expires: number) => ({ key, expires_at: expires });
    const [id] = await knex('jobs').insert({
      queue: 'q',
      kind: 'k',
      payload: '{}',
      status: 'waiting',
      run_at: 1,
      created_at: 1,
      updated_at: 1,
    });
    expect(typeof id).toBe('number');
    expect(await knex('jobs').where({ id }).first('queue')).toEqual({ queue: 'q' });
    await knex('dedupe_markers').insert([row('a', 1), row('b', 2), row('c', 3)]);
    expect(await knex('dedupe_markers').where('expires_at', '>', 1).update({ expires_at: 9 })).toBe(2);
    expect(await knex('dedupe_markers').insert(row('d', 4)).returning('key')).toEqual([{ key: 'd' }]);
    expect(await knex('dedupe_markers').orderBy('key').pluck('key')).toEqual(['a', 'b', 'c', 'd']);
    // A raw statement that returns no rows answers [], as with the sqlite3 driver.
    expect(await knex.raw('UPDATE dedupe_markers SET expires_at = 5 WHERE key = ?', ['a'])).toEqual([]);
    expect(await knex.raw('SELECT expires_at FROM dedupe_markers WHERE key = ?', ['a'])).toEqual([
      { expires_at: 5 },
    ]);
    // Booleans and dates are bound as numbers.
    expect(await knex.raw('SELECT ? AS t, ? AS d', [true, new Date(7)])).toEqual([{ t: 1, d: 7 }]);
    expect(await knex('dedupe_markers').where({ key: 'd' }).del()).toBe(1);
    const error = await knex('dedupe_markers')
      .insert(row('a', 1))
      .then(() => null)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
    expect(isUniqueViolation(error)).toBe(true);
  });

  test('a script runs whole in one transaction: the rows of each step, or nothing when a step fails', async () => {
    const knex = t.store.db.knex;
    const results = await runScript(knex, [
      { sql: 'INSERT INTO dedupe_markers (key, expires_at) VALUES (?, ?)', bindings: ['s1', 1] },
      {
        sql: 'INSERT INTO dedupe_markers (key, expires_at) VALUES (?, ?) RETURNING key',
        bindings: ['s2', 2],
      },
      { sql: 'SELECT count(*) AS n FROM dedupe_markers', bindings: [] },
    ]);
    expect(results).toEqual([[], [{ key: 's2' }], [{ n: 2 }]]);
    await expect(
      runScript(knex, [
        { sql: 'INSERT INTO dedupe_markers (key, expires_at) VALUES (?, ?)', bindings: ['s3', 3] },
        { sql: 'INSERT INTO dedupe_markers (key, expires_at) VALUES (?, ?)', bindings: ['s1', 1] },
      ]),
    ).rejects.toThrow(/UNIQUE constraint/);
    expect(await knex('dedupe_markers').orderBy('key').pluck('key')).toEqual(['s1', 's2']);
    // The connection is usable afterwards, outside any transaction.
    await knex.transaction(async (trx) => {
      await trx('dedupe_markers').insert({ key: 's4', expires_at: 4 });
    });
    expect(await knex('dedupe_markers').count({ n: '*' })).toEqual([{ n: 3 }]);
  });

  test('an lz4Param is bound as the LZ4 block of its bytes or its text, in a script and in a statement', async () => {
    const knex = t.store.db.knex;
    const text = JSON.stringify({ body: 'webhook '.repeat(500), n: 1 });
    type Row = { z: Buffer; type?: string; n?: number };
    const [bytesRows, textRows] = (await runScript(knex, [
      { sql: 'SELECT ? AS z, typeof(?) AS type', bindings: [lz4Param(Buffer.from(text)), lz4Param(text)] },
      { sql: 'SELECT ? AS z, length(?) AS n', bindings: [lz4Param(text), lz4Param(text)] },
    ])) as [Row[], Row[]];
    const [fromBytes] = bytesRows;
    const [fromText] = textRows;
    expect(fromBytes!.type).toBe('blob');
    expect(lz4.uncompressSync(fromBytes!.z).toString('utf8')).toBe(text);
    expect(lz4.uncompressSync(fromText!.z).toString('utf8')).toBe(text);
    // SQLite holds the compressed bytes only.
    expect(fromText!.n).toBe(fromText!.z.length);
    expect(fromText!.n).toBeLessThan(Buffer.byteLength(text) / 5);
    const [row] = (await knex.raw('SELECT ? AS z', [lz4Param(text) as unknown as Knex.Value])) as Array<{
      z: Buffer;
    }>;
    expect(lz4.uncompressSync(row!.z).toString('utf8')).toBe(text);
  });

  test('a script never runs inside an open knex transaction: it waits for its end', async () => {
    const knex = t.store.db.knex;
    let script: Promise<unknown[][]> | null = null;
    await expect(
      knex.transaction(async (trx) => {
        await trx('dedupe_markers').insert({ key: 'in-trx', expires_at: 1 });
        script = runScript(knex, [
          { sql: 'INSERT INTO dedupe_markers (key, expires_at) VALUES (?, ?)', bindings: ['script', 1] },
        ]);
        await new Promise((r) => setTimeout(r, 100));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await script;
    // The transaction's row was rolled back; the script ran after it, on its own.
    expect(await knex('dedupe_markers').pluck('key')).toEqual(['script']);
  });

  test('a writer thread that stopped is replaced: the next query runs on a new thread', async () => {
    const knex = t.store.db.knex;
    const client = knex.client as {
      acquireConnection(): Promise<{ worker: { terminate(): Promise<number> }; alive: boolean }>;
      releaseConnection(c: unknown): Promise<unknown>;
    };
    const first = await client.acquireConnection();
    await client.releaseConnection(first);
    await first.worker.terminate();
    expect(first.alive).toBe(false);
    await knex('dedupe_markers').insert({ key: 'after', expires_at: 1 });
    expect(await knex('dedupe_markers').pluck('key')).toEqual(['after']);
    const second = await client.acquireConnection();
    await client.releaseConnection(second);
    expect(second).not.toBe(first);
    expect(second.alive).toBe(true);
  });

  test("pollWriter takes the writer's answers while the event loop is busy", async () => {
    const client = t.store.db.knex.client as {
      acquireConnection(): Promise<{
        request(message: unknown): Promise<{ rows: unknown[] }>;
        pending: Map<number, unknown>;
      }>;
      releaseConnection(c: unknown): Promise<unknown>;
    };
    const thread = await client.acquireConnection();
    await client.releaseConnection(thread);
    const answer = thread.request({ sql: 'SELECT 41 + 1 AS n', params: [], method: 'all' });
    // The event loop does not turn in this loop: only pollWriter can settle the request.
    const until = Date.now() + 5000;
    while (thread.pending.size > 0 && Date.now() < until) t.store.db.pollWriter();
    expect(thread.pending.size).toBe(0);
    expect((await answer).rows).toEqual([{ n: 42 }]);
  });

  test('webhook payloads are stored compressed and read back whole; rows from before keep their text', async () => {
    const payload = JSON.stringify({
      action: 'opened',
      body: 'ünïcödé ✓ '.repeat(200),
      url: 'https://api.github.com/repos/o/r'.repeat(50),
    });
    const [result] = await t.store.deliveries.recordBatch([
      {
        id: 'z1',
        event: 'pull_request',
        action: 'opened',
        raw: payload,
        bytes: Buffer.byteLength(payload),
        repo: 'o/r',
        prNumber: 1,
        installationId: null,
        outcome: 'enqueued',
        job: { queue: 'webhooks', kind: 'webhook' },
      },
    ]);
    expect(result).toEqual({ status: 'recorded', outcome: 'enqueued', enqueued: true });
    const knex = t.store.db.knex;
    const stored = await knex('deliveries')
      .where({ id: 'z1' })
      .first('payload', 'payload_z', 'payload_codec');
    expect(stored.payload).toBe('');
    expect(stored.payload_codec).toBe('lz4');
    expect(Buffer.isBuffer(stored.payload_z)).toBe(true);
    expect(stored.payload_z.length).toBeLessThan(Buffer.byteLength(payload) / 5);
    expect(lz4.uncompressSync(stored.payload_z).toString('utf8')).toBe(payload);
    expect(await t.store.deliveries.payload('z1')).toBe(payload);
    expect((await t.store.deliveries.get('z1'))?.payloadBytes).toBe(Buffer.byteLength(payload));
    // Migration 015 down makes the LZ4 payload Brotli, as migration 014 wrote it; 014 down puts the text
    // back in `payload`. Up again, the row reads the same.
    await migrateDownTo(knex, '015-lz4-payloads');
    await knex.migrate.down({ migrationSource });
    const brotli = await knex('deliveries').where({ id: 'z1' }).first('payload_z');
    expect(brotliDecompressSync(brotli.payload_z).toString('utf8')).toBe(payload);
    await knex.migrate.down({ migrationSource });
    expect(await knex('deliveries').where({ id: 'z1' }).first('payload')).toEqual({ payload });
    await knex.migrate.latest({ migrationSource });
    expect(await t.store.deliveries.payload('z1')).toBe(payload);
    // A row written under migration 014: Brotli in `payload_z`, no codec.
    await knex('deliveries')
      .where({ id: 'z1' })
      .update({ payload: '', payload_z: brotliCompressSync(Buffer.from(payload)), payload_codec: null });
    expect(await t.store.deliveries.payload('z1')).toBe(payload);
    // A row written before migration 014: text in `payload`, nothing in `payload_z`.
    await knex('deliveries').where({ id: 'z1' }).update({ payload: '{"old":true}', payload_z: null });
    expect(await t.store.deliveries.payload('z1')).toBe('{"old":true}');
  });

  test('a batch that waited out the busy timeout fails every delivery at once and leaves no marker', async () => {
    const file = (t.config as { filename: string }).filename;
    const client = t.store.db.knex.client as { runScript(steps: unknown[]): Promise<unknown[][]> };
    const runScript = client.runScript.bind(client);
    let scripts = 0;
    client.runScript = (steps) => {
      scripts++;
      return runScript(steps);
    };
    const item = (id: string): IncomingDelivery => ({
      id,
      event: 'ping',
      action: null,
      raw: '{"zen":"x"}',
      bytes: 11,
      repo: null,
      prNumber: null,
      installationId: null,
      outcome: 'ping',
      job: null,
    });
    const other = new Sqlite(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      const results = await t.store.deliveries.recordBatch([item('b1'), item('b2'), item('b3')]);
      expect(results.map((r) => r.status === 'failed' && r.code)).toEqual([
        'delivery_record_failed',
        'delivery_record_failed',
        'delivery_record_failed',
      ]);
      // One attempt for the batch, none per delivery: each would wait out the busy timeout again.
      expect(scripts).toBe(1);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    for (const id of ['b1', 'b2', 'b3']) expect(await t.store.deliveries.markerExists(id)).toBe(false);
    const again = await t.store.deliveries.recordBatch([item('b1'), item('b2'), item('b3')]);
    expect(again.map((r) => r.status)).toEqual(['recorded', 'recorded', 'recorded']);
  }, 20_000);
});
