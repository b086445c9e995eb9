import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { SchedulerStore } from '../store/scheduler.js';

/** One scheduled job: a cron expression (UTC) and what it does; what it returns is its artifact. */
export type ScheduledJob = {
  name: string;
  expression: string;
  run: () => Promise<Record<string, unknown>>;
};

export type JobRun =
  | { status: 'ok'; artifact: Record<string, unknown> & { generatedAt: string } }
  | { status: 'error'; error: string };

/**
 * Runs the scheduled jobs of review-engine 6.4 with croner, every expression in UTC. Each run records a
 * heartbeat when it starts and its artifact (with `generatedAt`) when it ends, which the watchdog reads.
 * A job never overlaps itself: a tick that finds the previous run still going is skipped and logged.
 */
export class Scheduler {
  private crons: Cron[] = [];
  private readonly inFlight = new Set<Promise<JobRun>>();
  /** When this scheduler started (the watchdog gives jobs that much grace before expecting heartbeats). */
  startedAt: number | null = null;

  constructor(
    private readonly deps: {
      store: SchedulerStore;
      jobs: ScheduledJob[];
      log: Logger;
      clock: Clock;
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
    if (this.crons.length > 0) return;
    this.startedAt = this.deps.clock.now();
    for (const job of this.deps.jobs) {
      const cron = new Cron(
        job.expression,
        {
          name: job.name,
          timezone: 'UTC',
          protect: () =>
            this.deps.log.warn(
              { event: 'cron-overlap', job: job.name },
              `${job.name}: the previous run is still going, this tick is skipped`,
            ),
        },
        () => {
          void this.track(job);
        },
      );
      this.crons.push(cron);
    }
    this.deps.log.info(
      { event: 'scheduler-started', jobs: this.jobs },
      `scheduler started: ${this.deps.jobs.map((j) => `${j.name} (${j.expression} UTC)`).join(', ')}`,
    );
  }

  /** Runs a job now, with its heartbeat and artifact, as a scheduled tick would. */
  runNow(name: string): Promise<JobRun> {
    const job = this.deps.jobs.find((j) => j.name === name);
    if (!job) return Promise.reject(new Error(`no scheduled job named ${name}`));
    return this.track(job);
  }

  private track(job: ScheduledJob): Promise<JobRun> {
    const run = this.execute(job);
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return run;
  }

  private async execute(job: ScheduledJob): Promise<JobRun> {
    const { store, log, clock } = this.deps;
    try {
      await store.started(job.name, job.expression);
      const artifact = { ...(await job.run()), generatedAt: new Date(clock.now()).toISOString() };
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

  /** Stops scheduling and waits for the runs in flight. */
  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    this.crons = [];
    await Promise.allSettled([...this.inFlight]);
  }
}
