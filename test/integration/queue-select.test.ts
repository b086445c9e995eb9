import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { randomId } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import { openQueue } from '../../src/queue/select.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

/** Queue selection (review-engine 8) as a worker opens it. */
describe('openQueue', () => {
  let t: TestStore;
  let dir: string;
  let logged: Array<{ event?: string; msg?: string }>;
  const log = () =>
    pino(
      { level: 'info' },
      { write: (line: string) => void logged.push(JSON.parse(line) as { event?: string; msg?: string }) },
    );
  beforeEach(async () => {
    t = await openTestStore('sqlite');
    dir = mkdtempSync(join(tmpdir(), 'verdict-q-'));
    logged = [];
  });
  afterEach(async () => {
    await t.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  const deps = () => ({ store: t.store, clock: t.clock, ids: randomId, log: log() });

  test('the default is the store job table, shared with ingress', async () => {
    const q = await openQueue(loadConfig({}).queue, deps());
    expect(q.sharesStore).toBe(true);
    const { jobId } = (await q.backend.enqueue({ queue: 'x', kind: 'k', payload: 1 })) as { jobId: number };
    expect((await t.store.jobs.get(jobId))!.status).toBe('waiting');
  });

  test('VERDICT_QUEUE_DB_PATH opens a separate SQLite queue file', async () => {
    const file = join(dir, 'queue.sqlite');
    const q = await openQueue(loadConfig({ VERDICT_QUEUE_DB_PATH: file }).queue, deps());
    try {
      expect(q.sharesStore).toBe(false);
      expect(q.backend.kind).toBe('sqlite');
      await q.backend.enqueue({ queue: 'x', kind: 'k', payload: { a: 1 } });
      const job = await q.backend.claim('x', 'w:1', 1000);
      expect(job).toMatchObject({ payload: { a: 1 }, status: 'running' });
      expect(await t.store.jobs.list()).toEqual([]); // not the store's table
    } finally {
      await q.close();
    }
  });

  test('the memory queue is process-local and says in the log that it loses jobs on exit', async () => {
    const q = await openQueue(loadConfig({ VERDICT_DB_PATH: ':memory:' }).queue, deps());
    const other = await openQueue(loadConfig({ VERDICT_QUEUE_DB_PATH: ':memory:' }).queue, deps());
    try {
      expect(q.describe).toBe('process-local memory queue');
      expect(q.sharesStore).toBe(false);
      const warning = logged.find((l) => l.event === 'memory-queue');
      expect(warning?.msg).toMatch(/lost on exit/);
      await q.backend.enqueue({ queue: 'x', kind: 'k', payload: 1 });
      expect(await q.backend.claim('x', 'w:1', 1000)).toMatchObject({ status: 'running' });
      // Each memory queue is its own: another one (VERDICT_QUEUE_DB_PATH=:memory:) holds nothing.
      expect(other.describe).toBe('process-local memory queue');
      expect(await other.backend.list()).toEqual([]);
      expect(await t.store.jobs.list()).toEqual([]);
    } finally {
      await q.close();
      await other.close();
    }
  });

  test('URL and token select the HTTP queue client', async () => {
    const q = await openQueue(
      loadConfig({ VERDICT_QUEUE_URL: 'http://127.0.0.1:9', VERDICT_QUEUE_TOKEN: 'secret' }).queue,
      deps(),
    );
    expect(q.backend.kind).toBe('http');
    expect(q.describe).toBe('http queue at http://127.0.0.1:9');
    expect(q.describe).not.toContain('secret');
    const withUser = await openQueue(
      loadConfig({ VERDICT_QUEUE_URL: 'https://bob:hunter2@q.example.com/base', VERDICT_QUEUE_TOKEN: 't' })
        .queue,
      deps(),
    );
    expect(withUser.describe).toBe('http queue at https://q.example.com/base');
  });
});
