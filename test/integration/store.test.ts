import { existsSync } from 'node:fs';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import * as lz4 from 'lz4-napi';
import { createRequire } from 'node:module';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { isUniqueViolation, runScript, writeTransaction } from '../../src/store/db.js';
import { migrationSource } from '../../src/store/migrations/index.js';
import type { IncomingDelivery } from '../../src/store/deliveries.js';
import { migrateDownTo, openTestStore, type TestStore } from '../helpers/store.js';
import { untilTurns } from '../helpers/turns.js';
import { storeSuite } from './store-suite.js';

const require = createRequire(import.meta.url);
// better-sqlite3 (no type declarations here): a connection of this process, the same copy of SQLite.
const Sqlite = require('better-sqlite3') as new (file: string) => {
  exec(sql: string): void;
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
  close(): void;
};

describe('store on SQLite', () => storeSuite('sqlite'));

/** Runs `script` (CommonJS, `better-sqlite3` as `D`, the file as `file`) in another process; its stdout. */
async function inOtherProcess(file: string, script: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['-e', `const D = require('better-sqlite3'); const file = ${JSON.stringify(file)}; ${script}`],
    { cwd: process.cwd() },
  );
  return stdout;
}

describe('SQLite on the stock better-sqlite3 client: settings, transactions, other processes', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(async () => {
    await t.cleanup();
  });
  const file = () => (t.config as { filename: string }).filename;

  test('one connection, in WAL mode, synchronous FULL (a commit is on disk when it returns), busy timeout 5 s, foreign keys', async () => {
    const knex = t.store.db.knex;
    expect(knex.client.config.client).toBe('better-sqlite3');
    const pool = (knex.client as { pool: { min: number; max: number } }).pool;
    expect({ min: pool.min, max: pool.max }).toEqual({ min: 1, max: 1 });
    const pragma = async (name: string) =>
      ((await knex.raw(`PRAGMA ${name}`)) as Array<Record<string, unknown>>)[0];
    expect(await pragma('journal_mode')).toEqual({ journal_mode: 'wal' });
    // 2 is FULL: the WAL is synced at every commit, so one fsync per group commit of deliveries.
    expect(await pragma('synchronous')).toEqual({ synchronous: 2 });
    expect(await pragma('busy_timeout')).toEqual({ timeout: 5000 });
    expect(await pragma('foreign_keys')).toEqual({ foreign_keys: 1 });
  });

  // SQLite's locks belong to the process: another process closing its last connection must lose no write
  // of this one (better-sqlite3 keeps the file open while any of its connections holds a lock).
  test('another process reading and closing loses no write of this one', async () => {
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 1, title: 'one' });
    const read =
      "const c = new D(file); console.log(JSON.stringify(c.prepare('select number from pull_requests order by number').all())); c.close();";
    expect(JSON.parse(await inOtherProcess(file(), read))).toEqual([{ number: 1 }]);
    expect(existsSync(`${file()}-wal`)).toBe(true);
    await t.store.pullRequests.upsert({ repo: 'o/r', number: 2, title: 'two' });
    expect(JSON.parse(await inOtherProcess(file(), read))).toEqual([{ number: 1 }, { number: 2 }]);
  });

  test('a write transaction that reads and then writes is not failed by another process committing meanwhile', async () => {
    // With a plain deferred BEGIN the read takes a snapshot, the other process commits, and the write then
    // fails at once (SQLITE_BUSY_SNAPSHOT); writeTransaction takes the write lock first, so the other
    // process cannot write until this transaction commits, and one that waits on its busy timeout writes
    // after it. The other process tries once without waiting (refused while the lock is held), then waits.
    let out = '';
    let exited: Promise<unknown> = Promise.resolve();
    await writeTransaction(t.store.db.knex, async (trx) => {
      await trx('dedupe_markers').count({ n: '*' });
      const child = spawn(
        process.execPath,
        [
          '-e',
          `const D = require('better-sqlite3'); const c = new D(${JSON.stringify(file())});
           const insert = () => c.prepare("insert into dedupe_markers (key, expires_at) values ('other', 1)").run();
           c.pragma('busy_timeout = 0');
           let wrote = false;
           try { insert(); wrote = true; console.log('written at once'); } catch (e) { console.log('refused ' + e.code); }
           c.pragma('busy_timeout = 5000'); console.log('waiting');
           if (!wrote) { insert(); console.log('written'); }
           c.close();`,
        ],
        { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
      );
      exited = new Promise((resolve) => child.on('exit', resolve));
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      // Until the other process has tried once and now waits for the lock.
      await new Promise<void>((resolve, reject) => {
        const seen = () => out.includes('waiting') && resolve();
        child.stdout.on('data', seen);
        child.on('exit', () => (seen(), reject(new Error(`the other process ended: ${out}`))));
      });
      expect(out).toContain('refused SQLITE_BUSY');
      expect(out).not.toContain('written');
      await trx('dedupe_markers').insert({ key: 'mine', expires_at: 1 });
    });
    await exited;
    expect(out).toContain('written');
    expect(await t.store.db.knex('dedupe_markers').orderBy('key').pluck('key')).toEqual(['mine', 'other']);
  }, 30_000);

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
    await knex.raw('UPDATE dedupe_markers SET expires_at = 5 WHERE key = ?', ['a']);
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
    // better-sqlite3's errors belong to the Jest realm that loaded the native module first: check what
    // the error says, not its class.
    expect(String((error as { message?: unknown }).message)).toMatch(/UNIQUE constraint/);
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
    ).rejects.toMatchObject({ message: expect.stringMatching(/UNIQUE constraint/) });
    expect(await knex('dedupe_markers').orderBy('key').pluck('key')).toEqual(['s1', 's2']);
    // The connection is usable afterwards, outside any transaction.
    await knex.transaction(async (trx) => {
      await trx('dedupe_markers').insert({ key: 's4', expires_at: 4 });
    });
    expect(await knex('dedupe_markers').count({ n: '*' })).toEqual([{ n: 3 }]);
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
        // The script waits for the one connection, which this transaction holds.
        const pool = (knex.client as { pool: { numPendingAcquires(): number } }).pool;
        await untilTurns(() => pool.numPendingAcquires() === 1, 'the script waiting for the connection');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await script;
    // The transaction's row was rolled back; the script ran after it, on its own.
    expect(await knex('dedupe_markers').pluck('key')).toEqual(['script']);
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
    // Each transaction of a batch starts with its delivery rows' insert: count those.
    let attempts = 0;
    t.store.db.knex.on('query', (q: { sql: string }) => {
      if (q.sql.includes('INSERT INTO deliveries')) attempts++;
    });
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
      expect(attempts).toBe(1);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    for (const id of ['b1', 'b2', 'b3']) expect(await t.store.deliveries.markerExists(id)).toBe(false);
    const again = await t.store.deliveries.recordBatch([item('b1'), item('b2'), item('b3')]);
    expect(again.map((r) => r.status)).toEqual(['recorded', 'recorded', 'recorded']);
  }, 20_000);
});
