import type { Logger } from 'pino';
import { systemTimers, type Timer, type Timers } from '../clock.js';
import type { QueueBackend } from '../queue/types.js';
import { renewIntervalMs } from '../queue/types.js';
import type { ClaimedJob } from '../queue/types.js';

export class LeaseLostError extends Error {
  constructor(readonly jobId: number) {
    super(`lease of job ${jobId} was lost`);
    this.name = 'LeaseLostError';
  }
}

export type JobContext = {
  /** Aborted when the lease is lost or the worker is shutting down hard. */
  signal: AbortSignal;
  /** Throws LeaseLostError unless this worker still holds the lease: call it right before publishing. */
  assertLease(): Promise<void>;
};

export type JobOutcome =
  | { type: 'ack' }
  | { type: 'retry'; error: string }
  | { type: 'dead'; reason: string; error: string }
  | { type: 'release'; delayMs: number };

export type JobHandler = (job: ClaimedJob, ctx: JobContext) => Promise<JobOutcome | void>;

export type QueueWorkerOptions = {
  queue: QueueBackend;
  queueName: string;
  /** Lease owner: `<workerId>:<pid>`. */
  owner: string;
  leaseMs: number;
  concurrency: number;
  handler: JobHandler;
  log: Logger;
  /** Idle poll period; a kick() wakes the loop at once. */
  pollMs?: number;
  /**
   * How often an idle worker dead-letters jobs whose lease expired on their last attempt (their worker
   * died every time); default 30 s. Expired leases with attempts left are reclaimed by claim itself.
   */
  reapEveryMs?: number;
  /** The clock and timers of polls, renewals, reaps and the grace period (default: the system's). */
  timers?: Timers;
  /**
   * How long to hold off claiming, in ms (0: claim now); asked before every claim. Holding, the worker
   * sleeps that long (at most `pollMs`; a kick wakes it) and asks again. The inline worker's thread yields
   * to the server's webhook intake with it (src/worker/thread.ts).
   */
  mayClaim?: () => number;
  /** Called when jobs are dead-lettered (an alert is raised); its failure never stops the worker. */
  onDeadLetter?: (e: {
    queue: string;
    reason: string;
    count: number;
    jobId?: number;
    error?: string;
  }) => Promise<void>;
};

/**
 * Claims jobs of one queue, runs them with a renewed lease, and acks, retries or dead-letters them. A job
 * whose lease is lost is aborted before it can publish, and its result is dropped (the fenced ack would
 * be refused anyway).
 */
export class QueueWorker {
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();
  private wake: (() => void) | null = null;
  private loopDone: Promise<void> | null = null;
  private readonly controllers = new Set<AbortController>();
  private lastReap = 0;
  private stopRequested!: () => void;
  private readonly stopping = new Promise<void>((resolve) => (this.stopRequested = resolve));

  private readonly timers: Timers;

  constructor(private readonly opts: QueueWorkerOptions) {
    this.timers = opts.timers ?? systemTimers;
  }

  get active(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Wakes an idle loop (a job was just enqueued). */
  kick(): void {
    this.wake?.();
  }

  private async sleep(ms: number): Promise<void> {
    // stop() may have come while a claim was in flight (its kick found no sleep to wake): do not sleep.
    if (!this.running) return;
    await new Promise<void>((resolve) => {
      let timer: Timer | null = null;
      const done = () => {
        timer?.cancel();
        resolve();
      };
      timer = this.timers.after(ms, done);
      this.wake = done;
    });
    this.wake = null;
  }

  private async loop(): Promise<void> {
    const poll = this.opts.pollMs ?? 1000;
    while (this.running) {
      if (this.inFlight.size >= this.opts.concurrency) {
        // Every slot is busy: wait for one to free up, or for stop().
        await Promise.race([...this.inFlight, this.stopping]);
        continue;
      }
      // Let timers and messages in between claims: with a synchronous driver (better-sqlite3) a run of
      // jobs would otherwise settle in microtasks only, and a `stop` or `kick` would wait for the run to end.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const hold = this.opts.mayClaim?.() ?? 0;
      if (hold > 0) {
        await this.sleep(Math.min(hold, poll));
        continue;
      }
      let jobs: ClaimedJob[] = [];
      try {
        jobs = await this.claim(this.opts.concurrency - this.inFlight.size);
      } catch (error) {
        this.opts.log.error(
          { event: 'claim-failed', err: error, queue: this.opts.queueName },
          'claim failed',
        );
        await this.sleep(poll);
        continue;
      }
      if (jobs.length === 0) {
        await this.reapIfDue();
        await this.sleep(poll);
        continue;
      }
      for (const job of jobs) {
        const task = this.run(job).finally(() => this.inFlight.delete(task));
        this.inFlight.add(task);
      }
    }
  }

  /** Fills free slots: one claim statement for several jobs when the backend can batch. */
  private async claim(free: number): Promise<ClaimedJob[]> {
    const { queue, queueName, owner, leaseMs } = this.opts;
    if (free > 1 && queue.claimMany) return queue.claimMany(queueName, owner, leaseMs, Math.min(free, 50));
    const job = await queue.claim(queueName, owner, leaseMs);
    return job ? [job] : [];
  }

  /** Tells `onDeadLetter`, in the background: an alert never delays or fails the worker. */
  private deadLettered(e: { reason: string; count: number; jobId?: number; error?: string }): void {
    const hook = this.opts.onDeadLetter;
    if (!hook) return;
    hook({ queue: this.opts.queueName, ...e }).catch((error: unknown) =>
      this.opts.log.warn({ event: 'dead-letter-hook-failed', err: error }, 'dead-letter alert failed'),
    );
  }

  private async reapIfDue(): Promise<void> {
    const every = this.opts.reapEveryMs ?? 30_000;
    if (this.timers.now() - this.lastReap < every) return;
    this.lastReap = this.timers.now();
    try {
      const reaped = await this.opts.queue.reapExpired();
      if (reaped > 0) {
        this.opts.log.error(
          { event: 'dead_lettered', reason: 'max_attempts', count: reaped, queue: this.opts.queueName },
          'jobs whose lease expired on their last attempt were dead-lettered',
        );
        this.deadLettered({ reason: 'max_attempts', count: reaped });
      }
    } catch (error) {
      this.opts.log.warn({ event: 'reap-failed', err: error }, 'could not reap expired leases');
    }
  }

  private async run(job: ClaimedJob): Promise<void> {
    const { queue, log, leaseMs } = this.opts;
    const controller = new AbortController();
    this.controllers.add(controller);
    let lost = false;
    let expiresAt = job.leaseExpiresAt;
    const markLost = () => {
      if (lost) return;
      lost = true;
      log.warn({ event: 'lease_lost_aborted', jobId: job.id, queue: job.queue }, 'lease lost: job aborted');
      controller.abort(new LeaseLostError(job.id));
    };
    const renew = async () => {
      try {
        const next = await queue.renew(job.id, job.receipt, leaseMs);
        if (next === null) markLost();
        else expiresAt = next;
      } catch (error) {
        log.warn({ event: 'lease_renew_failed', jobId: job.id, err: error }, 'lease renewal failed');
        if (this.timers.now() >= expiresAt) markLost();
      }
    };
    const timer = this.timers.every(renewIntervalMs(leaseMs), () => void renew());
    const ctx: JobContext = {
      signal: controller.signal,
      assertLease: async () => {
        if (!lost) await renew();
        if (lost) throw new LeaseLostError(job.id);
      },
    };
    let outcome: JobOutcome;
    // Once aborted (lease lost, or shutdown after the grace period) the runner does not wait for the
    // handler: it stops renewing and gives the job back. A handler that carries on is fenced: its
    // assertLease() fails and the queue refuses its receipt.
    const abortedSignal = new Promise<'aborted'>((resolve) =>
      controller.signal.addEventListener('abort', () => resolve('aborted'), { once: true }),
    );
    const handled = Promise.resolve()
      .then(() => this.opts.handler(job, ctx))
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    try {
      const settled = await Promise.race([handled, abortedSignal]);
      if (settled === 'aborted') {
        outcome = { type: 'release', delayMs: 0 };
      } else if ('error' in settled) {
        const error = settled.error;
        outcome =
          error instanceof LeaseLostError || controller.signal.aborted
            ? { type: 'release', delayMs: 0 }
            : { type: 'retry', error: (error as Error)?.message ?? String(error) };
      } else {
        outcome = settled.value ?? { type: 'ack' };
      }
    } finally {
      timer.cancel();
      this.controllers.delete(controller);
    }
    if (lost) return; // someone else owns it now; our receipt is stale
    await this.finish(job, outcome, markLost);
  }

  /** Records the handler's outcome in the queue; a refused ack means the lease was lost. */
  private async finish(job: ClaimedJob, outcome: JobOutcome, markLost: () => void): Promise<void> {
    const { queue, log } = this.opts;
    try {
      switch (outcome.type) {
        case 'ack':
          if (!(await queue.ack(job.id, job.receipt))) markLost();
          break;
        case 'retry': {
          const r = await queue.fail(job.id, job.receipt, outcome.error);
          if (r?.status === 'dead') {
            log.error(
              { event: 'dead_lettered', jobId: job.id, reason: r.reason, err: outcome.error },
              'job dead-lettered',
            );
            this.deadLettered({
              reason: r.reason ?? 'max_attempts',
              count: 1,
              jobId: job.id,
              error: outcome.error,
            });
          } else {
            log.warn({ event: 'job_retry', jobId: job.id, err: outcome.error }, 'job failed; will retry');
          }
          break;
        }
        case 'dead':
          await queue.fail(job.id, job.receipt, outcome.error, { deadReason: outcome.reason });
          log.error({ event: 'dead_lettered', jobId: job.id, reason: outcome.reason }, 'job dead-lettered');
          this.deadLettered({ reason: outcome.reason, count: 1, jobId: job.id, error: outcome.error });
          break;
        case 'release':
          await queue.release(job.id, job.receipt, { delayMs: outcome.delayMs });
          break;
      }
    } catch (error) {
      log.error({ event: 'job-finish-failed', jobId: job.id, err: error }, 'could not record job result');
    }
  }

  /**
   * Graceful stop: no new claims; in-flight jobs get `graceMs` to finish, then they are aborted and
   * released back to the queue.
   */
  async stop(graceMs = 25_000): Promise<void> {
    this.running = false;
    this.stopRequested();
    this.kick();
    await this.loopDone;
    const all = Promise.all(this.inFlight);
    let expire!: () => void;
    const graceOver = new Promise<boolean>((r) => (expire = () => r(true)));
    const grace = this.timers.after(graceMs, () => expire(), { unref: true });
    const timedOut = await Promise.race([all.then(() => false), graceOver]);
    grace.cancel();
    if (timedOut) {
      for (const c of this.controllers) c.abort(new Error('worker shutting down'));
      await all;
    }
  }
}
