/**
 * Ingress benchmark: signed `pull_request.opened` webhooks (from @octokit/webhooks-examples, a unique
 * delivery id each) at 50 connections with autocannon, against Verdict on SQLite and against a bare
 * Probot app. Both servers run for the whole benchmark and are loaded in turns (Verdict, then Probot,
 * BENCH_ROUNDS times), so a change of the machine's speed during the run (frequent on a shared 2-core
 * machine) hits both sides alike. Prints each round, then the median webhooks/s and p99 of both and
 * the ratio of the medians, and checks that Verdict stored every delivery it acknowledged.
 *
 *   npm run bench:ingress   (BENCH_SECONDS=10 BENCH_ROUNDS=3 BENCH_CONNECTIONS=50 by default)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import knexFactory from 'knex';

const require = createRequire(import.meta.url);
const examples: Array<{ name: string; examples: any[] }> = require('@octokit/webhooks-examples');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECRET = 'bench-secret';
const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');

const payload = examples.find((e) => e.name === 'pull_request')!.examples.find((p) => p.action === 'opened');
const body = JSON.stringify(payload);
const signature = 'sha256=' + createHmac('sha256', SECRET).update(body).digest('hex');

async function waitForPort(port: number, path: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}${path}`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server on ${port} did not start`);
}

function startChild(script: string, env: Record<string, string>): ChildProcess {
  const child = spawn(TSX, [script], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

type Result = {
  rps: number;
  p99: number;
  p50: number;
  ok: number;
  non2xx: number;
  errors: number;
};

let counter = 0;

/** One load of `seconds` on the server at `port`; every request has a new delivery id. */
function run(port: number, label: string, seconds: number) {
  return autocannon({
    url: `http://127.0.0.1:${port}/github/webhooks`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (req: any) => {
          counter++;
          req.headers = {
            'content-type': 'application/json',
            'x-github-event': 'pull_request',
            'x-hub-signature-256': signature,
            'x-github-delivery': `${label}-${process.pid}-${counter}`,
          };
          req.body = body;
          return req;
        },
      },
    ],
  });
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-'));
  const db = join(dir, 'verdict.sqlite');
  const verdictPort = 8791;
  const probotPort = 8792;
  console.log(
    `ingress benchmark: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s each side, payload ${body.length} bytes`,
  );

  const verdict = startChild('src/main.ts', {
    PORT: String(verdictPort),
    HOST: '127.0.0.1',
    VERDICT_DB_PATH: db,
    GITHUB_WEBHOOK_SECRET: SECRET,
    LOG_LEVEL: 'warn',
    VERDICT_WORKER_INLINE: '0',
    APP_ID: '',
    PRIVATE_KEY: '',
  });
  const bare = startChild('scripts/bench/bare-probot.ts', {
    PORT: String(probotPort),
    WEBHOOK_SECRET: SECRET,
  });
  await waitForPort(verdictPort, '/health');
  await waitForPort(probotPort, '/');

  // Warm-up of both, then the rounds.
  let acknowledged = (await run(verdictPort, 'verdict', 2))['2xx'];
  await run(probotPort, 'probot', 2);
  const rounds: Array<{ v: Result; p: Result }> = [];
  const result = (r: autocannon.Result): Result => ({
    rps: r.requests.average,
    p99: r.latency.p99,
    p50: r.latency.p50,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
  });
  const row = (name: string, r: Result) =>
    `${name.padEnd(22)} ${r.rps.toFixed(0).padStart(8)} webhooks/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   2xx ${r.ok}   non-2xx ${r.non2xx}   errors ${r.errors}`;
  for (let i = 1; i <= ROUNDS; i++) {
    const v = result(await run(verdictPort, 'verdict', SECONDS));
    acknowledged += v.ok;
    const p = result(await run(probotPort, 'probot', SECONDS));
    rounds.push({ v, p });
    console.log(row(`round ${i}: verdict`, v));
    console.log(row(`round ${i}: bare probot`, p));
    console.log(`round ${i}: ratio ${(v.rps / p.rps).toFixed(2)}x`);
  }
  await stopChild(verdict);
  await stopChild(bare);

  const k = knexFactory({ client: 'sqlite3', connection: { filename: db }, useNullAsDefault: true });
  const stored = Number((await k('deliveries').count({ n: '*' }))[0]!.n);
  const jobs = Number((await k('jobs').count({ n: '*' }))[0]!.n);
  await k.destroy();
  rmSync(dir, { recursive: true, force: true });

  const summary = (side: 'v' | 'p') => ({
    rps: median(rounds.map((r) => r[side].rps)),
    p99: median(rounds.map((r) => r[side].p99)),
  });
  const v = summary('v');
  const p = summary('p');
  console.log(
    `median verdict (SQLite)   ${v.rps.toFixed(0).padStart(8)} webhooks/s   p99 ${String(v.p99).padStart(4)} ms`,
  );
  console.log(
    `median bare probot        ${p.rps.toFixed(0).padStart(8)} webhooks/s   p99 ${String(p.p99).padStart(4)} ms`,
  );
  console.log(
    `ratio verdict / bare probot: ${(v.rps / p.rps).toFixed(2)}x (median of rounds: ${median(rounds.map((r) => r.v.rps / r.p.rps)).toFixed(2)}x)`,
  );
  // Requests still in flight when autocannon stops may be stored without their answer being counted, so
  // stored >= acknowledged; every stored delivery must have its job.
  const durable = stored >= acknowledged && jobs === stored;
  console.log(
    `durability: ${acknowledged} deliveries acknowledged (warm-up included), ${stored} stored, ${jobs} jobs enqueued: ` +
      (durable ? 'every acknowledged delivery is stored, every stored one enqueued' : 'MISMATCH'),
  );
  if (!durable) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
