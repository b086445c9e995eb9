/**
 * The parts every process composes from (the server, `npm run worker`, `npm run bridge`): the Probot app,
 * the review engine and publisher, the queue workers of both lanes, the command bridge and the scheduler.
 * `server.ts` wires them into one HTTP server; the other entry points take the parts they run.
 */
import type { Logger } from 'pino';
import type { Probot } from 'probot';
import { verdictApp } from '../handlers/app.js';
import { randomId, systemClock, systemTimers, type Clock, type IdGenerator, type Timers } from '../clock.js';
import { type Config } from '../config/index.js';
import { WEBHOOK_QUEUE } from '../ingress/webhook-handler.js';
import { ReplyPublisher } from '../publish/replies.js';
import { ReviewPublisher } from '../publish/review-publisher.js';
import { type Store } from '../store/index.js';
import { REVIEW_QUEUE } from '../review/request.js';
import type { QueueBackend } from '../queue/types.js';
import { reviewJobHandler, type ReviewExecutor } from '../worker/review-consumer.js';
import { reviewFlow, type Publication } from '../worker/review-flow.js';
import { feedbackCollection } from '../memory/feedback.js';
import { createReviewEngine } from '../review/engine.js';
import type { GitHubClient } from '../github/client.js';
import { deadLettered, reviewFailed } from '../alerts/moments.js';
import type { AlertDeps } from '../alerts/raise.js';
import { selectProviders } from '../review/providers/index.js';
import { providersForRepo } from '../review/providers/repo-model.js';
import { QueueWorker } from '../worker/runner.js';
import { dispatchStoredDelivery, webhookJobHandler } from '../worker/webhook-consumer.js';
import { hostname } from 'node:os';
import { CommandBridge } from '../bridge/command-bridge.js';
import { commandExecutors } from '../bridge/executors.js';
import type { AppGitHub } from '../services/repos.js';
import type { CatchUpGitHub } from '../scheduler/catch-up.js';
import { hookDelivery } from '../scheduler/redelivery.js';
import { notFound, type RepositoryGitHub } from '../services/operation.js';
import { splitFullName } from '../store/repositories.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { scheduledJobs } from '../scheduler/jobs.js';
import { createArtifactStorage } from '../evidence/storage.js';
import { e2bExecutorFactory, loadE2bSdk } from '../validation/e2b.js';
import { configuredExecutors, type ExecutorFactory } from '../validation/executors.js';
import { createReviewValidator, type ReviewValidator } from '../validation/review.js';

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
      alerts: config.scheduler,
      dispatchDelivery: (deliveryId) => dispatchStoredDelivery(store, probot, deliveryId),
      onReviewQueued: opts.onReviewQueued,
    }),
  });
}

/**
 * The GitHub calls of `pr-agent-loop`: the App's webhook deliveries with the App's JWT (newest first, cursor
 * pagination followed through the `link` header until an attempt older than the window), their
 * redelivery, a repository's open pull requests with its installation's token, and that installation's
 * Octokit for the feedback step (reactions). Null without App credentials.
 */
export function catchUpGitHubFor(probot: Probot, config: Config): CatchUpGitHub | null {
  if (!config.github.hasCredentials) return null;
  return {
    deliveries: async (since) => {
      const octokit = (await probot.auth()) as GitHubClient;
      return octokit.paginate('GET /app/hook/deliveries', { per_page: 100 }, (response, done) => {
        const attempts = response.data.map(hookDelivery);
        if (attempts.some((a) => a.deliveredAt < since)) done();
        return attempts;
      });
    },
    redeliver: async (id) => {
      const octokit = (await probot.auth()) as GitHubClient;
      await octokit.request('POST /app/hook/deliveries/{delivery_id}/attempts', { delivery_id: id });
    },
    installation: async (installationId) => (await probot.auth(installationId)) as GitHubClient,
    openPullRequests: async (repo, installationId) => {
      const octokit = (await probot.auth(installationId)) as GitHubClient;
      const { owner, name } = splitFullName(repo);
      const pulls = await octokit.paginate('GET /repos/{owner}/{repo}/pulls', {
        owner,
        repo: name,
        state: 'open',
        per_page: 100,
      });
      return pulls.map((p) => ({
        number: p.number,
        headSha: p.head.sha,
        baseRef: p.base.ref,
        headRef: p.head.ref,
        title: p.title,
        author: p.user?.login ?? null,
        draft: p.draft === true,
      }));
    },
  };
}

/**
 * GitHub for the operator services (the memory preview): the installation Octokit of a repository, its
 * installation as the store knows it (installation events, repository sync) or else as GitHub says
 * (`GET /repos/{owner}/{repo}/installation`). Null without App credentials.
 */
export function repositoryGitHubFor(probot: Probot, store: Store, config: Config): RepositoryGitHub | null {
  if (!config.github.hasCredentials) return null;
  return async (repo) => {
    let installationId = (await store.repositories.get(repo))?.installationId ?? null;
    if (installationId === null) {
      const app = (await probot.auth()) as GitHubClient;
      const { owner, name } = splitFullName(repo);
      try {
        installationId = (await app.rest.apps.getRepoInstallation({ owner, repo: name })).data.id;
      } catch (error) {
        if ((error as { status?: unknown })?.status === 404) {
          throw notFound(`The GitHub App is not installed on ${repo}`);
        }
        throw error;
      }
    }
    return (await probot.auth(installationId)) as GitHubClient;
  };
}

/** What a scheduler runs on beside the store: its timers, the alert's fetch, pr-agent-loop's GitHub. */
export type SchedulerParts = { timers?: Timers; fetch?: typeof fetch; catchUp?: CatchUpGitHub | null };

/** The scheduled jobs of review-engine 6.4 that this runtime runs (command bridge, watchdog, maintenance). */
export function createScheduler(
  store: Store,
  bridge: CommandBridge,
  config: Config,
  log: Logger,
  { timers = systemTimers, fetch: fetchImpl, catchUp = null }: SchedulerParts = {},
): Scheduler {
  const scheduler: Scheduler = new Scheduler({
    store: store.scheduler,
    log: log.child({ name: 'scheduler' }),
    timers,
    jobs: scheduledJobs({
      store,
      bridge,
      config: config.scheduler,
      log: log.child({ name: 'scheduler' }),
      clock: timers,
      productName: config.productName,
      scheduler: () => scheduler,
      fetch: fetchImpl,
      catchUp,
    }),
  });
  return scheduler;
}

/** Loads the Verdict app into a Probot instance (live or shadow replies by App credentials). */
export async function loadApp(probot: Probot, store: Store, config: Config, log: Logger): Promise<void> {
  const replies = new ReplyPublisher(config.publishMode, store.publications, log, {
    retries: config.github.requestRetries,
  });
  await probot.load(verdictApp({ store, config, log, replies }));
}

/**
 * The production review job: the review engine with the configured model providers (a bad provider value
 * or price table throws a ConfigError naming the variable) and GitHub through the App's installations,
 * followed by publication (src/worker/review-flow.ts).
 */
export function reviewEngineFor(
  store: Store,
  probot: Probot,
  config: Config,
  log: Logger,
  opts: { clock?: Clock; ids?: IdGenerator } = {},
): ReviewExecutor {
  const github = async (installationId: number) => (await probot.auth(installationId)) as GitHubClient;
  return reviewExecutorFor(store, github, config, log, opts);
}

/**
 * The review job of reviewEngineFor over any source of installation Octokits (the native container gets
 * its tokens from `broker.internal`); `publication` replaces the configured publisher when given.
 */
export function reviewExecutorFor(
  store: Store,
  github: (installationId: number) => Promise<GitHubClient>,
  config: Config,
  log: Logger,
  opts: {
    clock?: Clock;
    ids?: IdGenerator;
    publication?: Publication | null;
    /** The validation executors (default: this process's, from the config). */
    validationExecutor?: ExecutorFactory;
  } = {},
): ReviewExecutor {
  const providers = selectProviders(config.review.providers);
  const engine = createReviewEngine({
    store,
    config: config.review,
    providers,
    providersFor: (repoModel) => providersForRepo(providers, config.review.providers, repoModel),
    github,
    clock: opts.clock ?? systemClock,
    ids: opts.ids ?? randomId,
    log: log.child({ name: 'review' }),
    alerts: alertDepsFor(store, config, log),
    validation: reviewValidatorFor(store, config, opts.clock ?? systemClock, opts.validationExecutor),
    ...(!config.validation.enabled && {
      validationSwitch: config.validation.switch === 'off' ? 'off' : 'auto',
    }),
    evidence: {
      enabled: config.evidence.enabled,
      requireArtifacts: config.evidence.requireArtifacts,
      storage: config.evidence.enabled ? createArtifactStorage(config.evidence) : null,
    },
  });
  return reviewFlow({
    engine,
    publication: opts.publication === undefined ? reviewPublisherFor(store, config, log) : opts.publication,
    store,
    log,
    feedback: feedbackCollection(store, log.child({ name: 'feedback' }), {
      readGitHub: config.github.hasCredentials,
    }),
  });
}

/**
 * Repo-native validation as the config says (null when off: the operator's switch, or no executor). The
 * executors run in this process unless `executors` says otherwise (the native container's sandbox).
 */
export function reviewValidatorFor(
  store: Store,
  config: Config,
  clock: Clock,
  executors?: ExecutorFactory,
): ReviewValidator | null {
  const v = config.validation;
  if (!v.enabled) return null;
  const e2b = e2bExecutorFactory({
    apiKey: v.e2bApiKey,
    costs: store.executorCosts,
    ...(v.e2bCostPerSecondUsd !== null ? { costPerSecondUsd: v.e2bCostPerSecondUsd } : {}),
  });
  return createReviewValidator({
    evidenceWaitMs: v.evidenceWaitMs,
    timeoutMs: v.timeoutMs,
    shadowTimeoutMs: v.shadowTimeoutMs,
    codeChangesOnly: v.codeChangesOnly,
    trustedRepos: v.trustedRepos,
    apiKey: v.e2bApiKey ?? undefined,
    budgetUsd: v.e2bBudgetUsd,
    sdkAvailable: async () => (await loadE2bSdk()) !== null,
    readRecordedCostUsd: () => store.executorCosts.totalUsd('e2b'),
    now: () => clock.now(),
    executor: executors ?? configuredExecutors(v, e2b),
  });
}

/** Publication as the config says: live with App credentials, shadow otherwise or when asked. */
export function reviewPublisherFor(
  store: Store,
  config: Config,
  log: Logger,
  opts: { fileLinks?: boolean; lookFirst?: boolean } = {},
): ReviewPublisher {
  return new ReviewPublisher({
    store,
    mode: config.publishMode,
    productName: config.productName,
    checkName: config.checkName,
    botHandle: config.botHandles[0] ?? 'verdict',
    webUrl: config.github.webUrl,
    ...(opts.fileLinks === false ? { fileLinks: false } : {}),
    ...(opts.lookFirst ? { lookFirst: true } : {}),
    log: log.child({ name: 'publish' }),
    requestRetries: config.github.requestRetries,
  });
}

/** The lease owner a worker's jobs carry: `<VERDICT_WORKER_ID>:<pid>` (review-engine 8). */
const leaseOwner = (config: Config): string => `${config.worker.id}:${process.pid}`;

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
  timers: Timers = systemTimers,
  mayClaim?: () => number,
): QueueWorker {
  const handle = webhookJobHandler(store, probot);
  return new QueueWorker({
    queue: store.jobs,
    queueName: WEBHOOK_QUEUE,
    owner: leaseOwner(config),
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
    onDeadLetter: (e) => deadLettered(alertDepsFor(store, config, log), e),
    log,
    pollMs: 1000,
    timers,
    ...(mayClaim && { mayClaim }),
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
  timers: Timers = systemTimers,
  mayClaim?: () => number,
): QueueWorker {
  return new QueueWorker({
    queue,
    queueName: REVIEW_QUEUE,
    owner: leaseOwner(config),
    leaseMs: config.worker.leaseMs,
    concurrency: Math.min(config.worker.concurrency, config.worker.maxJobs),
    handler: reviewJobHandler(store, executor, log, {
      onRunFailed: (repo) => reviewFailed(alertDepsFor(store, config, log), repo),
    }),
    onDeadLetter: (e) => deadLettered(alertDepsFor(store, config, log), e),
    log,
    pollMs: 1000,
    timers,
    ...(mayClaim && { mayClaim }),
  });
}

/** Where a process's alerts go: the store, the watchdog URL and Telegram as the config says. */
export function alertDepsFor(store: Store, config: Config, log: Logger): AlertDeps {
  return { store, log: log.child({ name: 'alerts' }), config: config.scheduler };
}
