import pino from 'pino';
import { randomId, systemClock } from '../../src/clock.js';
import { MemoryQueue } from '../../src/queue/memory.js';
import type { QueueBackend } from '../../src/queue/types.js';
import { QueueWorker, type JobHandler } from '../../src/worker/runner.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

/** The worker loop: lease renewal, loss of the lease, graceful stop (review-engine 8, issue 3 item 4). */
describe('QueueWorker', () => {
  let queue: MemoryQueue;
  let events: Array<{ event?: string }>;
  const log = () => pino({ level: 'info' }, { write: (line: string) => void events.push(JSON.parse(line)) });
  const worker = (handler: JobHandler, extra: Partial<ConstructorParameters<typeof QueueWorker>[0]> = {}) =>
    new QueueWorker({
      queue,
      queueName: 'lane',
      owner: 'w:1',
      leaseMs: 90,
      concurrency: 1,
      handler,
      log: log(),
      pollMs: 5,
      ...extra,
    });

  beforeEach(() => {
    queue = new MemoryQueue({ clock: systemClock, ids: randomId });
    events = [];
  });

  test('a job that runs longer than its lease keeps it by renewal (every lease/3) and is acked once', async () => {
    const { jobId } = await queue.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    let stolen: unknown = 'not tried';
    const w = worker(async () => {
      await sleep(300); // more than three leases
      stolen = await queue.claim('lane', 'thief:2', 1000);
    });
    w.start();
    await until(async () => (await queue.get(jobId))?.status === 'done');
    await w.stop(100);
    expect(stolen).toBeNull();
    expect(await queue.get(jobId)).toMatchObject({ status: 'done', attempts: 1, leaseOwner: 'w:1' });
  });

  test('failing renewals log lease_renew_failed; when the lease runs out the job is aborted (lease_lost_aborted) and nothing is acked', async () => {
    const { jobId } = await queue.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    // The worker is cut off from the queue once it holds the job: renewals fail, and so do its next
    // claims. Otherwise its own loop reclaims the expired job at once, and whether that second run ends
    // by losing its lease (running) or by stop()'s grace period (released: waiting) is a race of timers
    // (failed once in CI on a loaded machine).
    let claims = 0;
    const partitioned: QueueBackend = Object.assign(Object.create(queue) as MemoryQueue, {
      renew: async () => {
        throw new Error('connection reset');
      },
      claim: async (...args: Parameters<MemoryQueue['claim']>) => {
        if (claims++ > 0) throw new Error('connection reset');
        return queue.claim(...args);
      },
    });
    let aborted = false;
    let published = false;
    const w = worker(
      async (_job, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        aborted = true;
        try {
          await ctx.assertLease();
          published = true;
        } catch {
          // fenced: nothing is published
        }
      },
      { queue: partitioned },
    );
    w.start();
    await until(() => aborted, 3000);
    await w.stop(100);
    expect(events.some((e) => e.event === 'lease_renew_failed')).toBe(true);
    expect(events.some((e) => e.event === 'lease_lost_aborted')).toBe(true);
    expect(published).toBe(false);
    expect((await queue.get(jobId))!.status).toBe('running'); // left for reclaim after the expiry
  });

  test('a renewal refused because an operator released the lease aborts the job (lease_lost_aborted)', async () => {
    const { jobId } = await queue.enqueue({ queue: 'lane', kind: 'k', key: 'k', payload: {} });
    let sawAbort = false;
    const w = worker(async (_job, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      sawAbort = true;
    });
    w.start();
    await until(async () => (await queue.get(jobId))?.status === 'running');
    await queue.releaseLease({ jobKey: 'k' }, { force: true });
    await until(() => sawAbort, 2000); // the next renewal (every 30 ms) is refused
    expect(events.filter((e) => e.event === 'lease_lost_aborted')).toHaveLength(1);
    await w.stop(50);
    expect(await queue.get(jobId)).toMatchObject({ status: 'waiting', receipt: null });
  });

  test('graceful stop: no new claims, in-flight jobs finish; one that outlasts the grace period is released', async () => {
    for (let i = 0; i < 3; i++) await queue.enqueue({ queue: 'lane', kind: 'k', payload: { i } });
    const started: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const w = worker(
      async (job) => {
        const i = (job.payload as { i: number }).i;
        started.push(i);
        if (i === 1) await sleep(30);
        if (i === 0) await gate;
      },
      { concurrency: 2, leaseMs: 60_000 },
    );
    w.start();
    await until(() => started.length === 2);
    const stopping = w.stop(200);
    await stopping;
    release();
    const jobs = await queue.list();
    const byPayload = new Map(jobs.map((j) => [(j.payload as { i: number }).i, j]));
    expect(byPayload.get(1)).toMatchObject({ status: 'done' }); // finished within the grace period
    expect(byPayload.get(0)).toMatchObject({ status: 'waiting', attempts: 0 }); // released, attempt not counted
    expect(byPayload.get(2)).toMatchObject({ status: 'waiting', attempts: 0 }); // never claimed after stop
    expect(started).not.toContain(2);
  });
});
