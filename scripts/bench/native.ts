/**
 * Native runtime benchmark (issue 38). Two parts, on this machine, offline:
 *
 * 1. Ingress: signed `pull_request.opened` deliveries (a new delivery id each) at BENCH_CONNECTIONS (50)
 *    for BENCH_SECONDS (10) against the edge worker in workerd (Miniflare), whose queue is taken by a
 *    counting consumer (D1, one row per delivery id with the times it was received); then the same load
 *    against the Node runtime (`src/main.ts`, ingest only, SQLite) in the same run. Every acknowledged
 *    delivery must be enqueued exactly once.
 * 2. One review end to end: a webhook to the worker (queue, consumer, lease, D1 state) dispatched to the
 *    review container (in this process) and published to a local fake GitHub, the model a local fake
 *    OpenAI-compatible server answering after BENCH_MODEL_DELAY_MS (1000). Prints the wall time over the
 *    model's delay.
 *
 *   npm run bench:native
 */
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { createLogger } from '../../src/logger.js';
import { nativeConfig } from '../../src/native/container/env.js';
import { internalClient, type InternalClient } from '../../src/native/container/internal.js';
import { ContainerService } from '../../src/native/container/service.js';
import { FakeGitHub } from '../../test/helpers/fake-github.js';
import {
  CONFIRM_ALL,
  FILES,
  HEAD,
  REPO,
  completion,
  isVerification,
  review,
  verificationCandidates,
} from '../../test/helpers/review-harness.js';
import { buildWorker, nativeWorkerOptions, QUEUE_CONSUMER, REVIEW_QUEUE_NAME } from '../native-build.js';
import { relay } from '../native-relay.js';
import { body, payload, signed, webhookLoad } from './webhook-load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const MODEL_DELAY_MS = Number(process.env.BENCH_MODEL_DELAY_MS ?? 1000);
const SECRET = 'bench-native-secret';
const QUEUE = REVIEW_QUEUE_NAME;

/** Counts every message of the review queue by delivery id (the benchmark's consumer, not the product's). */
const COUNTER = `export default {
  async queue(batch, env) {
    await env.SEEN.prepare('CREATE TABLE IF NOT EXISTS seen (id TEXT PRIMARY KEY, n INTEGER NOT NULL)').run();
    await env.SEEN.batch(batch.messages.map((m) =>
      env.SEEN.prepare('INSERT INTO seen (id, n) VALUES (?, 1) ON CONFLICT(id) DO UPDATE SET n = n + 1').bind(m.body.deliveryId)));
    for (const m of batch.messages) m.ack();
  },
};`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A 2 s warm-up load on `target` labelled `warm`, then the measured load of SECONDS labelled `label`. */
async function warmedLoad(target: string, warm: string, label: string) {
  await webhookLoad(target, { label: warm, seconds: 2, connections: CONNECTIONS, secret: SECRET });
  return webhookLoad(target, { label, seconds: SECONDS, connections: CONNECTIONS, secret: SECRET });
}

async function ingress(scriptPath: string): Promise<{ acknowledged: number; once: boolean; rps: number }> {
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    workers: [
      {
        ...nativeWorkerOptions(scriptPath),
        bindings: { GITHUB_WEBHOOK_SECRET: SECRET },
      },
      {
        name: 'counter',
        modules: true,
        script: COUNTER,
        d1Databases: ['SEEN'],
        queueConsumers: { [QUEUE]: { maxBatchSize: 100, maxBatchTimeout: 1 } },
      },
    ],
  });
  try {
    const url = await mf.ready;
    const target = new URL('/github/webhooks', url).href;
    const load = await warmedLoad(target, 'warm', 'native');
    // Acknowledged over the whole run (warm-up included): every 202 is one delivery to find once.
    const seen: any = await mf.getD1Database('SEEN', 'counter');
    const db: any = await mf.getD1Database('DB', 'verdict');
    const acked = await db
      .prepare("SELECT count(*) AS n FROM native_deliveries WHERE outcome = 'enqueued'")
      .first();
    let counted = { n: 0, dup: 0 };
    for (let i = 0; i < 600; i++) {
      counted = await seen
        .prepare('SELECT count(*) AS n, coalesce(sum(n > 1), 0) AS dup FROM seen')
        .first()
        .catch(() => ({ n: 0, dup: 0 }));
      if (counted.n >= acked.n) break;
      await sleep(100);
    }
    await sleep(2000); // a late duplicate would show now
    counted = await seen.prepare('SELECT count(*) AS n, coalesce(sum(n > 1), 0) AS dup FROM seen').first();
    console.log(
      `native worker: ${fmt(load.requests.average)} webhooks/s, p99 ${load.latency.p99} ms, 2xx ${load['2xx']}, non-2xx ${load.non2xx}, errors ${load.errors}`,
    );
    console.log(
      `queue: ${acked.n} deliveries recorded as enqueued, ${counted.n} received by the consumer, ${counted.dup} more than once`,
    );
    const once = load.non2xx === 0 && counted.n === acked.n && counted.dup === 0;
    return { acknowledged: acked.n, once, rps: load.requests.average };
  } finally {
    await mf.dispose();
  }
}

/** The Node runtime, ingest only, under the same load (for the figure beside the worker's). */
async function nodeRuntime(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-native-'));
  const port = 8797;
  const child = spawn(join(process.cwd(), 'node_modules', '.bin', 'tsx'), ['src/main.ts'], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      VERDICT_DB_PATH: join(dir, 'verdict.sqlite'),
      GITHUB_WEBHOOK_SECRET: SECRET,
      LOG_LEVEL: 'error',
      VERDICT_WORKER_INLINE: '0',
      APP_ID: '',
      PRIVATE_KEY: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (let i = 0; i < 300; i++) {
      if (
        await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await sleep(100);
    }
    const target = `http://127.0.0.1:${port}/github/webhooks`;
    const load = await warmedLoad(target, 'node-warm', 'node');
    console.log(
      `node runtime (ingest only, SQLite): ${fmt(load.requests.average)} webhooks/s, p99 ${load.latency.p99} ms, non-2xx ${load.non2xx}`,
    );
    return load.requests.average;
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fake OpenAI-compatible model answering every call after MODEL_DELAY_MS (one finding, confirmed). */
function delayedModel(): { server: Server; calls: () => number } {
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      calls++;
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      await sleep(MODEL_DELAY_MS);
      const finding = {
        severity: 'high',
        category: 'correctness',
        path: 'src/cache.ts',
        line: 2,
        title: 'Eviction deletes live entries',
        body: 'evict() deletes without checking expiry.',
        contextIds: [],
      };
      const answer = isVerification(request)
        ? CONFIRM_ALL(verificationCandidates(request), request)
        : review({ findings: [finding] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(JSON.stringify(answer))));
    });
  });
  return { server, calls: () => calls };
}

async function endToEnd(scriptPath: string): Promise<{ published: boolean; wallMs: number; calls: number }> {
  const model = delayedModel();
  await new Promise<void>((r) => model.server.listen(0, '127.0.0.1', r));
  const modelUrl = `http://127.0.0.1:${(model.server.address() as AddressInfo).port}/v1`;
  const github = new FakeGitHub({
    repo: REPO,
    number: 7,
    head: HEAD,
    files: FILES,
    compare: {},
    contents: {},
  });
  await github.listen();
  const token = 'bench-internal-token';
  let workerUrl = '';
  const internal: InternalClient = (...args) => internalClient(workerUrl, token)(...args);
  const env = {
    VERDICT_MODEL_PROVIDER: 'openai',
    VERDICT_MODEL: 'gpt-4o-mini',
    OPENAI_API_KEY: 'sk-bench',
    VERDICT_OPENAI_BASE_URL: modelUrl,
    GHE_HOST: github.host,
    GHE_PROTOCOL: 'http',
    VERDICT_GITHUB_RETRIES: '0',
    VERDICT_PUBLISH_MODE: 'live',
  };
  const log = createLogger('error', undefined, 'json');
  const container = new ContainerService({
    config: nativeConfig(env),
    log,
    internal,
    publishMode: 'live',
    maxAttempts: 8,
  });
  const containerPort = await container.listen(0, '127.0.0.1');
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    ...nativeWorkerOptions(scriptPath),
    queueConsumers: { [QUEUE]: QUEUE_CONSUMER },
    outboundService: relay as never,
    bindings: {
      GITHUB_WEBHOOK_SECRET: SECRET,
      APP_ID: '4242',
      PRIVATE_KEY: privateKey,
      GITHUB_API_URL: `http://${github.host}/api/v3`,
      VERDICT_CONTAINER_URL: `http://127.0.0.1:${containerPort}`,
      VERDICT_PUBLISH_MODE: 'live',
      VERDICT_INTERNAL_DEV_TOKEN: token,
    },
  });
  try {
    workerUrl = (await mf.ready).href;
    const pr = structuredClone(payload);
    pr.installation = { id: 77 };
    Object.assign(pr.repository, { full_name: REPO, name: 'web' });
    pr.repository.owner.login = 'acme';
    pr.number = 7;
    pr.pull_request.number = 7;
    pr.pull_request.head.sha = HEAD;
    const raw = JSON.stringify(pr);
    const started = performance.now();
    const res = await fetch(new URL('/github/webhooks', workerUrl), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-delivery': 'bench-native-review',
        'x-github-event': 'pull_request',
        'x-hub-signature-256': signed(SECRET, raw),
      },
      body: raw,
    });
    if (res.status !== 202) throw new Error(`the webhook was answered ${res.status}`);
    let published = false;
    while (!published && performance.now() - started < 120_000) {
      published = github.submittedReviews().length === 1;
      if (!published) await sleep(10);
    }
    const wallMs = performance.now() - started;
    return { published, wallMs, calls: model.calls() };
  } finally {
    await mf.dispose();
    await container.stop();
    await github.close();
    model.server.closeAllConnections();
    await new Promise((r) => model.server.close(r));
  }
}

async function main(): Promise<void> {
  console.log(
    `native benchmark: ${CONNECTIONS} connections, ${SECONDS} s, payload ${body.length} bytes; review with the model answering after ${MODEL_DELAY_MS} ms`,
  );
  const scriptPath = await buildWorker();
  const worker = await ingress(scriptPath);
  const node = await nodeRuntime();
  console.log(
    `native worker / node runtime: ${(worker.rps / node).toFixed(2)}x (both on this machine, one after the other)`,
  );
  const e2e = await endToEnd(scriptPath);
  const ratio = e2e.wallMs / MODEL_DELAY_MS;
  console.log(
    `review end to end: ${e2e.published ? 'published' : 'NOT published'} in ${(e2e.wallMs / 1000).toFixed(2)} s, ${e2e.calls} model calls of ${MODEL_DELAY_MS} ms each; wall time ${ratio.toFixed(2)}x the model's delay`,
  );
  const met = worker.once && e2e.published;
  console.log(
    `bench:native: ${fmt(worker.acknowledged)} deliveries each enqueued ${worker.once ? 'exactly once' : 'NOT exactly once'} at ${fmt(worker.rps)} webhooks/s (Node runtime ${fmt(node)}), review ${e2e.published ? 'published' : 'not published'} in ${ratio.toFixed(2)}x the model's delay (target every acknowledged delivery enqueued exactly once, the review published): ${met ? 'met' : 'missed'}`,
  );
  process.exit(met ? 0 : 1);
}

await main();
