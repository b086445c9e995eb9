/**
 * `npm run native:dev`: the edge worker in workerd through Miniflare on PORT (default 8788; only
 * /health and the webhook), KV/R2/D1/queue/Durable Object persisted under data/native/, and the review
 * container as a local process (src/native/container/main.ts, when that branch is present) on
 * VERDICT_CONTAINER_URL (default http://127.0.0.1:8080).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { buildWorker } from './native-build.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const port = Number(env.PORT ?? 8788);
const containerUrl = env.VERDICT_CONTAINER_URL ?? 'http://127.0.0.1:8080';
const pick = (names: string[]) =>
  Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n] as string]));

const scriptPath = await buildWorker();
const mf = new Miniflare({
  name: 'verdict',
  modules: true,
  scriptPath,
  compatibilityDate: '2025-09-01',
  compatibilityFlags: ['nodejs_compat'],
  host: '127.0.0.1',
  port,
  kvNamespaces: ['DELIVERIES'],
  r2Buckets: ['PAYLOADS'],
  d1Databases: ['DB'],
  queueProducers: { REVIEW_QUEUE: { queueName: 'verdict-reviews' } },
  queueConsumers: { 'verdict-reviews': { maxBatchSize: 1, maxBatchTimeout: 5, maxRetries: 8 } },
  durableObjects: { LEASES: 'DispatchLease' },
  defaultPersistRoot: `${root}data/native`,
  bindings: {
    VERDICT_CONTAINER_URL: containerUrl,
    ...pick([
      'GITHUB_WEBHOOK_SECRET',
      'APP_ID',
      'PRIVATE_KEY',
      'GHE_HOST',
      'GITHUB_API_URL',
      'DEDUPE_TTL_SECONDS',
      'MAX_ATTEMPTS',
      'LEASE_MS',
      'VERDICT_PUBLISH_MODE',
      'VERDICT_BOT_HANDLES',
    ]),
  },
});
const url = await mf.ready;
console.log(JSON.stringify({ event: 'native-dev-ready', url: url.href, containerUrl }));

let container: ChildProcess | null = null;
const containerMain = `${root}src/native/container/main.ts`;
if (existsSync(containerMain) && !env.VERDICT_CONTAINER_URL) {
  container = spawn(process.execPath, ['--import', 'tsx', containerMain], { stdio: 'inherit', env });
  console.log(JSON.stringify({ event: 'native-dev-container', pid: container.pid }));
} else if (!existsSync(containerMain)) {
  console.log(
    JSON.stringify({ event: 'native-dev-container', note: 'src/native/container/main.ts is absent' }),
  );
}

const stop = async () => {
  container?.kill('SIGTERM');
  await mf.dispose();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
