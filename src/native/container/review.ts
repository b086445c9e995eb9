import type { Logger } from 'pino';
import { ProbotOctokit } from 'probot';
import { z } from 'zod';
import { reviewExecutorFor, reviewPublisherFor } from '../../compose/parts.js';
import { RetryPublishError, retryPublish } from '../../publish/review-publisher.js';
import type { Config } from '../../config/index.js';
import type { GitHubClient } from '../../github/client.js';
import { REVIEW_QUEUE } from '../../review/request.js';
import type { ClaimedJob } from '../../queue/types.js';
import { reviewJobHandler, type DispatchOutcome } from '../../worker/review-consumer.js';
import type { Publication } from '../../worker/review-flow.js';
import type { JobOutcome } from '../../worker/runner.js';
import {
  brokerTokenSchema,
  stateBundleSchema,
  type ContainerPhase,
  type ContainerReviewRequest,
  type ContainerReviewResponse,
} from '../protocol.js';
import type { InternalClient } from './internal.js';
import { containerExecutors } from './sandbox.js';
import { ContainerState } from './state.js';

export type ContainerReviewDeps = {
  config: Config;
  log: Logger;
  internal: InternalClient;
  setPhase(phase: ContainerPhase): void;
  /** Attempts after which a failed run fails for good (the consumer's `MAX_ATTEMPTS`, default 8). */
  maxAttempts: number;
  /** Validation runs in the run's sandbox through `sandbox.internal` (sandbox.ts); else it is not run. */
  sandboxEnabled: boolean;
};

/** The run was aborted (termination): the review stops before anything else is published. */
export class ReviewAbortedError extends Error {
  constructor() {
    super('review aborted: the container is stopping');
    this.name = 'ReviewAbortedError';
  }
}

/**
 * One review in the container: the state bundle is hydrated into an in-memory store, then the run goes
 * through the Node worker's own review job (reviewJobHandler over reviewExecutorFor: admission, engine,
 * publication) with Octokits authenticated by broker tokens, and what changed is flushed back. `run()`
 * answers only after the final flush; `checkpoint()` flushes what there is so far (`final: false`).
 */
export class ContainerReview {
  private state: ContainerState | null = null;
  private readonly controller = new AbortController();
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    readonly request: ContainerReviewRequest,
    private readonly deps: ContainerReviewDeps,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(): void {
    this.controller.abort(new ReviewAbortedError());
  }

  async run(): Promise<ContainerReviewResponse> {
    const { request: req, deps } = this;
    const signal = this.controller.signal;
    deps.setPhase('hydrating');
    this.state = await ContainerState.open(deps.config.dedupeTtlSeconds, req.runId);
    const bundle = await deps.internal('state.internal', '/bundle', this.leased(), stateBundleSchema, signal);
    await this.state.hydrate(bundle);
    if (req.mode === 'retry-publish') return this.publishAgain();
    await this.admit();
    if (signal.aborted) throw new ReviewAbortedError();
    deps.setPhase('reviewing');
    let dispatch: DispatchOutcome | null = null;
    const handler = reviewJobHandler(this.state.store, this.executor(), deps.log, {
      onDispatch: (_jobId, outcome) => (dispatch = outcome),
    });
    const outcome = await handler(this.job(), {
      signal,
      assertLease: async () => {
        if (signal.aborted) throw new ReviewAbortedError();
      },
    });
    if (signal.aborted) throw new ReviewAbortedError();
    deps.setPhase('flushing');
    await this.flush(true);
    const outside = await this.state.outsideContract();
    if (outside.length > 0) {
      deps.log.info(
        { event: 'container-state-not-flushed', tables: outside },
        `rows of tables outside the state contract were not flushed: ${outside.join(', ')}`,
      );
    }
    return this.response(outcome ?? { type: 'ack' }, dispatch);
  }

  /**
   * The run (and its repository) as the Node runtime's intake would have stored them, when the bundle
   * holds none: the worker keeps its own run record, the container's store makes the run the review job
   * reads, under the worker's run id. A repository the App is installed on is reviewed (NAMES.md
   * "Installed means reviewed"): its row is created enabled unless an operator configured it.
   */
  private async admit(): Promise<void> {
    const { store } = this.state!;
    const req = this.request;
    if (await store.runs.get(req.runId)) return;
    if (!(await store.repositories.get(req.repo))) {
      await store.repositories.upsertInstalled(req.repo, req.installationId, {
        actor: 'native-runtime',
        reason: `installed means reviewed: a delivery of installation ${req.installationId}`,
      });
    }
    await store.runs.createOrGet({
      reviewKey: req.reviewKey,
      repo: req.repo,
      prNumber: req.prNumber,
      headSha: req.headSha,
      variant: req.variant,
      trigger: req.trigger,
      installationId: req.installationId,
      deliveryId: null,
    });
  }

  /**
   * A retried run's earlier attempt may have published and then lost its state (a failed final flush, a
   * crash): its ledger rows never reached D1, so every publication looks on GitHub before it is sent.
   */
  private publishing(): { lookFirst: boolean } {
    return { lookFirst: this.request.attempt > 1 };
  }

  /** What every internal call names: the run and the lease its token holds. */
  private leased(): { runId: string; leaseToken: string; leaseName?: string } {
    const { runId, leaseToken, leaseName } = this.request;
    return { runId, leaseToken, ...(leaseName ? { leaseName } : {}) };
  }

  /**
   * The bridge's `retry-publish` (review-engine 3.5, 7.5): the Node runtime's `retryPublish` over the
   * hydrated run (analysed, with an installation id) and the same publisher as a review's, then the final
   * flush. A run it refuses answers `failed` with the refusal's code, not to be retried.
   */
  private async publishAgain(): Promise<ContainerReviewResponse> {
    const { deps, request } = this;
    deps.setPhase('publishing');
    const store = this.state!.store;
    const publisher = reviewPublisherFor(store, deps.config, deps.log, this.publishing());
    let answer: ContainerReviewResponse;
    try {
      const outcome = await retryPublish(store, publisher, (id) => this.octokit(id), request.runId);
      answer =
        outcome.status === 'failed'
          ? {
              runId: request.runId,
              status: 'failed',
              reason: 'publish_failed',
              error: outcome.errors.join('; '),
            }
          : { runId: request.runId, status: 'completed', reason: outcome.status };
    } catch (error) {
      if (!(error instanceof RetryPublishError)) throw error;
      answer = {
        runId: request.runId,
        status: 'failed',
        reason: error.code,
        error: error.message,
        retry: false,
      };
    }
    deps.setPhase('flushing');
    await this.flush(true);
    return answer;
  }

  /** The best-effort flush of a termination abort: whatever the review stored so far, `final: false`. */
  async checkpoint(): Promise<void> {
    if (!this.state) return;
    await this.flush(false);
  }

  async close(): Promise<void> {
    await this.flushing.catch(() => undefined);
    await this.state?.close();
  }

  private flush(final: boolean): Promise<void> {
    // One flush at a time: a checkpoint never interleaves with the final flush.
    const next = this.flushing.then(async () => {
      const state = this.state!;
      const { tables, current } = await state.changes();
      const body = { ...this.leased(), final, tables };
      await this.deps.internal('state.internal', '/flush', body, z.unknown());
      state.flushed(current);
    });
    this.flushing = next.catch(() => undefined);
    return next;
  }

  private executor() {
    const { deps } = this;
    const store = this.state!.store;
    const publisher = reviewPublisherFor(store, deps.config, deps.log, this.publishing());
    const publication: Publication = {
      startCheck: (...args) => publisher.startCheck(...args),
      failCheck: (...args) => publisher.failCheck(...args),
      noticeCheck: (...args) => publisher.noticeCheck(...args),
      publish: (...args) => {
        deps.setPhase('publishing');
        return publisher.publish(...args);
      },
    };
    return reviewExecutorFor(store, (id) => this.octokit(id), deps.config, deps.log, {
      publication,
      validationExecutor: containerExecutors(deps.sandboxEnabled, deps.internal, () => this.leased()),
    });
  }

  /** An installation Octokit on a token from `broker.internal` (the App key never enters the container). */
  private async octokit(installationId: number): Promise<GitHubClient> {
    const { token } = await this.deps.internal(
      'broker.internal',
      '/token',
      { installationId, ...this.leased() },
      brokerTokenSchema,
      this.controller.signal,
    );
    const retries = this.deps.config.github.requestRetries;
    return new ProbotOctokit({
      auth: { token },
      baseUrl: this.deps.config.github.baseUrl,
      retry: { retries, enabled: retries > 0 },
      throttle: { enabled: false },
    }) as GitHubClient;
  }

  private job(): ClaimedJob {
    const now = Date.now();
    const { request: req } = this;
    return {
      id: 0,
      queue: REVIEW_QUEUE,
      kind: 'review',
      key: req.reviewKey,
      payload: { runId: req.runId, reviewKey: req.reviewKey },
      status: 'running',
      priority: 0,
      attempts: req.attempt,
      maxAttempts: this.deps.maxAttempts,
      runAt: now,
      leaseOwner: 'native-container',
      leaseExpiresAt: null,
      receipt: req.leaseToken,
      lastError: null,
      deadReason: null,
      createdAt: now,
      updatedAt: now,
    } as ClaimedJob;
  }

  private async response(
    outcome: JobOutcome,
    dispatch: DispatchOutcome | null,
  ): Promise<ContainerReviewResponse> {
    const runId = this.request.runId;
    if (dispatch !== null && dispatch !== 'dispatched') {
      return { runId, status: dispatch === 'dead_lettered' ? 'failed' : 'skipped', reason: dispatch };
    }
    switch (outcome.type) {
      case 'ack': {
        const run = await this.state!.store.runs.get(runId);
        if (run?.status === 'skipped') return { runId, status: 'skipped', reason: run.reason ?? 'skipped' };
        return { runId, status: 'completed' };
      }
      case 'retry':
        return { runId, status: 'failed', error: outcome.error, retry: true };
      case 'dead':
        return { runId, status: 'failed', reason: outcome.reason, error: outcome.error, retry: false };
      case 'release':
        return { runId, status: 'skipped', reason: 'skipped_locked' };
    }
  }
}
