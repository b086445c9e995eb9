import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { numberOrNull, parseJson } from './db.js';

export type ScheduledJobRecord = {
  name: string;
  expression: string;
  lastStartedAt: number | null;
  lastFinishedAt: number | null;
  lastStatus: 'running' | 'ok' | 'error' | null;
  lastError: string | null;
  /** What the job's last run produced (JSON with `generatedAt`), as stored; null when none. */
  artifact: unknown;
  runs: number;
  updatedAt: number;
};

type Raw = Record<string, unknown>;

function mapJob(row: Raw): ScheduledJobRecord {
  return {
    name: String(row.name),
    expression: String(row.expression),
    lastStartedAt: numberOrNull(row.last_started_at),
    lastFinishedAt: numberOrNull(row.last_finished_at),
    lastStatus: (row.last_status as ScheduledJobRecord['lastStatus']) ?? null,
    lastError: (row.last_error as string | null) ?? null,
    artifact: parseJson(row.artifact, null),
    runs: Number(row.runs),
    updatedAt: Number(row.updated_at),
  };
}

/** Heartbeats and artifacts of the scheduled jobs (review-engine 6.4). */
export class SchedulerStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  /** A run of `name` starts: its heartbeat. */
  async started(name: string, expression: string): Promise<void> {
    const now = this.clock.now();
    await this.knex('scheduled_jobs')
      .insert({
        name,
        expression,
        last_started_at: now,
        last_status: 'running',
        runs: 1,
        updated_at: now,
      })
      .onConflict('name')
      .merge({
        expression,
        last_started_at: now,
        last_status: 'running',
        runs: this.knex.raw('scheduled_jobs.runs + 1'),
        updated_at: now,
      });
  }

  /** A run of `name` ends, with the artifact it produced (kept from the last run when undefined). */
  async finished(
    name: string,
    outcome: { status: 'ok'; artifact?: unknown } | { status: 'error'; error: string; artifact?: unknown },
  ): Promise<void> {
    const now = this.clock.now();
    const values: Raw = {
      last_finished_at: now,
      last_status: outcome.status,
      last_error: outcome.status === 'error' ? outcome.error.slice(0, 4000) : null,
      updated_at: now,
    };
    if (outcome.artifact !== undefined) values.artifact = JSON.stringify(outcome.artifact);
    await this.knex('scheduled_jobs').where({ name }).update(values);
  }

  async list(): Promise<ScheduledJobRecord[]> {
    return (await this.knex('scheduled_jobs').orderBy('name')).map(mapJob);
  }

  async get(name: string): Promise<ScheduledJobRecord | null> {
    const row = await this.knex('scheduled_jobs').where({ name }).first();
    return row ? mapJob(row) : null;
  }

  /** Sets a job's stored artifact as it is (the watchdog's tests and repairs). */
  async setArtifact(name: string, artifact: string | null): Promise<void> {
    await this.knex('scheduled_jobs').where({ name }).update({ artifact });
  }
}
