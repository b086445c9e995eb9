import { Cron } from 'croner';
import type { ScheduledJobRecord } from '../store/scheduler.js';

/**
 * The watchdog's checks (review-engine 6.4): for every scheduled job but itself, a missing cron
 * heartbeat, and an artifact (the job's last output, the "loop artifact") that is stale or has a missing
 * or invalid `generatedAt`. A job is late when it was due at least twice since its last heartbeat (one
 * slow or skipped tick is not an alarm); a job that never ran is late when it was due twice since the
 * scheduler started.
 */
export function watchdogMessages(input: {
  jobs: ReadonlyArray<{ name: string; expression: string }>;
  records: ScheduledJobRecord[];
  now: number;
  schedulerStartedAt: number;
  self?: string;
}): string[] {
  const messages: string[] = [];
  const byName = new Map(input.records.map((r) => [r.name, r]));
  for (const job of input.jobs) {
    if (job.name === input.self) continue;
    const cron = new Cron(job.expression, { timezone: 'UTC', paused: true });
    // The second-to-last time the job was due: a heartbeat older than that means two missed ticks.
    const due = cron.previousRuns(2, new Date(input.now))[1]?.getTime() ?? null;
    cron.stop();
    const record = byName.get(job.name);
    const since = (at: number) =>
      `${new Date(at).toISOString()} (${Math.round((input.now - at) / 60_000)} min ago)`;
    if (!record || record.lastStartedAt === null) {
      if (due !== null && due >= input.schedulerStartedAt) {
        messages.push(
          `no cron heartbeat: ${job.name} (${job.expression} UTC) has not run since the scheduler started`,
        );
      }
      continue;
    }
    if (due !== null && record.lastStartedAt < due) {
      messages.push(
        `no cron heartbeat: ${job.name} (${job.expression} UTC) last ran at ${since(record.lastStartedAt)}`,
      );
    }
    if (record.lastStatus === 'running' || record.lastFinishedAt === null) continue;
    const artifact = record.artifact as { generatedAt?: unknown } | null;
    if (record.lastStatus === 'error' && artifact === null) {
      messages.push(`${job.name} failed: ${record.lastError ?? 'unknown error'}`);
      continue;
    }
    if (artifact === null || typeof artifact !== 'object' || artifact.generatedAt === undefined) {
      messages.push(`${job.name} artifact has a missing generatedAt`);
      continue;
    }
    const generatedAt =
      typeof artifact.generatedAt === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(artifact.generatedAt)
        ? Date.parse(artifact.generatedAt)
        : Number.NaN;
    if (!Number.isFinite(generatedAt)) {
      messages.push(
        `${job.name} artifact has an invalid generatedAt: ${JSON.stringify(artifact.generatedAt)}`,
      );
      continue;
    }
    if (due !== null && generatedAt < due) {
      messages.push(`stale loop artifact: ${job.name} artifact was generated at ${since(generatedAt)}`);
    }
    if (record.lastStatus === 'error')
      messages.push(`${job.name} failed: ${record.lastError ?? 'unknown error'}`);
  }
  return messages;
}
