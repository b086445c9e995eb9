import { ManualClock, randomId } from '../../src/clock.js';
import { MemoryQueue } from '../../src/queue/memory.js';

/** The memory queue's repair operations match the job table's (see queue-repair tests for SQL). */
describe('MemoryQueue repair', () => {
  let clock: ManualClock;
  let q: MemoryQueue;
  beforeEach(() => {
    clock = new ManualClock();
    q = new MemoryQueue({ clock, ids: randomId });
  });

  test('requeueDead: not_found, then back to waiting (with or without the attempt count), waiting_job_exists', async () => {
    expect(await q.requeueDead('k', { resetAttempts: true })).toMatchObject({ ok: false, code: 'not_found' });
    await q.enqueue({ queue: 'l', kind: 'k', key: 'k', payload: { a: 1 }, maxAttempts: 1 });
    const c = (await q.claim('l', 'w', 1000))!;
    await q.fail(c.id, c.receipt, 'boom');
    const kept = await q.requeueDead('k', { resetAttempts: false });
    expect(kept).toMatchObject({ ok: true, job: { status: 'waiting', attempts: 1, deadReason: null } });
    const again = (await q.claim('l', 'w', 1000))!;
    expect(await q.fail(again.id, again.receipt, 'boom')).toEqual({ status: 'dead', reason: 'max_attempts' });
    await q.enqueue({ queue: 'l', kind: 'k', key: 'k', payload: { a: 2 } });
    expect(await q.requeueDead('k', { resetAttempts: true })).toMatchObject({
      ok: false,
      code: 'waiting_job_exists',
    });
  });

  test('releaseLease: lease_active without force; force fences the old receipt; by receipt or key', async () => {
    await q.enqueue({ queue: 'l', kind: 'k', key: 'k', payload: {} });
    const held = (await q.claim('l', 'w', 60_000))!;
    expect(await q.releaseLease({ jobKey: 'k' }, { force: false })).toMatchObject({
      ok: false,
      code: 'lease_active',
    });
    expect(await q.releaseLease({ receipt: held.receipt }, { force: true })).toMatchObject({
      ok: true,
      job: { status: 'waiting', receipt: null },
    });
    expect(await q.ack(held.id, held.receipt)).toBe(false);
    expect(await q.releaseLease({ jobKey: 'none' }, { force: true })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
  });

  test('stored payloads cannot be changed through the objects handed out', async () => {
    const payload = { list: [1] };
    await q.enqueue({ queue: 'l', kind: 'k', payload });
    payload.list.push(2);
    const job = (await q.claim('l', 'w', 1000))!;
    (job.payload as { list: number[] }).list.push(3);
    expect((await q.list())[0]!.payload).toEqual({ list: [1] });
  });
});
