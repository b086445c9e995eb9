/**
 * A worker process for the queue failure tests: a real QueueWorker over the real job table. Each job's
 * "side effect" is an audit row (action `test.effect`, target = job id) written right after
 * `assertLease()`, the way a review publishes only while it still holds its lease. A job whose payload
 * says `hang` hangs forever on its first attempt (so the test can SIGKILL the process mid-job).
 *
 * Configuration comes from the environment: STORE_CONFIG (JSON StoreConfig), QUEUE, LEASE_MS,
 * CONCURRENCY, OWNER, EXIT_WHEN_IDLE_MS (exit after the queue stays empty that long).
 */
import pino from 'pino';
import { randomId, systemClock } from '../../src/clock.js';
import type { StoreConfig } from '../../src/config/index.js';
import { openStore } from '../../src/store/index.js';
import { QueueWorker } from '../../src/worker/runner.js';

const config = JSON.parse(process.env.STORE_CONFIG ?? '{}') as StoreConfig;
const queueName = process.env.QUEUE ?? 'test';
const leaseMs = Number(process.env.LEASE_MS ?? 1000);
const concurrency = Number(process.env.CONCURRENCY ?? 1);
const owner = `${process.env.OWNER ?? 'proc'}:${process.pid}`;
const idleExitMs = Number(process.env.EXIT_WHEN_IDLE_MS ?? 0);

const store = await openStore(config, { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 });
const log = pino({ level: 'warn' }, pino.destination(2));
let lastWork = Date.now();

const worker = new QueueWorker({
  queue: store.jobs,
  queueName,
  owner,
  leaseMs,
  concurrency,
  log,
  pollMs: 20,
  handler: async (job, ctx) => {
    lastWork = Date.now();
    const payload = job.payload as { hang?: boolean } | null;
    process.stdout.write(JSON.stringify({ claimed: job.id, attempt: job.attempts }) + '\n');
    if (payload?.hang && job.attempts === 1) await new Promise(() => undefined);
    await ctx.assertLease();
    await store.audit.record({ actor: owner, action: 'test.effect', target: String(job.id) });
    lastWork = Date.now();
    return { type: 'ack' };
  },
});
worker.start();
process.stdout.write(JSON.stringify({ ready: owner }) + '\n');

if (idleExitMs > 0) {
  const timer = setInterval(() => {
    if (worker.active === 0 && Date.now() - lastWork > idleExitMs) {
      clearInterval(timer);
      void worker.stop().then(async () => {
        await store.close();
        process.exit(0);
      });
    }
  }, 50);
}
