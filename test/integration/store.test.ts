import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pullRequestDetailText } from '../../src/operator/snapshot.js';
import { createKnex } from '../../src/store/db.js';
import { readRows } from '../../src/store/read-workers.js';
import { openTestStore, type TestStore } from '../helpers/store.js';
import { storeSuite } from './store-suite.js';

describe('store on SQLite', () => storeSuite('sqlite'));

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
    // Turns of the event loop while `run` works.
    const turnsDuring = async (run: () => Promise<unknown>) => {
      let turns = 0;
      let done = false;
      const spin = () => {
        turns++;
        if (!done) setImmediate(spin);
      };
      setImmediate(spin);
      await run();
      done = true;
      return turns;
    };
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

describe('SQLite connections: sqlite3 writes, better-sqlite3 reads, other processes', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(async () => {
    await t.cleanup();
  });

  // SQLite's locks belong to the process: when better-sqlite3's copy closes the file, the locks of the
  // writer's copy are gone, and another process closing its last connection deletes the WAL this process
  // still writes to. The reader's connection therefore lives as long as the store and closes last.
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
});
