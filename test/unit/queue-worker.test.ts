import pino from 'pino';
import { ManualClock, randomId } from '../../src/clock.js';
import { openDb, type Db } from '../../src/store/db.js';
import { JobStore } from '../../src/store/jobs.js';
import type { QueueBackend } from '../../src/queue/types.js';
import { QueueWorker, type JobHandler } from '../../src/worker/runner.js';
// `flush` lets the promises that timers started settle (the queue's answers to renewals).
import { nextTurn as flush, untilTurns as until } from '../helpers/turns.js';

/** Until the worker runs the job: the job is running and its renewal timer is set. */
const running = (queue: JobStore, clock: ManualClock, jobId: number) =>
  until(async () => (await queue.get(jobId))?.status === 'running' && clock.pendingTimers > 0);

/** Moves the manual clock by `ms` in 10 ms steps, letting each step's renewals settle. */
async function pass(clock: ManualClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 10) {
    clock.advance(10);
    await flush();
  }
}

/** The worker loop: lease renewal, loss of the lease, graceful stop (review-engine 8, issue 3 item 4). */
/** Every method of a queue, bound to it (a backend whose claim a test replaces). */
const bindAll = (q: JobStore): Omit<QueueBackend, 'kind'> => ({
  enqueue: q.enqueue.bind(q),
  claim: q.claim.bind(q),
  renew: q.renew.bind(q),
  ack: q.ack.bind(q),
  fail: q.fail.bind(q),
  release: q.release.bind(q),
  reapExpired: q.reapExpired.bind(q),
  list: q.list.bind(q),
  stats: q.stats.bind(q),
});

/** The process-local memory queue as Verdict opens it: a job table in an in-memory SQLite database. */
let db: Db | null = null;
async function memoryQueue(clock: ManualClock): Promise<JobStore> {
  db = await openDb({ client: 'sqlite', filename: ':memory:' });
  return new JobStore(db.knex, 'sqlite', clock, randomId);
}
afterEach(async () => {
  await db?.close();
  db = null;
});

describe('QueueWorker', () => {
  let queue: JobStore;
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
    events = [];
  });

  // The lease logic runs on a manual clock: the worker's timers and the queue's leases move only when the
  // test moves them.
  test('a job that runs longer than its lease keeps it by renewal (every lease/3) and is acked once', async () => {
    const clock = new ManualClock();
    queue = await memoryQueue(clock);
    const { jobId } = await queue.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    let finish!: () => void;
    const w = worker(() => new Promise<void>((resolve) => (finish = resolve)), { timers: clock });
    w.start();
    await running(queue, clock, jobId);
    await pass(clock, 360); // four leases of 90 ms
    expect(await queue.claim('lane', 'thief:2', 1000)).toBeNull();
    finish();
    await until(async () => (await queue.get(jobId))?.status === 'done');
    await w.stop(100);
    expect(await queue.get(jobId)).toMatchObject({ status: 'done', attempts: 1, leaseOwner: 'w:1' });
  });

  test('mayClaim holds claiming while it answers a wait, and the job runs once it answers 0', async () => {
    const clock = new ManualClock();
    queue = await memoryQueue(clock);
    const { jobId } = await queue.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    let hold = 50;
    let asked = 0;
    const ran: number[] = [];
    const w = worker(
      async (job) => {
        ran.push(job.id);
      },
      {
        timers: clock,
        mayClaim: () => {
          asked += 1;
          return hold;
        },
      },
    );
    w.start();
    await pass(clock, 200);
    expect(asked).toBeGreaterThan(1);
    expect(await queue.get(jobId)).toMatchObject({ status: 'waiting', attempts: 0 });
    hold = 0;
    await pass(clock, 100);
    await until(async () => (await queue.get(jobId))?.status === 'done');
    expect(ran).toEqual([jobId]);
    await w.stop(100);
  });

  test('lets timers and messages in between claims when every job settles in microtasks (a synchronous driver)', async () => {
    const clock = new ManualClock();
    queue = await memoryQueue(clock);
    for (let i = 0; i < 200; i++) await queue.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    let done = 0;
    const w = worker(
      async () => {
        done += 1;
      },
      { timers: clock },
    );
    // A macrotask queued when the worker starts runs long before the 200 jobs are done: without a turn
    // of the event loop between claims, it would wait for all of them (and so would a `stop` message).
    const seen = new Promise<number>((resolve) => {
      w.start();
      setImmediate(() => resolve(done));
    });
    expect(await seen).toBeLessThan(10);
    await until(() => done === 200);
    await w.stop(100);
  });

  test('failing renewals log lease_renew_failed; when the lease runs out the job is aborted (lease_lost_aborted) and nothing is acked', async () => {
    const clock = new ManualClock();
    queue = await memoryQueue(clock);
    const { jobId } = await queue.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    // The worker is cut off from the queue once it holds the job: renewals fail, and so do its next
    // claims (otherwise its own loop would reclaim the expired job).
    let claims = 0;
    const partitioned: QueueBackend = Object.assign(Object.create(queue) as JobStore, {
      renew: async () => {
        throw new Error('connection reset');
      },
      claim: async (...args: Parameters<JobStore['claim']>) => {
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
      { queue: partitioned, timers: clock },
    );
    w.start();
    await running(queue, clock, jobId);
    await pass(clock, 60); // two failed renewals, the lease (90 ms) not yet out
    expect(events.filter((e) => e.event === 'lease_renew_failed')).toHaveLength(2);
    expect(aborted).toBe(false);
    await pass(clock, 30); // the third fails at the lease's end
    await until(() => aborted);
    await w.stop(100);
    expect(events.some((e) => e.event === 'lease_lost_aborted')).toBe(true);
    expect(published).toBe(false);
    expect((await queue.get(jobId))!.status).toBe('running'); // left for reclaim after the expiry
  });

  test('a renewal refused because an operator released the lease aborts the job (lease_lost_aborted)', async () => {
    const clock = new ManualClock();
    queue = await memoryQueue(clock);
    const { jobId } = await queue.enqueue({ queue: 'lane', kind: 'k', key: 'k', payload: {} });
    let sawAbort = false;
    const w = worker(
      async (_job, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        sawAbort = true;
      },
      { timers: clock },
    );
    w.start();
    await running(queue, clock, jobId);
    await queue.releaseLease({ jobKey: 'k' }, { force: true });
    expect(sawAbort).toBe(false);
    await pass(clock, 30); // the next renewal is refused
    await until(() => sawAbort);
    expect(events.filter((e) => e.event === 'lease_lost_aborted')).toHaveLength(1);
    // The released job may be claimed again by the loop: stop's grace period (50 ms) ends it.
    const stopped = w.stop(50);
    await flush();
    await pass(clock, 50);
    await stopped;
    expect(await queue.get(jobId)).toMatchObject({ status: 'waiting', receipt: null });
  });

  test('a stop that comes while a claim is in flight ends the loop at once, not after the next poll', async () => {
    const clock = new ManualClock();
    queue = await memoryQueue(clock);
    let answer!: () => void;
    let claiming!: () => void;
    const claimStarted = new Promise<void>((r) => (claiming = r));
    const slow: QueueBackend = {
      kind: 'sqlite',
      ...bindAll(queue),
      claimMany: undefined,
      claim: async (name, owner, leaseMs) => {
        claiming();
        await new Promise<void>((r) => (answer = r));
        return queue.claim(name, owner, leaseMs);
      },
    };
    const w = worker(async () => undefined, { queue: slow, timers: clock, pollMs: 60_000 });
    w.start();
    await claimStarted;
    const stopped = w.stop(1000);
    answer(); // the claim comes back empty after stop() was asked
    let done = false;
    void stopped.then(() => (done = true));
    // No clock movement: the loop must not go to sleep for its 60 s poll.
    await until(() => done, 'the stop');
    expect(clock.pendingTimers).toBe(0);
  });

  test('graceful stop: no new claims, in-flight jobs finish; one that outlasts the grace period is released', async () => {
    const clock = new ManualClock();
    queue = await memoryQueue(clock);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await queue.enqueue({ queue: 'lane', kind: 'k', payload: { i } })).jobId);
    const started: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const w = worker(
      async (job) => {
        const i = (job.payload as { i: number }).i;
        started.push(i);
        if (i === 1) await new Promise<void>((r) => clock.after(30, r)); // 30 ms of work
        if (i === 0) await gate; // never ends by itself
      },
      { concurrency: 2, leaseMs: 60_000, timers: clock },
    );
    w.start();
    await until(() => started.length === 2);
    let stopped = false;
    const stopping = w.stop(200).then(() => (stopped = true));
    await flush(); // the loop has ended: the grace period runs from here
    clock.advance(30); // job 1 finishes within the grace period
    await until(async () => (await queue.get(ids[1]!))?.status === 'done');
    clock.advance(169);
    await flush();
    expect(stopped).toBe(false); // job 0 still has 1 ms of grace
    clock.advance(1);
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
