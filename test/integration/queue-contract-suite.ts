import type { ManualClock } from '../../src/clock.js';
import type { QueueBackend } from '../../src/queue/types.js';
import { retryDelayMs } from '../../src/store/jobs.js';

export type QueueFixture = { queue: QueueBackend; clock: ManualClock; close(): Promise<void> };

/** The same behaviour from every queue backend: SQL (SQLite, PostgreSQL), memory and HTTP. */
export function queueContractSuite(open: () => Promise<QueueFixture>): void {
  let f: QueueFixture;
  let q: QueueBackend;
  beforeEach(async () => {
    f = await open();
    q = f.queue;
  });
  afterEach(() => f.close());

  const job = (key: string | null, payload: unknown, extra: Record<string, unknown> = {}) =>
    ({ queue: 'lane', kind: 'test', key, payload, ...extra }) as Parameters<QueueBackend['enqueue']>[0];

  test('one waiting job per key: replace_waiting swaps the payload, keep_existing keeps it', async () => {
    const a = await q.enqueue(job('k', { v: 1 }));
    expect(a.outcome).toBe('enqueued');
    const b = await q.enqueue({ ...job('k', { v: 2 }), mode: 'replace_waiting' });
    expect(b).toEqual({ outcome: 'replace_waiting', jobId: a.jobId, replacedPayload: { v: 1 } });
    const c = await q.enqueue({ ...job('k', { v: 3 }), mode: 'keep_existing' });
    expect(c).toEqual({ outcome: 'already_waiting', jobId: a.jobId });
    expect((await q.enqueue(job('other', {}))).outcome).toBe('enqueued');
    const claimed = await q.claim('lane', 'w:1', 1000);
    expect(claimed).toMatchObject({ id: a.jobId, payload: { v: 2 } });
  });

  test('replace_waiting never touches a running job: a new job waits beside it', async () => {
    const a = await q.enqueue(job('k', { v: 1 }));
    const running = (await q.claim('lane', 'w:1', 1000))!;
    const b = await q.enqueue({ ...job('k', { v: 2 }), mode: 'replace_waiting' });
    expect(b.outcome).toBe('enqueued');
    expect(b.jobId).not.toBe(a.jobId);
    expect(await q.ack(running.id, running.receipt)).toBe(true);
    expect(await q.claim('lane', 'w:1', 1000)).toMatchObject({ id: b.jobId, payload: { v: 2 } });
  });

  test('claim order: priority, then time, then id; future jobs and other queues are not claimed', async () => {
    const now = f.clock.now();
    const low = await q.enqueue(job(null, 'low'));
    const high = await q.enqueue(job(null, 'high', { priority: 5 }));
    await q.enqueue(job(null, 'later', { runAt: now + 60_000, priority: 9 }));
    await q.enqueue({ ...job(null, 'elsewhere'), queue: 'other' });
    expect((await q.claim('lane', 'w', 1000))!.id).toBe(high.jobId);
    expect((await q.claim('lane', 'w', 1000))!.id).toBe(low.jobId);
    expect(await q.claim('lane', 'w', 1000)).toBeNull();
    f.clock.advance(60_000);
    expect((await q.claim('lane', 'w', 1000))!.payload).toBe('later');
  });

  test('fencing: after the lease expires another owner claims it; the old receipt is refused everywhere', async () => {
    await q.enqueue(job(null, {}));
    const first = (await q.claim('lane', 'first:1', 1000))!;
    expect(first).toMatchObject({ status: 'running', leaseOwner: 'first:1', attempts: 1 });
    expect(await q.claim('lane', 'second:2', 1000)).toBeNull(); // the lease is live
    expect(await q.renew(first.id, first.receipt, 1000)).toBe(f.clock.now() + 1000);
    f.clock.advance(1001);
    const second = (await q.claim('lane', 'second:2', 1000))!;
    expect(second).toMatchObject({ id: first.id, leaseOwner: 'second:2', attempts: 2 });
    expect(second.receipt).not.toBe(first.receipt);
    expect(await q.renew(first.id, first.receipt, 1000)).toBeNull();
    expect(await q.ack(first.id, first.receipt)).toBe(false);
    expect(await q.fail(first.id, first.receipt, 'late')).toBeNull();
    expect(await q.release(first.id, first.receipt)).toBe(false);
    expect(await q.ack(second.id, second.receipt)).toBe(true);
    expect(await q.ack(second.id, second.receipt)).toBe(false); // done is done
  });

  test('a failure waits out its back-off; after maxAttempts the job is dead with max_attempts', async () => {
    const { jobId } = await q.enqueue(job('dying', {}, { maxAttempts: 3 }));
    for (let attempt = 1; attempt <= 2; attempt++) {
      const claimed = (await q.claim('lane', 'w', 1000))!;
      expect(claimed.attempts).toBe(attempt);
      const result = await q.fail(claimed.id, claimed.receipt, `boom ${attempt}`);
      expect(result).toEqual({ status: 'waiting', runAt: f.clock.now() + retryDelayMs(attempt) });
      f.clock.advance(retryDelayMs(attempt) - 1);
      expect(await q.claim('lane', 'w', 1000)).toBeNull();
      f.clock.advance(1);
    }
    const last = (await q.claim('lane', 'w', 1000))!;
    expect(await q.fail(last.id, last.receipt, 'boom 3')).toEqual({ status: 'dead', reason: 'max_attempts' });
    expect(await q.claim('lane', 'w', 1000)).toBeNull();
    const dead = await q.list({ status: 'dead' });
    expect(dead).toEqual([
      expect.objectContaining({ id: jobId, deadReason: 'max_attempts', lastError: 'boom 3' }),
    ]);
  });

  test('a caller-given reason dead-letters at once (unroutable)', async () => {
    await q.enqueue(job(null, {}));
    const claimed = (await q.claim('lane', 'w', 1000))!;
    expect(await q.fail(claimed.id, claimed.receipt, 'no delivery id', { deadReason: 'unroutable' })).toEqual(
      {
        status: 'dead',
        reason: 'unroutable',
      },
    );
  });

  test('release gives the job back without counting the attempt', async () => {
    await q.enqueue(job(null, {}));
    const claimed = (await q.claim('lane', 'w', 1000))!;
    expect(await q.release(claimed.id, claimed.receipt, { delayMs: 500 })).toBe(true);
    expect(await q.claim('lane', 'w', 1000)).toBeNull();
    f.clock.advance(500);
    expect((await q.claim('lane', 'w', 1000))!.attempts).toBe(1);
  });

  test('reapExpired dead-letters a lease that expired on the last attempt (HTTP: the server reaps)', async () => {
    await q.enqueue(job(null, {}, { maxAttempts: 1 }));
    await q.claim('lane', 'w', 1000);
    f.clock.advance(1001);
    expect(await q.claim('lane', 'w2', 1000)).toBeNull(); // no attempts left: not reclaimed
    const reaped = await q.reapExpired();
    if (q.kind === 'http') {
      expect(reaped).toBe(0);
      return;
    }
    expect(reaped).toBe(1);
    expect(await q.list({ status: 'dead' })).toEqual([
      expect.objectContaining({ deadReason: 'max_attempts' }),
    ]);
  });

  test('list and stats', async () => {
    await q.enqueue(job(null, 1));
    await q.enqueue(job(null, 2));
    await q.enqueue({ ...job(null, 3), queue: 'other' });
    await q.claim('lane', 'w', 1000);
    expect((await q.list({ queue: 'lane' })).map((j) => j.payload)).toEqual([2, 1]);
    expect(await q.list({ limit: 1 })).toHaveLength(1);
    const stats = (await q.stats()).sort((a, b) =>
      `${a.queue}${a.status}`.localeCompare(`${b.queue}${b.status}`),
    );
    expect(stats).toEqual([
      { queue: 'lane', status: 'running', count: 1 },
      { queue: 'lane', status: 'waiting', count: 1 },
      { queue: 'other', status: 'waiting', count: 1 },
    ]);
  });

  test('batched claim and ack (backends that batch): own receipts, claim order, fenced', async () => {
    if (!q.claimMany || !q.ackMany) return;
    for (let i = 0; i < 5; i++) await q.enqueue(job(null, i, { priority: i === 3 ? 1 : 0 }));
    const batch = await q.claimMany('lane', 'w:1', 1000, 3);
    expect(batch.map((j) => j.payload)).toEqual([3, 0, 1]);
    expect(new Set(batch.map((j) => j.receipt)).size).toBe(3);
    expect(batch.every((j) => j.status === 'running' && j.attempts === 1)).toBe(true);
    const rest = await q.claimMany('lane', 'w:2', 1000, 10);
    expect(rest.map((j) => j.payload)).toEqual([2, 4]);
    const acked = await q.ackMany([
      { jobId: batch[0]!.id, receipt: batch[0]!.receipt },
      { jobId: batch[1]!.id, receipt: 'rcpt_stale.1' },
      { jobId: rest[0]!.id, receipt: rest[0]!.receipt },
    ]);
    expect(acked.sort((a, b) => a - b)).toEqual([batch[0]!.id, rest[0]!.id].sort((a, b) => a - b));
    expect(await q.ack(batch[1]!.id, batch[1]!.receipt)).toBe(true);
    expect(await q.ackMany([])).toEqual([]);
  });
}
