import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pino from 'pino';
import { ManualClock, systemClock, randomId } from '../../src/clock.js';
import type { StoreConfig } from '../../src/config/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { QueueWorker, type JobContext } from '../../src/worker/runner.js';
import type { QueueBackend } from '../../src/queue/types.js';
import { makeStoreConfig, type TestDialect } from '../helpers/store.js';
import { untilTurns } from '../helpers/turns.js';

const WORKER = join(process.cwd(), 'test', 'helpers', 'queue-worker-proc.ts');
const silent = pino({ level: 'silent' });

type Proc = { child: ChildProcess; lines: () => string[]; exited: Promise<number | null> };

function startWorker(config: StoreConfig, env: Record<string, string>): Proc {
  // One process (node with the tsx loader), so SIGKILL really kills the worker and not just a wrapper.
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, NODE_OPTIONS: '', STORE_CONFIG: JSON.stringify(config), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => process.stderr.write(d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines: () => out.split('\n').filter(Boolean), exited };
}

/** Waits for the worker processes (real time: they run on their own clocks). */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = 'condition') {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function effects(store: Store): Promise<Map<string, number>> {
  const rows: Array<{ target: string; n: number | string }> = await store.db
    .knex('audit_events')
    .where({ action: 'test.effect' })
    .select('target')
    .count({ n: '*' })
    .groupBy('target');
  return new Map(rows.map((r) => [String(r.target), Number(r.n)]));
}

/** Queue failure tests with real worker processes (review-engine 3.4, issue 3 item 7). */
export function queueFailureSuite(dialect: TestDialect, opts: { raceJobs?: number } = {}): void {
  let config: StoreConfig;
  let cleanup: () => Promise<void>;
  let store: Store;
  const procs: Proc[] = [];

  beforeEach(async () => {
    ({ config, cleanup } = await makeStoreConfig(dialect));
    store = await openStore(config, { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 });
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }
    await store.close();
    await cleanup();
  });

  test('a worker killed with SIGKILL mid-job: after its lease expires the job is reclaimed and completes exactly once', async () => {
    const { jobId } = (await store.jobs.enqueue({
      queue: 'test',
      kind: 'test',
      payload: { hang: true },
    })) as {
      jobId: number;
    };
    const first = startWorker(config, { LEASE_MS: '1500', OWNER: 'first' });
    procs.push(first);
    await until(() => first.lines().some((l) => l.includes('"claimed"')), 30_000, 'the first claim');
    const running = await store.jobs.get(jobId);
    expect(running).toMatchObject({ status: 'running', attempts: 1 });
    expect(running!.leaseOwner).toMatch(/^first:\d+$/);

    first.child.kill('SIGKILL');
    await first.exited;
    expect((await store.jobs.get(jobId))!.status).toBe('running'); // the dead worker still "holds" it

    const second = startWorker(config, { LEASE_MS: '1500', OWNER: 'second' });
    procs.push(second);
    await until(async () => (await store.jobs.get(jobId))?.status === 'done', 30_000, 'the job to finish');
    const done = (await store.jobs.get(jobId))!;
    expect(done.attempts).toBe(2);
    expect(done.leaseOwner).toMatch(/^second:\d+$/);
    expect((await effects(store)).get(String(jobId))).toBe(1);
  }, 60_000);

  // In one process, on a manual clock: the store's leases and both workers' timers move only when the
  // test moves them.
  test('a worker whose lease was taken over cannot ack and does not publish', async () => {
    const clock = new ManualClock();
    await store.close();
    store = await openStore(config, { clock, ids: randomId, dedupeTtlSeconds: 60 });
    const { jobId } = (await store.jobs.enqueue({ queue: 'lane', kind: 'test', payload: {} })) as {
      jobId: number;
    };
    const backend: QueueBackend = store.jobs;
    // The first worker is cut off from the queue after its first claim (a network partition): it can
    // neither renew nor claim again, and its lease runs out. (The job table is its prototype.)
    let claims = 0;
    const partitioned: QueueBackend = Object.assign(Object.create(backend) as QueueBackend, {
      claimMany: undefined,
      claim: async (queue: string, owner: string, leaseMs: number) =>
        claims++ === 0 ? backend.claim(queue, owner, leaseMs) : Promise.reject(new Error('partition')),
      renew: async () => Promise.reject(new Error('partition')),
    });
    let release!: () => void;
    const paused = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const running = new Promise<void>((r) => (entered = r));
    let ended!: () => void;
    const firstEnded = new Promise<void>((r) => (ended = r));
    let published = 0;
    let firstError: unknown = null;
    let firstCtx: JobContext | null = null;
    const first = new QueueWorker({
      queue: partitioned,
      queueName: 'lane',
      owner: 'first:1',
      leaseMs: 300,
      concurrency: 1,
      log: silent,
      pollMs: 10,
      timers: clock,
      handler: async (_job, ctx) => {
        firstCtx = ctx;
        entered();
        await paused; // a long GC pause, a slow model call …
        try {
          await ctx.assertLease();
          published++;
        } catch (error) {
          firstError = error;
          throw error;
        } finally {
          ended();
        }
      },
    });
    first.start();
    await running;
    expect(await store.jobs.get(jobId)).toMatchObject({ status: 'running', leaseOwner: 'first:1' });
    clock.advance(299); // its renewals fail, and the lease still holds: nobody else can claim the job
    expect(await backend.claim('lane', 'thief:3', 5000)).toBeNull();
    expect(firstCtx!.signal.aborted).toBe(false);
    clock.advance(101); // the lease has expired
    const second = new QueueWorker({
      queue: backend,
      queueName: 'lane',
      owner: 'second:2',
      leaseMs: 5000,
      concurrency: 1,
      log: silent,
      pollMs: 10,
      timers: clock,
      handler: async (_job, ctx) => {
        await ctx.assertLease();
        published++;
      },
    });
    second.start();
    await untilTurns(async () => (await store.jobs.get(jobId))?.status === 'done', 'the takeover');
    release();
    await firstEnded;
    await first.stop(1000);
    await second.stop(1000);
    expect(published).toBe(1);
    expect((firstError as Error).name).toBe('LeaseLostError');
    expect(firstCtx!.signal.aborted).toBe(true);
    const job = (await store.jobs.get(jobId))!;
    expect(job).toMatchObject({ status: 'done', leaseOwner: 'second:2', attempts: 2 });
  }, 30_000);

  if (opts.raceJobs) {
    const total = opts.raceJobs;
    test(`two worker processes racing over ${total} jobs: every job acked exactly once, none lost`, async () => {
      const env = { QUEUE: 'race', LEASE_MS: '30000', CONCURRENCY: '4', EXIT_WHEN_IDLE_MS: '4000' };
      const a = startWorker(config, { ...env, OWNER: 'a' });
      const b = startWorker(config, { ...env, OWNER: 'b' });
      procs.push(a, b);
      // The jobs go in once both workers poll: one worker alone can finish them all while the other
      // still starts.
      const ready = (p: Proc) => p.lines().some((l) => l.includes('"ready"'));
      await until(() => ready(a) && ready(b), 30_000, 'both workers to start');
      await store.jobs.enqueueMany(
        Array.from({ length: total }, (_, i) => ({ queue: 'race', kind: 'test', payload: { i } })),
      );
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
      const statuses = await store.jobs.stats();
      expect(statuses.filter((s) => s.queue === 'race')).toEqual([
        { queue: 'race', status: 'done', count: total },
      ]);
      const perJob = await effects(store);
      expect(perJob.size).toBe(total);
      expect([...perJob.values()].every((n) => n === 1)).toBe(true);
      const claimedBy = (p: Proc) => p.lines().filter((l) => l.includes('"claimed"')).length;
      // Both processes took part, and no job was claimed twice.
      expect(claimedBy(a)).toBeGreaterThan(0);
      expect(claimedBy(b)).toBeGreaterThan(0);
      expect(claimedBy(a) + claimedBy(b)).toBe(total);
    }, 120_000);
  }
}
