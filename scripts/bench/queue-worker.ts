/**
 * One benchmark worker process: waits for "go" on stdin, then claims and acks jobs of the `bench` queue
 * until the queue is empty (one at a time, or `BATCH` per claim and ack statement), and prints one JSON line with its claim latencies and the ids it acked.
 */
import { performance } from 'node:perf_hooks';
import { randomId, systemClock } from '../../src/clock.js';
import type { StoreConfig } from '../../src/config/index.js';
import { openStore } from '../../src/store/index.js';

const config = JSON.parse(process.env.STORE_CONFIG ?? '{}') as StoreConfig;
const owner = `bench-${process.env.WORKER_INDEX ?? '0'}:${process.pid}`;
const batch = Math.max(1, Number(process.env.BATCH ?? 1));
const store = await openStore(config, { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 });
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));

const latencies: number[] = [];
const claimed: number[] = [];
const acked: number[] = [];
let refused = 0;
const start = performance.timeOrigin + performance.now();
for (;;) {
  const t0 = performance.now();
  const jobs =
    batch === 1
      ? await store.jobs.claim('bench', owner, 60_000).then((j) => (j ? [j] : []))
      : await store.jobs.claimMany('bench', owner, 60_000, batch);
  latencies.push(performance.now() - t0);
  if (jobs.length === 0) break;
  for (const job of jobs) claimed.push(job.id);
  if (batch === 1) {
    const job = jobs[0]!;
    if (await store.jobs.ack(job.id, job.receipt)) acked.push(job.id);
    else refused++;
  } else {
    const ok = await store.jobs.ackMany(jobs.map((j) => ({ jobId: j.id, receipt: j.receipt })));
    acked.push(...ok);
    refused += jobs.length - ok.length;
  }
}
const end = performance.timeOrigin + performance.now();
await store.close();
process.stdout.write(JSON.stringify({ owner, start, end, latencies, claimed, acked, refused }) + '\n');
