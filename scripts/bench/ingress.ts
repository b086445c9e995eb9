/**
 * Ingress benchmark: signed `pull_request.opened` webhooks (from @octokit/webhooks-examples, a unique
 * delivery id each) at 50 connections with autocannon, against Verdict on SQLite and against a bare
 * Probot app, one after the other in the same run. Prints webhooks/s and p99 for both and their ratio,
 * and checks that Verdict stored every delivery it acknowledged.
 *
 *   npm run bench:ingress            (BENCH_SECONDS=10 BENCH_CONNECTIONS=50 by default)
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
  okWithWarmup: number;
};

async function load(port: number, label: string): Promise<Result> {
  let counter = 0;
  const run = (duration: number) =>
    autocannon({
      url: `http://127.0.0.1:${port}/github/webhooks`,
      connections: CONNECTIONS,
      duration,
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
  const warm = await run(2); // warm-up
  const r = await run(SECONDS);
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    p50: r.latency.p50,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    okWithWarmup: warm['2xx'] + r['2xx'],
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-'));
  const db = join(dir, 'verdict.sqlite');
  const verdictPort = 8791;
  const probotPort = 8792;
  console.log(
    `ingress benchmark: ${CONNECTIONS} connections, ${SECONDS} s each, payload ${body.length} bytes`,
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
  await waitForPort(verdictPort, '/health');
  const v = await load(verdictPort, 'verdict');
  await stopChild(verdict);

  const k = knexFactory({ client: 'sqlite3', connection: { filename: db }, useNullAsDefault: true });
  const stored = Number((await k('deliveries').count({ n: '*' }))[0]!.n);
  const jobs = Number((await k('jobs').count({ n: '*' }))[0]!.n);
  await k.destroy();

  const bare = startChild('scripts/bench/bare-probot.ts', {
    PORT: String(probotPort),
    WEBHOOK_SECRET: SECRET,
  });
  await waitForPort(probotPort, '/');
  const p = await load(probotPort, 'probot');
  await stopChild(bare);
  rmSync(dir, { recursive: true, force: true });

  const row = (name: string, r: Result) =>
    `${name.padEnd(22)} ${r.rps.toFixed(0).padStart(8)} webhooks/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   2xx ${r.ok}   non-2xx ${r.non2xx}   errors ${r.errors}`;
  console.log(row('verdict (SQLite)', v));
  console.log(row('bare probot', p));
  console.log(`ratio verdict / bare probot: ${(v.rps / p.rps).toFixed(2)}x`);
  // Requests still in flight when autocannon stops may be stored without their answer being counted, so
  // stored >= acknowledged; every stored delivery must have its job.
  const durable = stored >= v.okWithWarmup && jobs === stored;
  console.log(
    `durability: ${v.okWithWarmup} deliveries acknowledged (warm-up included), ${stored} stored, ${jobs} jobs enqueued: ` +
      (durable ? 'every acknowledged delivery is stored, every stored one enqueued' : 'MISMATCH'),
  );
  if (!durable) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
