import pino from 'pino';
import { recordThrough, startIntakeThread, type IntakeWriter } from '../../src/ingress/intake-thread.js';
import type { IncomingDelivery } from '../../src/store/deliveries.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

/**
 * The intake writer thread (`VERDICT_INTAKE_THREAD`, issue 37): the server thread's batches of deliveries
 * recorded on the thread's own SQLite connection, into the same store the server reads; when the thread is
 * gone, the server thread records them itself.
 */
const log = pino({ level: 'silent' });

function delivery(id: string, overrides: Partial<IncomingDelivery> = {}): IncomingDelivery {
  const raw = Buffer.from(JSON.stringify({ action: 'opened', marker: id }));
  return {
    id,
    event: 'pull_request',
    action: 'opened',
    raw,
    bytes: raw.length,
    repo: 'octo/demo',
    prNumber: 1,
    installationId: 7,
    outcome: 'enqueued',
    job: { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: id } },
    ...overrides,
  };
}

let t: TestStore;
let writer: IntakeWriter | null = null;
beforeEach(async () => {
  t = await openTestStore('sqlite');
});
afterEach(async () => {
  await writer?.stop();
  writer = null;
  await t.cleanup();
});

const filename = () => (t.config as { filename: string }).filename;

test('records batches in the thread into the store the server reads: rows, payloads, jobs, duplicates', async () => {
  writer = await startIntakeThread({ client: 'sqlite', filename: filename() }, 604800, log);
  expect(writer.running).toBe(true);
  const results = await writer.record([
    delivery('d1'),
    delivery('d2', { job: null, outcome: 'ping' }),
    delivery('d1'),
  ]);
  expect(results).toEqual([
    { status: 'recorded', outcome: 'enqueued', enqueued: true },
    { status: 'recorded', outcome: 'ping', enqueued: false },
    { status: 'duplicate' },
  ]);
  expect((await t.store.deliveries.get('d1'))?.status).toBe('queued');
  expect((await t.store.deliveries.get('d2'))?.status).toBe('ignored');
  expect(await t.store.deliveries.payload('d1')).toBe(JSON.stringify({ action: 'opened', marker: 'd1' }));
  const jobs = await t.store.jobs.list({ queue: 'webhooks' });
  expect(jobs.map((j) => j.payload)).toEqual([{ deliveryId: 'd1' }]);
  expect((await writer.record([delivery('d1')]))[0]).toEqual({ status: 'duplicate' });
});

test("a body that is a view into a larger buffer is sent as its own bytes, and the server thread's buffer stays whole", async () => {
  writer = await startIntakeThread({ client: 'sqlite', filename: filename() }, 604800, log);
  const text = JSON.stringify({ action: 'opened', title: 'ünïcödé ✓ '.repeat(50) });
  const whole = Buffer.concat([Buffer.from('before'), Buffer.from(text), Buffer.from('after')]);
  const body = whole.subarray(6, 6 + Buffer.byteLength(text));
  const owned = Buffer.from(JSON.stringify({ action: 'opened', n: 'x'.repeat(5000) }));
  await writer.record([
    delivery('view', { raw: body, bytes: body.length }),
    delivery('owned', { raw: owned, bytes: owned.length }),
  ]);
  expect(await t.store.deliveries.payload('view')).toBe(text);
  expect(await t.store.deliveries.payload('owned')).toBe(owned.toString());
  // Nothing was detached: the server thread can still record these bytes itself.
  expect(whole.toString()).toBe(`before${text}after`);
  expect(owned.length).toBeGreaterThan(5000);
});

test('a failing batch answers each delivery alone, and nothing of the failed one is left', async () => {
  writer = await startIntakeThread({ client: 'sqlite', filename: filename() }, 604800, log);
  await t.store.db.knex.raw(
    `CREATE TRIGGER poison BEFORE INSERT ON jobs WHEN NEW.payload LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
  );
  const results = await writer.record([
    delivery('ok'),
    delivery('bad', { job: { queue: 'webhooks', kind: 'webhook', payload: { poison: true } } }),
  ]);
  expect(results[0]).toEqual({ status: 'recorded', outcome: 'enqueued', enqueued: true });
  expect(results[1]).toMatchObject({
    status: 'failed',
    code: 'enqueue_failed',
    error: expect.stringContaining('injected'),
  });
  expect(await t.store.deliveries.get('bad')).toBeNull();
  expect(await t.store.deliveries.markerExists('bad')).toBe(false);
});

test('after the thread stopped, batches are recorded by the server thread (recordThrough), and the read caches hear of it', async () => {
  writer = await startIntakeThread({ client: 'sqlite', filename: filename() }, 604800, log);
  let shown = 0;
  t.store.shownWrites.subscribe(() => shown++);
  expect(await recordThrough(writer, t.store, [delivery('in-thread')])).toEqual([
    { status: 'recorded', outcome: 'enqueued', enqueued: true },
  ]);
  expect(shown).toBe(1);
  await writer.stop();
  expect(writer.running).toBe(false);
  await expect(writer.record([delivery('late')])).rejects.toThrow(/not running/);
  expect(await recordThrough(writer, t.store, [delivery('here'), delivery('in-thread')])).toEqual([
    { status: 'recorded', outcome: 'enqueued', enqueued: true },
    { status: 'duplicate' },
  ]);
  expect((await t.store.deliveries.get('here'))?.status).toBe('queued');
  expect(shown).toBe(2);
});

test('a thread that cannot open its store does not start (the server thread records instead)', async () => {
  await expect(
    startIntakeThread({ client: 'sqlite', filename: '/nonexistent-dir/none/verdict.sqlite' }, 604800, log),
  ).rejects.toThrow(/directory does not exist|unable to open|cannot open/i);
});
