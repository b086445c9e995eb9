/**
 * `npm run native:dev`: the native runtime on this machine. The edge worker runs in workerd through
 * Miniflare on PORT (default 8788; public: /health and the webhook only), with KV, R2, D1, the queue (its
 * consumer included) and the lease Durable Object, persisted under
 * VERDICT_NATIVE_DATA (default data/native/). The review container (no Docker here) runs as a local
 * process on VERDICT_CONTAINER_PORT (default 8080); its calls to `state.internal` and `broker.internal`
 * go to the worker's origin with a token made for this run (VERDICT_INTERNAL_DEV_TOKEN, never set on
 * Cloudflare). With VERDICT_CONTAINER_URL set, no container is started and that one is used. The
 * validation sandbox runs as a local process on VERDICT_SANDBOX_PORT (default 8081; VERDICT_SANDBOX_URL:
 * use that one instead) and the worker hands it the container's `sandbox.internal` jobs; the container
 * validates through it unless VERDICT_CF_SANDBOX_ENABLED is set to something else than 1. The cron
 * triggers of wrangler.jsonc fire on their schedules (UTC) through the worker's `scheduled` handler.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Cron } from 'croner';
import { Miniflare } from 'miniflare';
import { CRON_JOBS } from '../src/native/worker/scheduled.js';
import { buildWorker, nativeWorkerOptions, QUEUE_CONSUMER, REVIEW_QUEUE_NAME } from './native-build.js';
import { relay } from './native-relay.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const port = Number(env.PORT ?? 8788);
const containerPort = Number(env.VERDICT_CONTAINER_PORT ?? 8080);
const containerUrl = env.VERDICT_CONTAINER_URL ?? `http://127.0.0.1:${containerPort}`;
const sandboxPort = Number(env.VERDICT_SANDBOX_PORT ?? 8081);
const sandboxUrl = env.VERDICT_SANDBOX_URL ?? `http://127.0.0.1:${sandboxPort}`;
const devToken = randomBytes(24).toString('hex');
let stopping = false;
const pick = (names: string[]) =>
  Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n] as string]));

const scriptPath = await buildWorker();
const mf = new Miniflare({
  ...nativeWorkerOptions(scriptPath),
  host: '127.0.0.1',
  port,
  queueConsumers: { [REVIEW_QUEUE_NAME]: QUEUE_CONSUMER },
  outboundService: relay as never,
  defaultPersistRoot: env.VERDICT_NATIVE_DATA ?? `${root}data/native`,
  bindings: {
    VERDICT_CONTAINER_URL: containerUrl,
    VERDICT_SANDBOX_URL: sandboxUrl,
    VERDICT_INTERNAL_DEV_TOKEN: devToken,
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
      'VERDICT_BRIDGE_AUTHORITY',
      'VERDICT_WATCHDOG_ALERT_URL',
      'VERDICT_TELEGRAM_BOT_TOKEN',
      'VERDICT_TELEGRAM_API_URL',
    ]),
  },
});
const url = await mf.ready;
type Scheduler = { scheduled(options: { cron: string; scheduledTime: Date }): Promise<unknown> };
const worker = (await mf.getWorker()) as unknown as Scheduler;
const crons = Object.keys(CRON_JOBS).map(
  (expr) =>
    new Cron(expr, { timezone: 'UTC' }, async (self: Cron) => {
      const scheduledTime = self.currentRun() ?? new Date();
      await worker.scheduled({ cron: expr, scheduledTime }).catch((err: unknown) => {
        console.log(JSON.stringify({ event: 'native-dev-cron-failed', cron: expr, err: String(err) }));
      });
    }),
);

/** A local process of the runtime (`entry` under src/native/), stopped with the dev server. */
function startLocal(name: string, entry: string, extra: Record<string, string>): ChildProcess {
  // The shell's environment, so that local fakes (provider base URLs) work; on Cloudflare the container
  // gets the allow-list of review-engine 8 only (docs/native.md).
  const child = spawn(process.execPath, ['--import', 'tsx', `${root}src/native/${entry}`], {
    stdio: 'inherit',
    env: { ...env, ...extra },
  });
  child.once('exit', (code) => {
    console.log(JSON.stringify({ event: `native-dev-${name}-exited`, code }));
    if (!stopping) void stop(1);
  });
  return child;
}

const sandbox = env.VERDICT_SANDBOX_URL
  ? null
  : startLocal('sandbox', 'sandbox/main.ts', { PORT: String(sandboxPort) });
const container = env.VERDICT_CONTAINER_URL
  ? null
  : startLocal('container', 'container/main.ts', {
      PORT: String(containerPort),
      VERDICT_INTERNAL_ORIGIN: url.origin,
      VERDICT_INTERNAL_TOKEN: devToken,
      VERDICT_CF_SANDBOX_ENABLED: env.VERDICT_CF_SANDBOX_ENABLED ?? '1',
    });
if (sandbox) await up('sandbox', sandboxUrl);
if (container) await up('container', containerUrl);
console.log(
  JSON.stringify({
    event: 'native-dev-ready',
    url: url.href,
    containerUrl,
    containerPid: container?.pid,
    sandboxUrl,
    sandboxPid: sandbox?.pid,
  }),
);

/** Ready only once the process answers its health check (a review dispatched before would fail). */
async function up(name: string, base: string): Promise<void> {
  for (let i = 0; i < 600 && !stopping; i++) {
    const ok = await fetch(`${base}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(JSON.stringify({ event: `native-dev-${name}-not-ready`, url: base }));
  await stop(1);
}

async function stop(code = 0): Promise<void> {
  stopping = true;
  for (const cron of crons) cron.stop();
  container?.kill('SIGTERM');
  sandbox?.kill('SIGTERM');
  await mf.dispose();
  process.exit(code);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
