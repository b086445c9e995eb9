import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableColumns } from '../../src/native/worker/schema-upgrade.js';
import { example } from '../helpers/webhooks.js';
import { startIngress, type Harness } from './harness.js';

/**
 * A D1 database an earlier build created keeps its tables (`CREATE TABLE IF NOT EXISTS` leaves them as
 * they are): the worker's schema setup adds the columns they lack and the tables and indexes missing, and
 * keeps their rows; on a database that is up to date it changes nothing.
 */
const opened = () => {
  const p = example('pull_request', 'opened');
  p.installation = { id: 77 };
  return p;
};

const columnsOf = async (db: any, table: string): Promise<string[]> =>
  (await db.prepare(`PRAGMA table_info(${table})`).all()).results.map((c: any) => c.name);

describe('native schema: a database from an earlier build is upgraded in place', () => {
  let dir: string;
  let h: Harness | null = null;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'verdict-d1-'));
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds the missing columns on the next request and keeps the rows; a later start changes nothing', async () => {
    h = await startIngress({ d1Persist: dir });
    const db = await h.d1();
    // The tables as an earlier build made them, each with a row.
    await db.batch([
      db.prepare(`CREATE TABLE native_deliveries (id TEXT PRIMARY KEY, event TEXT NOT NULL, action TEXT,
        repo TEXT, pr_number INTEGER, outcome TEXT NOT NULL, bytes INTEGER NOT NULL, received_at TEXT NOT NULL)`),
      db.prepare(
        "INSERT INTO native_deliveries VALUES ('old-1', 'pull_request', 'opened', 'acme/web', 7, 'enqueued', 10, '2026-11-01T00:00:00Z')",
      ),
      db.prepare(`CREATE TABLE native_commands (id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
        error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`),
      db.prepare("INSERT INTO native_commands VALUES ('cmd-old', 'replay-webhook', 'failed', 'x', 'a', 'b')"),
      db.prepare(`CREATE TABLE memory_feedback (id integer not null primary key autoincrement,
        event_key varchar(300) not null, repo varchar(300) not null, pr_number integer not null,
        comment_id varchar(32) not null, kind varchar(16) not null, status varchar(16) not null,
        up integer not null default '0', created_at bigint not null, updated_at bigint not null)`),
      db.prepare(
        "INSERT INTO memory_feedback (event_key, repo, pr_number, comment_id, kind, status, up, created_at, updated_at) VALUES ('reaction:1', 'acme/web', 7, '700', 'up', 'counted', 1, 5, 5)",
      ),
    ]);
    expect(await columnsOf(db, 'native_deliveries')).not.toContain('body');

    const posted = await h.post('pull_request', opened(), { id: 'new-1' });
    expect(posted.status).toBe(202);

    expect(await columnsOf(db, 'native_deliveries')).toEqual([
      ...['id', 'event', 'action', 'repo', 'pr_number', 'outcome', 'bytes', 'received_at'],
      ...['dispatch_outcome', 'dispatch_reason', 'attempts', 'body', 'body_key'],
    ]);
    expect(await columnsOf(db, 'native_commands')).toEqual(expect.arrayContaining(['payload', 'result']));
    expect(await columnsOf(db, 'memory_feedback')).toEqual(
      expect.arrayContaining(['fingerprint', 'dismissed', 'cluster_id', 'answered', 'head_sha']),
    );
    // The old rows are there, the added columns at their defaults; the new delivery keeps its body.
    const deliveries = await db
      .prepare('SELECT id, outcome, attempts, body FROM native_deliveries ORDER BY id')
      .all();
    expect(deliveries.results).toEqual([
      { id: 'new-1', outcome: 'enqueued', attempts: 0, body: expect.stringContaining('"opened"') },
      { id: 'old-1', outcome: 'enqueued', attempts: 0, body: null },
    ]);
    expect(await db.prepare('SELECT id, status, payload FROM native_commands').all()).toMatchObject({
      results: [{ id: 'cmd-old', status: 'failed', payload: null }],
    });
    expect(
      await db
        .prepare('SELECT event_key, up, down, dismissed, answered, cluster_id FROM memory_feedback')
        .first(),
    ).toEqual({ event_key: 'reaction:1', up: 1, down: 0, dismissed: 0, answered: 0, cluster_id: null });
    // Missing tables and indexes were created, the indexes of the narrow table too.
    const objects = (
      await db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all()
    ).results.map((r: any) => r.name);
    expect(objects).toEqual(
      expect.arrayContaining([
        'native_alerts',
        'native_runs',
        'memory_clusters',
        'memory_feedback_event_key_unique',
      ]),
    );
    await h.close();
    h = null;

    // A later start (a new isolate) on the upgraded database: nothing to add, nothing lost.
    h = await startIngress({ d1Persist: dir });
    const again = await h.d1();
    expect((await h.post('pull_request', opened(), { id: 'new-2' })).status).toBe(202);
    expect(await columnsOf(again, 'native_deliveries')).toHaveLength(13);
    const ids = (await again.prepare('SELECT id FROM native_deliveries ORDER BY id').all()).results;
    expect(ids).toEqual([{ id: 'new-1' }, { id: 'new-2' }, { id: 'old-1' }]);
    expect(await again.prepare('SELECT COUNT(*) AS n FROM memory_feedback').first()).toEqual({ n: 1 });
  }, 60_000);
});

describe('native schema: a column SQLite cannot add in place', () => {
  it('stops the request (nothing recorded) and leaves the table and its rows as they were', async () => {
    const h = await startIngress();
    try {
      const db = await h.d1();
      // A native_runs without review_key (NOT NULL, no default) that holds a row: SQLite refuses the column.
      await db.batch([
        db.prepare(`CREATE TABLE native_runs (id TEXT PRIMARY KEY, repo TEXT NOT NULL, pr_number INTEGER NOT NULL,
          head_sha TEXT, trigger TEXT NOT NULL, status TEXT NOT NULL, installation_id INTEGER, delivery_id TEXT,
          created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`),
        db.prepare(
          "INSERT INTO native_runs VALUES ('r1', 'acme/web', 7, 'abc', 'opened', 'completed', 77, 'd', 'x', 'x')",
        ),
      ]);
      const r = await h.post('pull_request', opened());
      expect(r).toEqual({ status: 500, body: { error: 'enqueue_failed' } });
      expect(await columnsOf(db, 'native_runs')).not.toContain('review_key');
      expect(await db.prepare('SELECT id, status FROM native_runs').all()).toMatchObject({
        results: [{ id: 'r1', status: 'completed' }],
      });
    } finally {
      await h.close();
    }
  }, 60_000);
});

describe('native schema: the columns of a CREATE TABLE statement', () => {
  it('reads quoted and bare names, keeps commas inside parentheses and quotes, skips table constraints', () => {
    const sql =
      'CREATE TABLE IF NOT EXISTS `runs` (`id` varchar(64), "a,b" numeric(10, 2) not null default \'1,2\', ' +
      'status TEXT NOT NULL, [odd] text, PRIMARY KEY (`id`), UNIQUE (status, "a,b"), CONSTRAINT c CHECK (1))';
    expect(tableColumns(sql)).toEqual({
      table: 'runs',
      columns: [
        { name: 'id', definition: '`id` varchar(64)' },
        { name: 'a,b', definition: '"a,b" numeric(10, 2) not null default \'1,2\'' },
        { name: 'status', definition: 'status TEXT NOT NULL' },
        { name: 'odd', definition: '[odd] text' },
      ],
    });
    expect(tableColumns('CREATE INDEX IF NOT EXISTS i ON runs (status)')).toBeNull();
  });
});
