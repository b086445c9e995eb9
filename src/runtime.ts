import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Probot } from 'probot';
import { verdictApp } from './handlers/app.js';
import { randomId, systemClock, type Clock, type IdGenerator } from './clock.js';
import { SERVER_DEFAULT_LEASE_MS, type Config } from './config.js';
import { createProbot } from './github/probot.js';
import { BodyBudget, Router } from './http/router.js';
import { GroupCommitter } from './ingress/group-commit.js';
import { createWebhookHandler, WEBHOOK_PATHS, WEBHOOK_QUEUE } from './ingress/webhook-handler.js';
import { ReplyPublisher } from './publish/replies.js';
import { ReviewPublisher } from './publish/review-publisher.js';
import { createHttpServer, type Mount } from './server.js';
import type { IncomingDelivery, RecordResult } from './store/deliveries.js';
import { openStore, type Store } from './store/index.js';
import { registerCommandRoutes } from './operator/commands.js';
import { registerFamilyRoutes } from './operator/families.js';
import { registerKeyRoutes } from './operator/keys.js';
import { registerOpenApiRoute } from './operator/openapi.js';
import { registerQueueRepairRoutes } from './operator/queue-repair.js';
import { registerReadRoutes } from './operator/read-routes.js';
import { registerSettingsRoutes } from './operator/settings.js';
import { registerReportRoutes } from './operator/reports.js';
import type { OperatorDeps } from './operator/operation.js';
import { ReadCache, StampedCache, watchShownWrites } from './operator/read-cache.js';
import { registerSnapshotRoutes } from './operator/snapshot.js';
import { trpcMount } from './trpc/router.js';
import { REVIEW_QUEUE } from './review/request.js';
import type { QueueBackend } from './queue/types.js';
import { registerQueueRoutes } from './queue/http-routes.js';
import { sqlQueue } from './queue/sql.js';
import { reviewJobHandler, type ReviewExecutor } from './worker/review-consumer.js';
import { createReviewEngine } from './review/engine.js';
import type { GitHubClient } from './github/client.js';
import { selectProviders } from './review/providers/index.js';
import { QueueWorker } from './worker/runner.js';
import { dispatchStoredDelivery, webhookJobHandler } from './worker/webhook-consumer.js';
import { hostname } from 'node:os';
import { CommandBridge } from './bridge/command-bridge.js';
import { commandExecutors, type AppGitHub } from './bridge/executors.js';
import { Scheduler } from './scheduler/scheduler.js';
import { scheduledJobs } from './scheduler/jobs.js';

export type Verdict = {
  config: Config;
  store: Store;
  probot: Probot;
  server: Server;
  /** The HTTP routes (the OpenAPI document is built from them). */
  router: Router;
  log: Logger;
  webhookWorker: QueueWorker | null;
  /** The in-process worker of the `reviews` lane (only when a review engine is given). */
  reviewWorker: QueueWorker | null;
  /** The command bridge (run every minute by the scheduler, or by `npm run bridge`). */
  bridge: CommandBridge;
  /** The scheduled jobs; started with the server unless `VERDICT_SCHEDULER=0`. */
  scheduler: Scheduler;
  /** Starts listening (and the inline worker); resolves with the bound port. */
  listen(): Promise<number>;
  stop(): Promise<void>;
};

export type RuntimeOptions = {
  log: Logger;
  clock?: Clock;
  ids?: IdGenerator;
  store?: Store;
  /**
   * Runs one review for the `reviews` lane. Absent: the review engine (model providers from the config,
   * GitHub through the App's installation Octokit). `null`: no review lane in this process, so review jobs
   * wait for a worker that has one.
   */
  reviewExecutor?: ReviewExecutor | null;
};

/** Composition root: store, Probot app, HTTP surface and the in-process worker, wired together. */
export async function createVerdict(config: Config, opts: RuntimeOptions): Promise<Verdict> {
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? randomId;
  const log = opts.log;
  const store =
    opts.store ??
    (await openStore(config.store, {
      clock,
      ids,
      dedupeTtlSeconds: config.dedupeTtlSeconds,
    }));
  const probot = createProbot(config.github, log);
  const replies = new ReplyPublisher(config.publishMode, store.publications, log);
  let webhookWorker: QueueWorker | null = null;
  await probot.load(verdictApp({ store, config, log, replies }));

  const committer = new GroupCommitter<IncomingDelivery, RecordResult>(
    (items) => store.deliveries.recordBatch(items),
    {
      maxBatch: 200,
      // SQLite has one connection, so one commit at a time (the next batch gathers meanwhile); PostgreSQL
      // commits on several connections.
      maxInFlight: store.db.dialect === 'pg' ? 4 : 1,
    },
  );
  const router = new Router();
  const ingress = createWebhookHandler({
    secret: config.github.webhookSecret,
    maxBytes: config.maxWebhookBytes,
    budget: new BodyBudget(config.webhookInflightBytes),
    botHandles: config.botHandles,
    competitorLogins: config.competitorLogins,
    record: (item) => committer.submit(item),
    onEnqueued: () => webhookWorker?.kick(),
    log,
  });
  for (const path of WEBHOOK_PATHS) router.add('POST', path, ingress);
  const operator: OperatorDeps = {
    store,
    tokens: config.tokens,
    log,
    now: () => clock.now(),
    newId: (prefix) => ids(prefix),
    publicUrl: config.publicUrl,
    cache: new ReadCache(config.operatorCacheMs),
    // Validated by a stamp before every hit, so it is on whenever the read cache is.
    prCache: new StampedCache(config.operatorCacheMs > 0),
  };
  // One listener for both caches: it runs on every query, ingress writes included.
  watchShownWrites(store.db.knex, () => {
    operator.cache.invalidate();
    operator.prCache.written();
  });
  registerQueueRepairRoutes(router, operator);
  registerKeyRoutes(router, operator);
  registerCommandRoutes(router, operator);
  registerReadRoutes(router, operator);
  registerSnapshotRoutes(router, operator);
  registerFamilyRoutes(router, { operator });
  registerSettingsRoutes(router, operator);
  registerReportRoutes(router, operator);
  registerOpenApiRoute(router);
  registerQueueRoutes(router, {
    queue: sqlQueue(store),
    tokens: config.tokens,
    defaultLeaseMs: SERVER_DEFAULT_LEASE_MS,
    log,
  });
  const bridge = createCommandBridge(store, probot, config, log, {
    clock,
    onReviewQueued: () => reviewWorker?.kick(),
  });
  const scheduler = createScheduler(store, bridge, config, log, clock);
  const mounts: Mount[] = [trpcMount(operator)];
  const server = createHttpServer(router, mounts, log, { requestTimeoutMs: config.requestTimeoutMs });

  let reviewWorker: QueueWorker | null = null;
  if (config.workerInline) {
    webhookWorker = createWebhookWorker(store, probot, config, log, () => reviewWorker?.kick());
    const executor =
      opts.reviewExecutor === undefined
        ? reviewEngineFor(store, probot, config, log, { clock, ids })
        : opts.reviewExecutor;
    if (executor) reviewWorker = createReviewWorker(store, sqlQueue(store), executor, config, log);
  }
  if (
    store.db.dialect === 'sqlite' &&
    config.store.client === 'sqlite' &&
    config.store.filename === ':memory:'
  ) {
    log.warn(
      { event: 'memory-queue' },
      'the store and its job queue are in process memory: jobs and deliveries are lost when the process exits',
    );
  }

  return {
    config,
    store,
    probot,
    server,
    router,
    log,
    webhookWorker,
    reviewWorker,
    bridge,
    scheduler,
    listen: () =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          webhookWorker?.start();
          reviewWorker?.start();
          if (config.scheduler.enabled) scheduler.start();
          resolve((server.address() as AddressInfo).port);
        });
      }),
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await committer.drain();
      await scheduler.stop();
      await Promise.all([webhookWorker?.stop(), reviewWorker?.stop()]);
      await store.close();
    },
  };
}

/**
 * The command bridge with its executors: reviews through the store's queue, publication as the config
 * says, replays into the Probot app, repository sync through the App's installations.
 */
export function createCommandBridge(
  store: Store,
  probot: Probot,
  config: Config,
  log: Logger,
  opts: { clock?: Clock; id?: string; onReviewQueued?: () => void } = {},
): CommandBridge {
  const publisher = reviewPublisherFor(store, config, log);
  const app: AppGitHub | null = config.github.hasCredentials
    ? {
        installations: async () => {
          const octokit = (await probot.auth()) as GitHubClient;
          const list = await octokit.paginate('GET /app/installations', { per_page: 100 });
          return list.map((i) => ({
            id: i.id,
            account: (i.account as { login?: string } | null)?.login ?? null,
            suspended: Boolean(i.suspended_at),
          }));
        },
        repositories: async (installationId) => {
          const octokit = (await probot.auth(installationId)) as GitHubClient;
          const repos = await octokit.paginate('GET /installation/repositories', { per_page: 100 });
          return repos.map((r) => r.full_name);
        },
      }
    : null;
  return new CommandBridge({
    store,
    authority: config.scheduler.authority,
    id: opts.id ?? `bridge:${hostname()}:${process.pid}`,
    log: log.child({ name: 'bridge' }),
    clock: opts.clock ?? systemClock,
    executors: commandExecutors({
      store,
      clock: opts.clock ?? systemClock,
      log: log.child({ name: 'bridge' }),
      publisher,
      // Shadow publication records what would be published and never calls GitHub.
      github:
        config.publishMode === 'live'
          ? async (installationId) => (await probot.auth(installationId)) as GitHubClient
          : async () => ({}) as GitHubClient,
      app,
      dispatchDelivery: (deliveryId) => dispatchStoredDelivery(store, probot, deliveryId),
      onReviewQueued: opts.onReviewQueued,
    }),
  });
}

/** The scheduled jobs of review-engine 6.4 that this runtime runs (command bridge, watchdog, maintenance). */
export function createScheduler(
  store: Store,
  bridge: CommandBridge,
  config: Config,
  log: Logger,
  clock: Clock = systemClock,
  fetchImpl?: typeof fetch,
): Scheduler {
  const scheduler: Scheduler = new Scheduler({
    store: store.scheduler,
    log: log.child({ name: 'scheduler' }),
    clock,
    jobs: scheduledJobs({
      store,
      bridge,
      config: config.scheduler,
      log: log.child({ name: 'scheduler' }),
      clock,
      productName: config.productName,
      scheduler: () => scheduler,
      fetch: fetchImpl,
    }),
  });
  return scheduler;
}

/** Loads the Verdict app into a Probot instance (live or shadow replies by App credentials). */
export async function loadApp(probot: Probot, store: Store, config: Config, log: Logger): Promise<void> {
  const replies = new ReplyPublisher(config.publishMode, store.publications, log);
  await probot.load(verdictApp({ store, config, log, replies }));
}

/**
 * The production review engine: the configured model providers (a bad provider value or price table
 * throws a ConfigError naming the variable), GitHub through the App's installations.
 */
export function reviewEngineFor(
  store: Store,
  probot: Probot,
  config: Config,
  log: Logger,
  opts: { clock?: Clock; ids?: IdGenerator } = {},
): ReviewExecutor {
  return createReviewEngine({
    store,
    config: config.review,
    providers: selectProviders(config.review.providerEnv),
    github: async (installationId) => (await probot.auth(installationId)) as GitHubClient,
    clock: opts.clock ?? systemClock,
    ids: opts.ids ?? randomId,
    log: log.child({ name: 'review' }),
    publisher: reviewPublisherFor(store, config, log),
  });
}

/** Publication as the config says: live with App credentials, shadow otherwise or when asked. */
export function reviewPublisherFor(store: Store, config: Config, log: Logger): ReviewPublisher {
  return new ReviewPublisher({
    store,
    mode: config.publishMode,
    productName: config.productName,
    checkName: config.checkName,
    botHandle: config.botHandles[0] ?? 'verdict',
    webUrl: config.github.webUrl,
    log: log.child({ name: 'publish' }),
  });
}

/**
 * The worker of the `webhooks` lane: stored deliveries into the Probot app. Webhook handling is short, so
 * its lease is at most 2 minutes (shorter when VERDICT_QUEUE_LEASE_SECONDS says so).
 */
export function createWebhookWorker(
  store: Store,
  probot: Probot,
  config: Config,
  log: Logger,
  afterJob?: () => void,
): QueueWorker {
  const handle = webhookJobHandler(store, probot);
  return new QueueWorker({
    queue: sqlQueue(store),
    queueName: WEBHOOK_QUEUE,
    owner: `${config.worker.id}:${process.pid}`,
    leaseMs: Math.min(config.worker.leaseMs, 120_000),
    concurrency: 4,
    // A webhook often queues a review: wake the review lane at once instead of at its next poll.
    handler: async (job, ctx) => {
      try {
        return await handle(job, ctx);
      } finally {
        afterJob?.();
      }
    },
    log,
    pollMs: 1000,
  });
}

/**
 * The worker of the `reviews` lane: `VERDICT_WORKER_CONCURRENCY` reviews at once (capped by
 * `VERDICT_WORKER_MAX_JOBS`), each under a lease of `VERDICT_QUEUE_LEASE_SECONDS` (or the timeout formula).
 */
export function createReviewWorker(
  store: Store,
  queue: QueueBackend,
  executor: ReviewExecutor,
  config: Config,
  log: Logger,
): QueueWorker {
  return new QueueWorker({
    queue,
    queueName: REVIEW_QUEUE,
    owner: `${config.worker.id}:${process.pid}`,
    leaseMs: config.worker.leaseMs,
    concurrency: Math.min(config.worker.concurrency, config.worker.maxJobs),
    handler: reviewJobHandler(store, executor, log),
    log,
    pollMs: 1000,
  });
}

export { bindJobs, sqlQueue } from './queue/sql.js';
