import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { resolve as resolvePath } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Probot } from 'probot';
import { randomId, systemTimers, type Clock, type IdGenerator, type Timers } from '../clock.js';
import { SERVER_DEFAULT_LEASE_MS, type Config } from '../config/index.js';
import { createProbot } from '../github/probot.js';
import { BodyBudget } from '../http/body-budget.js';
import { Router } from '../http/router.js';
import { GroupCommitter } from '../ingress/group-commit.js';
import { recordThrough, startIntakeThread, type IntakeWriter } from '../ingress/intake-thread.js';
import { createWebhookHandler, WEBHOOK_PATHS } from '../ingress/webhook-handler.js';
import { createHttpServer, drainServer, type Mount } from '../server.js';
import type { IncomingDelivery, RecordResult } from '../store/deliveries.js';
import { openStore, type Store } from '../store/index.js';
import { registerOpenApiRoute } from '../operator/openapi.js';
import { registerReportRoutes } from '../operator/reports.js';
import type { OperatorDeps } from '../operator/rest.js';
import { registerOperatorRoutes } from '../operator/routes.js';
import { ReadCache, StampedCache } from '../services/read-cache.js';
import { trpcMount } from '../trpc/router.js';
import { AuthThrottle } from '../http/throttle.js';
import { registerQueueRoutes } from '../queue/http-routes.js';
import { type ReviewExecutor } from '../worker/review-consumer.js';
import { QueueWorker } from '../worker/runner.js';
import { startWorkerThread, type WorkerThread } from '../worker/thread-host.js';
import { CommandBridge } from '../bridge/command-bridge.js';
import { dashboardMounts } from '../dashboard/routes.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { registerSetupRoutes } from '../setup/routes.js';

import {
  catchUpGitHubFor,
  createCommandBridge,
  createReviewWorker,
  createScheduler,
  createWebhookWorker,
  loadApp,
  repositoryGitHubFor,
  reviewEngineFor,
} from './parts.js';

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
  /** The clock of the store and the operator routes (default: `timers`, else the system's). */
  clock?: Clock;
  /**
   * The timers of the scheduled jobs and the in-process workers (their polls, leases and grace periods)
   * and the clock the operator read caches measure their TTL on (default: the system's timers, the
   * caches on the monotonic performance clock). A test gives a ManualClock and moves it.
   */
  timers?: Timers;
  ids?: IdGenerator;
  store?: Store;
  /**
   * Runs one review for the `reviews` lane. Absent: the review engine (model providers from the config,
   * GitHub through the App's installation Octokit). `null`: no review lane in this process, so review jobs
   * wait for a worker that has one.
   */
  reviewExecutor?: ReviewExecutor | null;
  /**
   * The process environment the inline worker's thread reads its configuration from (`npm start` gives
   * `process.env`). With it, `VERDICT_WORKER_INLINE` and `VERDICT_WORKER_THREAD` on and no `reviewExecutor`,
   * the worker lanes run in a worker thread (src/worker/thread.ts); without it, in this thread.
   */
  workerThreadEnv?: NodeJS.ProcessEnv;
  /** The dashboard's SPA build (index.html, assets/); default `web/dist` beside package.json. */
  uiDist?: string;
  /**
   * The `.env` file the first-run App registration writes the App's credentials to (default: `.env` in
   * the working directory, which `npm start` reads).
   */
  envFile?: string;
};

/** What the parts of the composition root share. */
type Base = {
  config: Config;
  opts: RuntimeOptions;
  log: Logger;
  timers: Timers;
  clock: Clock;
  ids: IdGenerator;
  store: Store;
  probot: Probot;
};

/** Composition root: store, Probot app, HTTP surface and the in-process worker, wired together. */
export async function createVerdict(config: Config, opts: RuntimeOptions): Promise<Verdict> {
  const timers = opts.timers ?? systemTimers;
  const clock = opts.clock ?? timers;
  const ids = opts.ids ?? randomId;
  const log = opts.log;
  const store =
    opts.store ?? (await openStore(config.store, { clock, ids, dedupeTtlSeconds: config.dedupeTtlSeconds }));
  const probot = createProbot(config.github, log);
  const base: Base = { config, opts, log, timers, clock, ids, store, probot };
  const memory = config.store.client === 'sqlite' && config.store.filename === ':memory:';
  const lanes = new WorkerLanes(base, memory);
  await loadApp(probot, store, config, log);

  const router = new Router();
  const intake = await startIntake(base);
  const committer = registerIngress(router, base, lanes, intake);
  // One count of failed authentications per client address for every face that takes a token.
  const throttle = new AuthThrottle({ now: () => clock.now() });
  const operator = operatorFor(base, throttle);
  registerApiRoutes(router, base, operator);
  const bridge = createCommandBridge(store, probot, config, log, {
    clock,
    onReviewQueued: () => lanes.reviewWorker?.kick(),
  });
  const catchUp = catchUpGitHubFor(probot, config);
  const scheduler = createScheduler(store, bridge, config, log, { timers, catchUp });
  const mounts: Mount[] = [trpcMount(operator), ...dashboardFor(base, throttle, () => server)];
  const server = createHttpServer(router, mounts, log, { requestTimeoutMs: config.requestTimeoutMs });

  if (config.workerInline && !lanes.threaded) lanes.inThisThread();
  if (store.db.dialect === 'sqlite' && memory) {
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
    webhookWorker: lanes.webhookWorker,
    reviewWorker: lanes.reviewWorker,
    bridge,
    scheduler,
    listen: () =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          void lanes.start().then(() => {
            if (config.scheduler.enabled) scheduler.start();
            resolve((server.address() as AddressInfo).port);
          }, reject);
        });
      }),
    /**
     * Stops within a bounded time (docs/operator.md "Stopping"): the workers and the scheduler stop claiming
     * at once and finish or release what they hold, while the HTTP server drains (drainServer: at most
     * DRAIN_MS); then the deliveries still committing are written and the store is closed.
     */
    stop: async () => {
      const workersStopped = Promise.all([
        scheduler.stop(),
        lanes.webhookWorker?.stop(),
        lanes.reviewWorker?.stop(),
        lanes.thread?.stop(),
      ]);
      await drainServer(server);
      await committer.drain();
      await intake?.stop();
      await workersStopped;
      await store.close();
    },
  };
}

/** The operator, report, OpenAPI and queue routes, and without App credentials the first-run setup. */
function registerApiRoutes(
  router: Router,
  { config, store, log, clock, opts }: Base,
  operator: OperatorDeps,
): void {
  registerOperatorRoutes(router, operator);
  registerReportRoutes(router, operator);
  registerOpenApiRoute(router);
  // First run (docs/setup.md): without App credentials, `GET /` registers the App from app.yml.
  if (!config.github.hasCredentials) {
    registerSetupRoutes(router, { config, log, clock, envFile: opts.envFile ?? resolvePath('.env') });
  }
  registerQueueRoutes(router, {
    queue: store.jobs,
    tokens: config.tokens,
    throttle: operator.throttle,
    runStatus: async (runId) => (await store.runs.get(runId))?.status ?? null,
    defaultLeaseMs: SERVER_DEFAULT_LEASE_MS,
    log,
  });
}

/** The worker lanes of this process: in a worker thread when `threaded`, else in this thread. */
class WorkerLanes {
  webhookWorker: QueueWorker | null = null;
  reviewWorker: QueueWorker | null = null;
  thread: WorkerThread | null = null;
  readonly threaded: boolean;

  constructor(
    private readonly base: Base,
    memory: boolean,
  ) {
    const { config, opts } = base;
    this.threaded =
      config.workerInline &&
      config.workerThread &&
      opts.workerThreadEnv !== undefined &&
      opts.reviewExecutor === undefined &&
      opts.store === undefined &&
      !memory;
  }

  inThisThread(): void {
    const { store, probot, config, log, timers, clock, ids, opts } = this.base;
    this.webhookWorker = createWebhookWorker(
      store,
      probot,
      config,
      log,
      () => this.reviewWorker?.kick(),
      timers,
    );
    const executor =
      opts.reviewExecutor === undefined
        ? reviewEngineFor(store, probot, config, log, { clock, ids })
        : opts.reviewExecutor;
    if (executor) this.reviewWorker = createReviewWorker(store, store.jobs, executor, config, log, timers);
  }

  /** Starts the lanes: in their thread when `threaded` (in this one if the thread cannot start them). */
  async start(): Promise<void> {
    if (this.threaded) {
      try {
        this.thread = await startWorkerThread(this.base.opts.workerThreadEnv!, this.base.log);
        return;
      } catch (error) {
        this.base.log.error(
          { event: 'worker-thread-failed', err: error },
          'the worker thread did not start: the worker runs in the server thread',
        );
        this.inThisThread();
      }
    }
    this.webhookWorker?.start();
    this.reviewWorker?.start();
  }
}

/**
 * The intake writer thread (`VERDICT_INTAKE_THREAD`), on a SQLite file this runtime opened from its
 * configuration, when it was given the process's environment (`npm start`); null when off or when it could
 * not start (deliveries are then recorded in this thread).
 */
async function startIntake({ config, opts, log }: Base): Promise<IntakeWriter | null> {
  const store = config.store;
  if (!config.intakeThread || opts.workerThreadEnv === undefined || opts.store !== undefined) return null;
  if (store.client !== 'sqlite' || store.filename === ':memory:') return null;
  try {
    const writer = await startIntakeThread(store, config.dedupeTtlSeconds, log);
    log.info(
      { event: 'intake-thread-started', thread: 'intake' },
      'deliveries are recorded in the intake thread',
    );
    return writer;
  } catch (error) {
    log.error(
      { event: 'intake-thread-failed', err: error },
      'the intake thread did not start: deliveries are recorded in the server thread',
    );
    return null;
  }
}

/** `POST /github/webhooks`: deliveries group-committed, the lanes woken once one is enqueued. */
function registerIngress(
  router: Router,
  { store, config, log }: Base,
  lanes: WorkerLanes,
  intake: IntakeWriter | null,
): GroupCommitter<IncomingDelivery, RecordResult> {
  const committer = new GroupCommitter<IncomingDelivery, RecordResult>(
    (items) => recordThrough(intake, store, items),
    {
      maxBatch: 200,
      // SQLite has one connection, so one commit at a time (the next batch gathers meanwhile); PostgreSQL
      // commits on several connections.
      maxInFlight: store.db.dialect === 'pg' ? 4 : 1,
    },
  );
  const ingress = createWebhookHandler({
    secret: config.github.webhookSecret,
    maxBytes: config.maxWebhookBytes,
    budget: new BodyBudget({ capacity: config.webhookInflightBytes, maxBodyBytes: config.maxWebhookBytes }),
    botHandles: config.botHandles,
    competitorLogins: config.competitorLogins,
    record: (item) => committer.submit(item),
    onEnqueued: () => {
      lanes.webhookWorker?.kick();
      lanes.thread?.kick();
    },
    log,
  });
  // A webhook coming in tells the worker thread to hold off its writes for a moment (thread.ts).
  const handler: typeof ingress = (...args) => {
    lanes.thread?.busy();
    return ingress(...args);
  };
  for (const path of WEBHOOK_PATHS) router.add('POST', path, handler);
  return committer;
}

/** The operator API's dependencies; one listener empties both read caches on every write they show. */
function operatorFor(base: Base, throttle: AuthThrottle): OperatorDeps {
  const { config, store, probot, log, clock, ids, timers } = base;
  const cacheNow = base.opts.timers ? () => timers.now() : undefined;
  const operator: OperatorDeps = {
    store,
    tokens: config.tokens,
    log,
    now: () => clock.now(),
    newId: (prefix) => ids(prefix),
    publicUrl: config.publicUrl,
    cache: new ReadCache(config.operatorCacheMs, cacheNow),
    // Validated by a stamp before every hit, so it is on whenever the read cache is.
    prCache: new StampedCache(config.operatorCacheMs > 0, undefined, undefined, cacheNow),
    github: repositoryGitHubFor(probot, store, config),
    throttle,
    server: { validation: { switch: config.validation.switch, running: config.validation.enabled } },
  };
  // Both caches drop what they hold on every write through the store to a table they show.
  store.shownWrites.subscribe(() => {
    operator.cache.invalidate();
    operator.prCache.written();
  });
  return operator;
}

/** The dashboard's mounts (none when it is off); `server()` is the HTTP server, for its bound address. */
function dashboardFor(
  { config, store, clock, log, opts }: Base,
  throttle: AuthThrottle,
  server: () => Server,
): Mount[] {
  if (!config.dashboard.enabled) return [];
  const local = () => {
    const address = server().address() as AddressInfo | null;
    if (!address || typeof address !== 'object') return null;
    const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  };
  return dashboardMounts(
    {
      config: config.dashboard,
      github: { webUrl: config.github.webUrl, apiUrl: config.github.baseUrl },
      publicUrl: config.publicUrl,
      tokens: config.tokens,
      throttle,
      sessions: store.uiSessions,
      clock,
      dist: opts.uiDist ?? fileURLToPath(new URL('../../web/dist', import.meta.url)),
      backendUrl: () => config.dashboard.backendUrl ?? local(),
      log,
    },
    WEBHOOK_PATHS,
  );
}
