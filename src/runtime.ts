import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Probot } from 'probot';
import { verdictApp } from './app.js';
import { randomId, systemClock, type Clock, type IdGenerator } from './clock.js';
import type { Config } from './config.js';
import { createProbot } from './github/probot.js';
import { Router } from './http/router.js';
import { GroupCommitter } from './ingress/group-commit.js';
import { createWebhookHandler, WEBHOOK_PATHS, WEBHOOK_QUEUE } from './ingress/webhook-handler.js';
import { ReplyPublisher } from './publish/replies.js';
import { createHttpServer, type Mount } from './server.js';
import type { IncomingDelivery, RecordResult } from './store/deliveries.js';
import { openStore, type Store } from './store/index.js';
import { QueueWorker } from './worker/runner.js';
import { webhookJobHandler } from './worker/webhook-consumer.js';

export type Verdict = {
  config: Config;
  store: Store;
  probot: Probot;
  server: Server;
  log: Logger;
  webhookWorker: QueueWorker | null;
  /** Starts listening (and the inline worker); resolves with the bound port. */
  listen(): Promise<number>;
  stop(): Promise<void>;
};

export type RuntimeOptions = { log: Logger; clock?: Clock; ids?: IdGenerator; store?: Store };

/** Composition root: store, Probot app, HTTP surface and the in-process worker, wired together. */
export async function createVerdict(config: Config, opts: RuntimeOptions): Promise<Verdict> {
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? randomId;
  const log = opts.log;
  const store =
    opts.store ?? (await openStore(config.store, { clock, ids, dedupeTtlSeconds: config.dedupeTtlSeconds }));
  const probot = createProbot(config.github, log);
  const replies = new ReplyPublisher(
    config.github.hasCredentials ? 'live' : 'shadow',
    store.publications,
    log,
  );
  let webhookWorker: QueueWorker | null = null;
  await probot.load(verdictApp({ store, config, log, replies }));

  const committer = new GroupCommitter<IncomingDelivery, RecordResult>(
    (items) => store.deliveries.recordBatch(items),
    { maxBatch: 200, maxInFlight: store.db.dialect === 'pg' ? 4 : 1 },
  );
  const router = new Router();
  const ingress = createWebhookHandler({
    secret: config.github.webhookSecret,
    maxBytes: config.maxWebhookBytes,
    botHandles: config.botHandles,
    record: (item) => committer.submit(item),
    onEnqueued: () => webhookWorker?.kick(),
    log,
  });
  for (const path of WEBHOOK_PATHS) router.add('POST', path, ingress);
  const mounts: Mount[] = [];
  const server = createHttpServer(router, mounts, log);

  if (config.workerInline) webhookWorker = createWebhookWorker(store, probot, config, log);

  return {
    config,
    store,
    probot,
    server,
    log,
    webhookWorker,
    listen: () =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          webhookWorker?.start();
          resolve((server.address() as AddressInfo).port);
        });
      }),
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await committer.drain();
      await webhookWorker?.stop();
      await store.close();
    },
  };
}

/** Loads the Verdict app into a Probot instance (live or shadow replies by App credentials). */
export async function loadApp(probot: Probot, store: Store, config: Config, log: Logger): Promise<void> {
  const replies = new ReplyPublisher(
    config.github.hasCredentials ? 'live' : 'shadow',
    store.publications,
    log,
  );
  await probot.load(verdictApp({ store, config, log, replies }));
}

/** The worker of the `webhooks` lane: stored deliveries into the Probot app. */
export function createWebhookWorker(store: Store, probot: Probot, config: Config, log: Logger): QueueWorker {
  return new QueueWorker({
    queue: { kind: store.db.dialect, ...bindJobs(store) },
    queueName: WEBHOOK_QUEUE,
    owner: `${config.workerId}:${process.pid}`,
    leaseMs: 120_000,
    concurrency: 4,
    handler: webhookJobHandler(store, probot),
    log,
    pollMs: 1000,
  });
}

/** The SQL job table as a QueueBackend. */
export function bindJobs(store: Store) {
  const j = store.jobs;
  return {
    enqueue: j.enqueue.bind(j),
    claim: j.claim.bind(j),
    renew: j.renew.bind(j),
    ack: j.ack.bind(j),
    fail: j.fail.bind(j),
    release: j.release.bind(j),
    reapExpired: j.reapExpired.bind(j),
    list: j.list.bind(j),
    stats: j.stats.bind(j),
  };
}
