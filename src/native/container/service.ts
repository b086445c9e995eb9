import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { BodyTooLargeError, readBody, sendJson as send } from '../../http/router.js';
import type { Config } from '../../config/index.js';
import { containerReviewRequestSchema, type ContainerPhase } from '../protocol.js';
import { InternalCallError, type InternalClient } from './internal.js';
import { ContainerReview, ReviewAbortedError } from './review.js';

export type ContainerServiceOptions = {
  config: Config;
  log: Logger;
  internal: InternalClient;
  /** `VERDICT_PUBLISH_MODE` of the container (code default `shadow`). */
  publishMode: 'live' | 'shadow';
  maxAttempts: number;
  /** `VERDICT_CF_SANDBOX_ENABLED=1`: validation runs through `sandbox.internal` (sandbox.ts). */
  sandboxEnabled?: boolean;
  /** Period of the phase log line (review-engine 8: 30 s). */
  phaseLogMs?: number;
  /** How long after a termination abort the process is gone at most (review-engine 8: 10 s). */
  stopWithinMs?: number;
};

const MAX_BODY = 64 * 1024;

const fail = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, { error: { code, message } });

/**
 * The review container's HTTP service (review-engine 4.2): `POST /review` runs one review at a time (503
 * `container_busy` beside it, 503 `container_stopping` once stopping) and answers after its final state
 * flush; `GET /health` reports the phase. While a review runs its phase is logged every `phaseLogMs`.
 */
export class ContainerService {
  private server: Server | null = null;
  private phase: ContainerPhase = 'idle';
  private current: ContainerReview | null = null;
  private running: Promise<unknown> | null = null;
  private phaseTimer: NodeJS.Timeout | null = null;
  private stopping = false;

  constructor(private readonly opts: ContainerServiceOptions) {}

  get state(): { phase: ContainerPhase; runId: string | null } {
    return { phase: this.phase, runId: this.current?.request.runId ?? null };
  }

  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    this.server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
    await new Promise<void>((resolve) => this.server!.listen(port, host, resolve));
    return (this.server.address() as AddressInfo).port;
  }

  private setPhase(phase: ContainerPhase): void {
    if (this.stopping && phase !== 'stopping') return;
    this.phase = phase;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      send(res, 200, { ok: !this.stopping, ...this.state });
      return;
    }
    if (req.method === 'POST' && path === '/review') return this.review(req, res);
    fail(res, 404, 'not_found', `${req.method} ${path} is not served by the review container`);
  }

  private async review(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A body past MAX_BODY or not JSON is null, refused below as an invalid request.
    let json: unknown = null;
    try {
      json = JSON.parse((await readBody(req, MAX_BODY)).toString('utf8'));
    } catch (error) {
      if (!(error instanceof BodyTooLargeError || error instanceof SyntaxError)) throw error;
    }
    if (this.stopping) return fail(res, 503, 'container_stopping', 'the container is stopping');
    if (this.current) {
      return fail(res, 503, 'container_busy', `the container is reviewing ${this.current.request.runId}`);
    }
    const parsed = containerReviewRequestSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.join('.') || 'body';
      return fail(res, 400, 'invalid_request', `${field}: ${issue?.message ?? 'invalid JSON body'}`);
    }
    const request = parsed.data;
    if (request.publishMode !== this.opts.publishMode) {
      // review-engine 7.5: a publish mode that does not match the dispatch lease's is a consistency failure.
      return fail(
        res,
        409,
        'publish_mode_mismatch',
        `the run was dispatched in ${request.publishMode} mode, the container publishes in ${this.opts.publishMode} mode (VERDICT_PUBLISH_MODE)`,
      );
    }
    const review = new ContainerReview(request, {
      config: this.opts.config,
      log: this.opts.log.child({ runId: request.runId }),
      internal: this.opts.internal,
      setPhase: (phase) => this.setPhase(phase),
      maxAttempts: this.opts.maxAttempts,
      sandboxEnabled: this.opts.sandboxEnabled ?? false,
    });
    this.current = review;
    this.startPhaseLog();
    const running = review.run();
    this.running = running.catch(() => undefined);
    try {
      send(res, 200, await running);
    } catch (error) {
      this.answerFailure(res, request.runId, error);
    } finally {
      this.stopPhaseLog();
      if (!this.stopping) {
        await review.close();
        this.current = null;
        this.running = null;
        this.setPhase('idle');
      }
    }
  }

  private answerFailure(res: ServerResponse, runId: string, error: unknown): void {
    if (error instanceof ReviewAbortedError || this.stopping) {
      return fail(res, 503, 'container_stopping', `review of ${runId} aborted: the container is stopping`);
    }
    if (error instanceof InternalCallError) {
      if (error.code === 'lease_lost') return fail(res, 409, 'lease_lost', error.message);
      return fail(res, 502, 'state_unavailable', error.message);
    }
    this.opts.log.error({ event: 'container-review-error', runId, err: error }, 'review failed');
    fail(res, 500, 'review_error', (error as Error)?.message ?? String(error));
  }

  private startPhaseLog(): void {
    this.stopPhaseLog();
    this.phaseTimer = setInterval(() => {
      this.opts.log.info({ event: 'container-phase', ...this.state }, `container phase ${this.phase}`);
    }, this.opts.phaseLogMs ?? 30_000);
    this.phaseTimer.unref();
  }

  private stopPhaseLog(): void {
    if (this.phaseTimer) clearInterval(this.phaseTimer);
    this.phaseTimer = null;
  }

  /**
   * The termination abort: no new review, the running one aborted, its state flushed as a checkpoint
   * (`final: false`, best effort), the server closed. Resolves within `stopWithinMs` whatever happens.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.setPhase('stopping');
    const deadline = this.opts.stopWithinMs ?? 10_000;
    const work = (async () => {
      const review = this.current;
      if (review) {
        review.abort();
        // Let the review unwind (its model call and GitHub calls end on the abort) for half the budget.
        await Promise.race([this.running, new Promise((r) => setTimeout(r, deadline / 2).unref())]);
        try {
          await review.checkpoint();
          this.opts.log.info(
            { event: 'container-checkpoint', runId: review.request.runId },
            'checkpoint flushed',
          );
        } catch (error) {
          this.opts.log.warn(
            { event: 'container-checkpoint-failed', runId: review.request.runId, err: error },
            'checkpoint flush failed',
          );
        }
      }
      this.stopPhaseLog();
      this.server?.closeAllConnections();
      await new Promise((resolve) => this.server?.close(resolve) ?? resolve(undefined));
    })();
    await Promise.race([work, new Promise((r) => setTimeout(r, deadline).unref())]);
  }
}
