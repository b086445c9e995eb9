/**
 * Queue benchmark: enqueue → claim → ack throughput with 1 and 4 worker processes, on SQLite and on
 * PostgreSQL, with fenced leases (every claim issues a receipt; ack needs it). Prints jobs/s, claim
 * latency, double claims and lost jobs (both must be 0). Each configuration runs twice: one job per
 * claim and ack statement, and 50 per statement (claimMany / ackMany, each job still with its own
 * receipt). "claim" latency is the time of one claim statement.
 *
 *   npm run bench:queue [-- --jobs 20000]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { randomId, systemClock } from '../../src/clock.js';
import type { StoreConfig } from '../../src/config/index.js';
import { openStore } from '../../src/store/index.js';

const args = process.argv.slice(2);
const JOBS = Number(args[args.indexOf('--jobs') + 1] || 20000) || 20000;
const PG_URL =
  process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const WORKER = join(process.cwd(), 'scripts', 'bench', 'queue-worker.ts');

type WorkerResult = {
  owner: string;
  start: number;
  end: number;
  latencies: number[];
  claimed: number[];
  acked: number[];
  refused: number;
};

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function runWorkers(config: StoreConfig, count: number, batch: number): Promise<WorkerResult[]> {
  const children = Array.from({ length: count }, (_, i) =>
    spawn(process.execPath, ['--import', 'tsx', WORKER], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        STORE_CONFIG: JSON.stringify(config),
        WORKER_INDEX: String(i),
        BATCH: String(batch),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const outputs = children.map((child) => {
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    return {
      ready: new Promise<void>((resolve) => {
        const check = () => (out.includes('ready\n') ? resolve() : setTimeout(check, 10));
        check();
      }),
      done: new Promise<WorkerResult>((resolve, reject) =>
        child.on('exit', (code) => {
          const line = out.split('\n').find((l) => l.startsWith('{'));
          if (code !== 0 || !line) reject(new Error(`bench worker exited with ${code}`));
          else resolve(JSON.parse(line) as WorkerResult);
        }),
      ),
    };
  });
  await Promise.all(outputs.map((o) => o.ready));
  for (const child of children) child.stdin!.end('go\n');
  return Promise.all(outputs.map((o) => o.done));
}

type Run = { line: string; rate: number; faults: number };

async function bench(dialect: 'sqlite' | 'pg', workers: number, batch: number): Promise<Run> {
  let config: StoreConfig;
  let cleanup: () => Promise<void>;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-qbench-'));
    config = { client: 'sqlite', filename: join(dir, 'queue.sqlite') };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const schema = `qbench_${randomBytes(4).toString('hex')}`;
    config = { client: 'pg', connectionString: PG_URL, poolMax: 4, schema };
    cleanup = async () => {
      const k = knexFactory({ client: 'pg', connection: PG_URL });
      await k.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]);
      await k.destroy();
    };
  }
  const store = await openStore(config, { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 });
  try {
    const t0 = performance.now();
    const chunk = 500;
    for (let i = 0; i < JOBS; i += chunk) {
      const n = Math.min(chunk, JOBS - i);
      await store.jobs.enqueueMany(
        Array.from({ length: n }, (_, j) => ({ queue: 'bench', kind: 'bench', payload: { i: i + j } })),
      );
    }
    const enqueueRate = JOBS / ((performance.now() - t0) / 1000);
    const results = await runWorkers(config, workers, batch);
    const start = Math.min(...results.map((r) => r.start));
    const end = Math.max(...results.map((r) => r.end));
    const seconds = (end - start) / 1000;
    const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const claimedCount = new Map<number, number>();
    for (const r of results)
      for (const id of r.claimed) claimedCount.set(id, (claimedCount.get(id) ?? 0) + 1);
    const ackedCount = new Map<number, number>();
    for (const r of results) for (const id of r.acked) ackedCount.set(id, (ackedCount.get(id) ?? 0) + 1);
    const doubleClaims =
      [...claimedCount.values()].filter((n) => n > 1).length +
      [...ackedCount.values()].filter((n) => n > 1).length;
    const done = Number(
      (await store.db.knex('jobs').where({ queue: 'bench', status: 'done' }).count({ n: '*' }))[0]!.n,
    );
    const lost = JOBS - done;
    const acked = results.reduce((s, r) => s + r.acked.length, 0);
    const line =
      `${dialect.padEnd(6)} ${String(workers).padStart(2)} worker${workers > 1 ? 's' : ' '}  ` +
      `${batch === 1 ? 'single ' : `batch ${String(batch).padEnd(2)}`}  ` +
      `${JOBS} jobs  ${seconds.toFixed(2).padStart(6)} s  ${(acked / seconds).toFixed(0).padStart(6)} jobs/s  ` +
      `claim p50 ${percentile(latencies, 50).toFixed(2)} ms  p99 ${percentile(latencies, 99).toFixed(2)} ms  ` +
      `double claims ${doubleClaims}  lost ${lost}  (enqueue ${enqueueRate.toFixed(0)} jobs/s)`;
    return { line, rate: acked / seconds, faults: doubleClaims + lost };
  } finally {
    await store.close();
    await cleanup();
  }
}

async function pgReachable(): Promise<boolean> {
  const k = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  try {
    await k.raw('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await k.destroy();
  }
}

console.log(`queue benchmark: enqueue → claim → ack, fenced leases, ${JOBS} jobs per run, worker processes`);
const BATCH = 50;
const runs: Array<Run & { dialect: string; workers: number; batch: number }> = [];
const dialects: Array<'sqlite' | 'pg'> = ['sqlite'];
if (await pgReachable()) dialects.push('pg');
else console.log(`pg     skipped: ${PG_URL} is not reachable`);
for (const dialect of dialects)
  for (const batch of [1, BATCH])
    for (const workers of [1, 4]) {
      const run = await bench(dialect, workers, batch);
      console.log(run.line);
      runs.push({ ...run, dialect, workers, batch });
    }
// The target: the scaled-out setup (PostgreSQL, 4 worker processes, batched claims) at 5,000 jobs/s or
// more, and no run with a double claim or a lost job.
const TARGET = 5000;
const scaled = runs.find((r) => r.dialect === dialects.at(-1) && r.workers === 4 && r.batch === BATCH)!;
const faults = runs.reduce((n, r) => n + r.faults, 0);
const met = scaled.rate >= TARGET && faults === 0;
console.log(
  `bench:queue: ${scaled.rate.toFixed(0)} jobs/s on ${scaled.dialect === 'pg' ? 'PostgreSQL' : 'SQLite'} with 4 workers, batched; ${faults} double claims or lost jobs in all runs (target at least ${TARGET} jobs/s, none): ${met ? 'met' : 'missed'}`,
);
