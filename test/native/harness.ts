/** Runs the bundled native edge worker in workerd through Miniflare, with a queue collector for tests. */
import { Miniflare, type WorkerOptions } from 'miniflare';
import {
  buildWorker,
  nativeWorkerOptions,
  QUEUE_CONSUMER,
  REVIEW_QUEUE_NAME,
} from '../../scripts/native-build.js';
import { INTERNAL_HOST_HEADER, INTERNAL_TOKEN_HEADER } from '../../src/native/protocol.js';
import { sign, TEST_SECRET } from '../helpers/webhooks.js';

let bundle: Promise<string> | null = null;
export const workerBundle = (): Promise<string> => (bundle ??= buildWorker());

export const QUEUE = REVIEW_QUEUE_NAME;

/** A second worker that stores every message of the review queue in its KV (`seen`), one key per delivery. */
const COLLECTOR = `export default {
  async queue(batch, env) {
    for (const m of batch.messages) {
      await env.SEEN.put(m.body.deliveryId + ':' + m.id, JSON.stringify(m.body));
      m.ack();
    }
  },
};`;

type PostOptions = { id?: string; signature?: string; raw?: string; headers?: Record<string, string> };
type Posted = { status: number; body: any };
export type Harness = {
  mf: Miniflare;
  post: (event: string, payload: unknown, opts?: PostOptions) => Promise<Posted>;
  seen: () => Promise<any[]>;
  /** A KV namespace, R2 bucket or D1 database of the edge worker (Miniflare's binding proxies). */
  kv: (name?: string) => Promise<any>;
  r2: () => Promise<any>;
  d1: () => Promise<any>;
  close: () => Promise<void>;
};

async function post(mf: Miniflare, event: string, payload: unknown, opts: PostOptions = {}): Promise<Posted> {
  const raw = opts.raw ?? JSON.stringify(payload);
  const res = await mf.dispatchFetch('http://verdict.local/github/webhooks', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-delivery': opts.id ?? crypto.randomUUID(),
      'x-github-event': event,
      'x-hub-signature-256': opts.signature ?? sign(raw),
      ...opts.headers,
    },
    body: raw,
  });
  return { status: res.status, body: await res.json() };
}

export type HarnessOptions = {
  r2?: boolean;
  bindings?: Record<string, string>;
  /** The worker's own consumer takes the queue (default: a collector worker that only stores messages). */
  consumer?: boolean;
  container?: (request: Request) => Promise<Response> | Response;
  /** The validation sandbox behind the `SANDBOX` service binding. */
  sandbox?: (request: Request) => Promise<Response> | Response;
  github?: (request: Request) => Promise<Response> | Response;
  /** A lease Durable Object of the test's own (a module script exporting `className`) instead of the worker's. */
  leases?: { className: string; script: string };
  /** A Durable Object class of the test's own bound as REVIEW_CONTAINERS (Cloudflare's container namespace). */
  containers?: { className: string; script: string };
  /** A directory the D1 database is kept in, so that a later harness opens the same database. */
  d1Persist?: string;
};

export async function startIngress(options: HarnessOptions = {}): Promise<Harness> {
  const scriptPath = await workerBundle();
  const main: WorkerOptions = {
    ...nativeWorkerOptions(scriptPath),
    r2Buckets: options.r2 === false ? [] : ['PAYLOADS'],
    durableObjects: {
      LEASES: options.leases
        ? { className: options.leases.className, scriptName: 'leases' }
        : 'DispatchLease',
      ...(options.containers
        ? { REVIEW_CONTAINERS: { className: options.containers.className, scriptName: 'containers' } }
        : {}),
    },
    ...(options.consumer ? { queueConsumers: { [QUEUE]: { ...QUEUE_CONSUMER, retryDelay: 0 } } } : {}),
    serviceBindings: {
      ...(options.container ? { CONTAINER: options.container as any } : {}),
      ...(options.sandbox ? { SANDBOX: options.sandbox as any } : {}),
    },
    ...(options.github ? { outboundService: options.github as any } : {}),
    bindings: { GITHUB_WEBHOOK_SECRET: TEST_SECRET, ...options.bindings },
  };
  const collector: WorkerOptions = {
    name: 'collector',
    modules: true,
    script: COLLECTOR,
    kvNamespaces: ['SEEN'],
    queueConsumers: { [QUEUE]: { maxBatchSize: 1, maxBatchTimeout: 0 } },
  };
  const leases: WorkerOptions[] = options.leases
    ? [{ name: 'leases', modules: true, script: options.leases.script }]
    : [];
  if (options.containers)
    leases.push({ name: 'containers', modules: true, script: options.containers.script });
  const mf = new Miniflare({
    workers: [main, ...(options.consumer ? [] : [collector]), ...leases],
    ...(options.d1Persist ? { d1Persist: options.d1Persist } : {}),
  });
  await mf.ready;
  const seen = async (): Promise<any[]> => {
    if (options.consumer) return [];
    const kv: any = await mf.getKVNamespace('SEEN', 'collector');
    const { keys } = await kv.list();
    return Promise.all(keys.map(async (k: { name: string }) => JSON.parse((await kv.get(k.name))!)));
  };
  return {
    mf,
    post: (event, payload, opts) => post(mf, event, payload, opts),
    seen,
    kv: async (name = 'DELIVERIES') => (await mf.getKVNamespace(name, 'verdict')) as any,
    r2: async () => (await mf.getR2Bucket('PAYLOADS', 'verdict')) as any,
    d1: async () => (await mf.getD1Database('DB', 'verdict')) as any,
    close: () => mf.dispose(),
  };
}

/** Polls until `check` holds (queue delivery is asynchronous). */
export async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, tries = 200): Promise<T> {
  let value = await read();
  for (let i = 0; i < tries && !check(value); i++) {
    await new Promise((r) => setTimeout(r, 25));
    value = await read();
  }
  return value;
}

/**
 * Queues a command in D1 (the native runtime has no API for it), fires the bridge's minute and answers the
 * command's row afterwards (`status`, `error`, `result`).
 */
export async function runCommand(h: Harness, kind: string, payload: unknown): Promise<any> {
  const db = await h.d1();
  const id = `cmd-${crypto.randomUUID()}`;
  await db
    .prepare(
      "INSERT INTO native_commands (id, kind, status, payload, created_at, updated_at) VALUES (?, ?, 'queued', ?, 'x', 'x')",
    )
    .bind(id, kind, JSON.stringify(payload))
    .run();
  const worker: any = await h.mf.getWorker('verdict');
  await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
  return db.prepare('SELECT status, error, result FROM native_commands WHERE id = ?').bind(id).first();
}

/** The local-run token of the internal hosts' dev route (VERDICT_INTERNAL_DEV_TOKEN). */
export const DEV_TOKEN = 'dev-internal-token';

/** A call of the container to an internal host, through the worker's dev route. */
export function internalPost(
  h: Harness,
  host: string,
  path: string,
  body: unknown,
  token: string | null = DEV_TOKEN,
): Promise<Response> {
  return h.mf.dispatchFetch(`http://verdict.local${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [INTERNAL_HOST_HEADER]: host,
      ...(token ? { [INTERNAL_TOKEN_HEADER]: token } : {}),
    },
    body: JSON.stringify(body),
  }) as unknown as Promise<Response>;
}

/** A native run of `repo` #7 and its dispatch lease held by `token`, as the consumer sets them up. */
export async function leaseFor(h: Harness, runId: string, token: string, repo: string): Promise<void> {
  // The worker creates its D1 tables with its first request that uses them (here a refused one).
  await internalPost(h, 'state.internal', '/bundle', {});
  const db = await h.d1();
  const now = new Date().toISOString();
  await db
    .prepare(
      `INSERT INTO native_runs (id, review_key, repo, pr_number, head_sha, trigger, status, installation_id, created_at, updated_at)
       VALUES (?, ?, ?, 7, ?, 'opened', 'running', 77, ?, ?)`,
    )
    .bind(runId, `${repo}#7@${'c'.repeat(40)}:${runId}`, repo, 'c'.repeat(40), now, now)
    .run();
  const ns: any = await h.mf.getDurableObjectNamespace('LEASES', 'verdict');
  const res = await ns
    .get(ns.idFromName(runId))
    .fetch('https://lease/acquire', { method: 'POST', body: JSON.stringify({ token, leaseMs: 60_000 }) });
  const answer = await res.json();
  if (answer.status !== 'acquired')
    throw new Error(`lease of ${runId} not acquired: ${JSON.stringify(answer)}`);
}
