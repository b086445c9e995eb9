import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { randomId, systemClock } from '../clock.js';
import { loadConfig, type Config } from '../config/index.js';
import type { GitHubClient } from '../github/client.js';
import { createProbot } from '../github/probot.js';
import {
  PullRequestServer,
  SERVED_INSTALLATION_ID,
  type PullRequestSource,
} from '../github/pull-request-server.js';
import type { RepoConfig } from '../repo-config/schema.js';
import { createReviewEngine } from '../review/engine.js';
import type { StageTap } from '../review/run-trace.js';
import type { ProviderSelection } from '../review/providers/index.js';
import { requestReview } from '../review/request.js';
import { openConfiguredStore, type Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { reviewFlow } from '../worker/review-flow.js';
import { createReviewWorker, reviewPublisherFor } from './parts.js';

/** An environment as the configuration reads it. */
export type Env = Record<string, string | undefined>;

export type ScratchReviewOptions = {
  /** The pull requests the local GitHub API serves. */
  sources: readonly PullRequestSource[];
  /** The environment provider selection reads (`VERDICT_RUNNER_PROVIDER`, keys, base URLs, prices). */
  env: Env;
  /** Reviews run at once (the review worker's concurrency). */
  concurrency: number;
  log: Logger;
  /** The providers, from the scratch configuration (the configured ones, or the Test Lab's replay). */
  providers: (config: Config, env: Env) => ProviderSelection;
  /** Links to files in the review body (default true); off where the served repository is not on GitHub. */
  fileLinks?: boolean;
  /** A test's hook on the review's stage outputs (run-trace.ts: the Test Lab's mutation test). */
  tap?: StageTap;
};

/** Run statuses a review ends in. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set([
  'completed',
  'failed',
  'skipped',
  'superseded',
  'abandoned',
]);

/**
 * The real review pipeline over served pull requests, in a scratch store: a local GitHub API serves each
 * source as a pull request (PullRequestServer), a Probot App authenticates against it with a key made for
 * the run, review jobs go through the job table and the review worker, the engine calls the providers,
 * and publication runs in shadow mode (what would be posted is recorded in the publication ledger).
 * `close()` stops everything and deletes the scratch store. The Test Lab and `verdict review` run on it.
 */
export class ScratchReview {
  private constructor(
    readonly server: PullRequestServer,
    readonly store: Store,
    readonly config: Config,
    /** The scratch environment the configuration was read from. */
    readonly env: Env,
    readonly providers: ProviderSelection,
    private readonly worker: ReturnType<typeof createReviewWorker>,
    private readonly scratch: string,
  ) {}

  static async open(opts: ScratchReviewOptions): Promise<ScratchReview> {
    const server = new PullRequestServer(opts.sources);
    const base = await server.start();
    const scratch = mkdtempSync(join(tmpdir(), 'verdict-scratch-'));
    let store: Store | null = null;
    try {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const env: Env = {
        ...opts.env,
        DATABASE_URL: undefined,
        APP_ID: '1',
        PRIVATE_KEY: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
        PRIVATE_KEY_PATH: undefined,
        GHE_HOST: new URL(base).host,
        GHE_PROTOCOL: 'http',
        VERDICT_DB_PATH: join(scratch, 'scratch.sqlite'),
        VERDICT_QUEUE_DB_PATH: undefined,
        VERDICT_QUEUE_URL: undefined,
        VERDICT_QUEUE_TOKEN: undefined,
        VERDICT_PUBLISH_MODE: 'shadow',
        VERDICT_WORKER_CONCURRENCY: String(opts.concurrency),
        VERDICT_WORKER_MAX_JOBS: String(opts.concurrency),
      };
      const config = loadConfig(env);
      const providers = opts.providers(config, env);
      const log = opts.log;
      store = await openConfiguredStore(config);
      const probot = createProbot(config.github, log.child({ name: 'probot' }));
      const engine = createReviewEngine({
        store,
        config: config.review,
        providers,
        github: async (id) => (await probot.auth(id)) as GitHubClient,
        clock: systemClock,
        ids: randomId,
        log: log.child({ name: 'review' }),
        ...(opts.tap ? { tap: opts.tap } : {}),
      });
      const publication = reviewPublisherFor(store, config, log, { fileLinks: opts.fileLinks ?? true });
      const executor = reviewFlow({ engine, publication, store, log });
      const worker = createReviewWorker(store, store.jobs, executor, config, log);
      worker.start();
      return new ScratchReview(server, store, config, env, providers, worker, scratch);
    } catch (error) {
      await store?.close().catch(() => undefined);
      await server.close();
      rmSync(scratch, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * Queues a review of a served pull request, as an installation and an operator would have it: the
   * repository installed and enabled, with its `.github/verdict.yml` when given. Resolves with the run id.
   */
  async request(
    source: PullRequestSource,
    opts: { trigger: string; standalone?: RepoConfig; maxAttempts?: number },
  ): Promise<string> {
    const { store } = this;
    const fullName = `${source.owner}/${source.name}`;
    await store.repositories.upsertInstalled(fullName, SERVED_INSTALLATION_ID);
    await store.repositories.configure(fullName, { enabled: true }, { actor: 'scratch', reason: 'served' });
    if (opts.standalone) await store.repositories.setStandaloneConfig(fullName, opts.standalone);
    const { run } = await requestReview(store, {
      owner: source.owner,
      repo: source.name,
      number: source.number,
      installationId: SERVED_INSTALLATION_ID,
      headSha: source.pull.headSha,
      trigger: opts.trigger,
      ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
    });
    this.worker.kick();
    return run.id;
  }

  /** The run once it ended (a terminal status), or as it stands when `timeoutMs` passed first. */
  async settled(runId: string, timeoutMs: number): Promise<RunRecord | null> {
    const deadline = Date.now() + timeoutMs;
    let run = await this.store.runs.get(runId);
    while (run && !TERMINAL_RUN_STATUSES.has(run.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      run = await this.store.runs.get(runId);
    }
    return run;
  }

  async close(): Promise<void> {
    await this.worker.stop(5_000).catch(() => undefined);
    await this.store.close().catch(() => undefined);
    await this.server.close();
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
