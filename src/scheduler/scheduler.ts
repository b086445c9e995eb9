import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { Timer, Timers } from '../clock.js';
import type { SchedulerStore } from '../store/scheduler.js';

/** One scheduled job: a cron expression (UTC) and what it does; what it returns is its artifact. */
export type ScheduledJob = {
  name: string;
  expression: string;
  /** `manual`: asked for now (`runNow`, `verdict jobs run`), not a tick of its expression. */
  run: (ctx: { manual: boolean }) => Promise<Record<string, unknown>>;
};

export type JobRun =
  | { status: 'ok'; artifact: Record<string, unknown> & { generatedAt: string } }
  | { status: 'error'; error: string };

/** The longest wait one timer is given (setTimeout's limit); a later tick is reached in several waits. */
const MAX_WAIT_MS = 2 ** 31 - 1;

/**
 * Runs the scheduled jobs of review-engine 6.4, every expression in UTC: croner computes each job's next
 * time, and the wait for it goes through the injected timers (a test moves a manual clock instead of
 * waiting for the minute). Each run records a heartbeat when it starts and its artifact (with
 * `generatedAt`) when it ends, which the watchdog reads. A job never overlaps itself: a tick that finds
 * the previous run still going is skipped and logged.
 */
export class Scheduler {
  private readonly waits = new Map<string, Timer>();
  private readonly inFlight = new Set<Promise<JobRun>>();
  /** The jobs with a run in flight (a tick of one of them is skipped). */
  private readonly busy = new Map<string, number>();
  private running = false;
  /** When this scheduler started (the watchdog gives jobs that much grace before expecting heartbeats). */
  startedAt: number | null = null;

  constructor(
    private readonly deps: {
      store: SchedulerStore;
      jobs: ScheduledJob[];
      log: Logger;
      /** The clock of heartbeats and artifacts, and the timers that wait for each tick. */
      timers: Timers;
    },
  ) {
    for (const job of deps.jobs) {
      // Validates the expression now: a bad one stops start-up instead of silently never running.
      new Cron(job.expression, { timezone: 'UTC', paused: true }).stop();
    }
  }

  get jobs(): ReadonlyArray<Pick<ScheduledJob, 'name' | 'expression'>> {
    return this.deps.jobs.map(({ name, expression }) => ({ name, expression }));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = this.deps.timers.now();
    for (const job of this.deps.jobs) {
      this.schedule(job, new Cron(job.expression, { timezone: 'UTC', paused: true }), this.startedAt);
    }
    this.deps.log.info(
      { event: 'scheduler-started', jobs: this.jobs },
      `scheduler started: ${this.deps.jobs.map((j) => `${j.name} (${j.expression} UTC)`).join(', ')}`,
    );
  }

  /** Waits for the job's first tick after `after`. */
  private schedule(job: ScheduledJob, cron: Cron, after: number): void {
    const next = cron.nextRun(new Date(after));
    if (next === null) {
      this.waits.delete(job.name);
      return;
    }
    this.wait(job, cron, next.getTime());
  }

  private wait(job: ScheduledJob, cron: Cron, at: number): void {
    const { timers } = this.deps;
    const ms = Math.min(Math.max(0, at - timers.now()), MAX_WAIT_MS);
    this.waits.set(
      job.name,
      timers.after(ms, () => {
        if (!this.running) return;
        // A wait cut short (a tick beyond the longest timer, a timer that fires early) waits the rest.
        if (timers.now() < at) return this.wait(job, cron, at);
        this.tick(job);
        // Ticks missed meanwhile (the process was suspended) are not made up: the next one is after now.
        this.schedule(job, cron, Math.max(at, timers.now()));
      }),
    );
  }

  private tick(job: ScheduledJob): void {
    if (this.busy.has(job.name)) {
      this.deps.log.warn(
        { event: 'cron-overlap', job: job.name },
        `${job.name}: the previous run is still going, this tick is skipped`,
      );
      return;
    }
    void this.track(job);
  }

  /** Runs a job now, with its heartbeat and artifact, as a scheduled tick would. */
  runNow(name: string): Promise<JobRun> {
    const job = this.deps.jobs.find((j) => j.name === name);
    if (!job) return Promise.reject(new Error(`no scheduled job named ${name}`));
    return this.track(job, true);
  }

  private track(job: ScheduledJob, manual = false): Promise<JobRun> {
    this.busy.set(job.name, (this.busy.get(job.name) ?? 0) + 1);
    const run = this.execute(job, manual);
    this.inFlight.add(run);
    void run.finally(() => {
      this.inFlight.delete(run);
      const left = (this.busy.get(job.name) ?? 1) - 1;
      if (left > 0) this.busy.set(job.name, left);
      else this.busy.delete(job.name);
    });
    return run;
  }

  private async execute(job: ScheduledJob, manual: boolean): Promise<JobRun> {
    const { store, log, timers } = this.deps;
    try {
      await store.started(job.name, job.expression);
      const artifact = { ...(await job.run({ manual })), generatedAt: new Date(timers.now()).toISOString() };
      await store.finished(job.name, { status: 'ok', artifact });
      log.debug({ event: 'cron-job-finished', job: job.name }, `${job.name} finished`);
      return { status: 'ok', artifact };
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      log.error({ event: 'cron-job-failed', job: job.name, err: error }, `${job.name} failed: ${message}`);
      await store.finished(job.name, { status: 'error', error: message }).catch(() => undefined);
      return { status: 'error', error: message };
    }
  }

  /** Resolves once the runs in flight (scheduled or asked for) have ended. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** Stops scheduling and waits for the runs in flight. */
  async stop(): Promise<void> {
    this.running = false;
    for (const wait of this.waits.values()) wait.cancel();
    this.waits.clear();
    await this.idle();
  }
}
