import { watchdogMessages } from '../../src/scheduler/watchdog.js';
import type { ScheduledJobRecord } from '../../src/store/scheduler.js';

const NOW = Date.parse('2026-11-23T10:30:30.000Z');
const MIN = 60_000;
const JOBS = [
  { name: 'command-bridge', expression: '* * * * *' },
  { name: 'watchdog', expression: '3-59/15 * * * *' },
  { name: 'maintenance', expression: '17 * * * *' },
];

function record(name: string, over: Partial<ScheduledJobRecord> = {}): ScheduledJobRecord {
  const at = NOW - 10_000;
  return {
    name,
    expression: JOBS.find((j) => j.name === name)!.expression,
    lastStartedAt: at,
    lastFinishedAt: at + 100,
    lastStatus: 'ok',
    lastError: null,
    artifact: { generatedAt: new Date(at + 100).toISOString() },
    runs: 3,
    updatedAt: at + 100,
    ...over,
  };
}

const check = (records: ScheduledJobRecord[], schedulerStartedAt = NOW - 3 * 3_600_000) =>
  watchdogMessages({ jobs: JOBS, records, now: NOW, schedulerStartedAt, self: 'watchdog' });

describe('watchdog', () => {
  test('fresh heartbeats and artifacts: no messages (and the watchdog does not watch itself)', () => {
    expect(
      check([record('command-bridge'), record('maintenance', { lastStartedAt: NOW - 14 * MIN })]),
    ).toEqual([]);
  });

  test('a job that never ran is reported once it was due twice since the scheduler started', () => {
    expect(check([record('command-bridge')])).toEqual([
      'no cron heartbeat: maintenance (17 * * * * UTC) has not run since the scheduler started',
    ]);
    // Started 80 s ago: the bridge was due only once since, and maintenance not at all.
    expect(check([], NOW - 80_000)).toEqual([]);
    expect(check([], NOW - 90_000)).toEqual([
      'no cron heartbeat: command-bridge (* * * * * UTC) has not run since the scheduler started',
    ]);
  });

  test('no heartbeat since two ticks ago', () => {
    const messages = check([
      record('command-bridge', {
        lastStartedAt: NOW - 5 * MIN,
        lastFinishedAt: NOW - 5 * MIN + 50,
        artifact: { generatedAt: new Date(NOW - 5 * MIN + 50).toISOString() },
      }),
      record('maintenance', { lastStartedAt: NOW - 14 * MIN }),
    ]);
    expect(messages[0]).toMatch(
      /^no cron heartbeat: command-bridge \(\* \* \* \* \* UTC\) last ran at 2026-11-23T10:25:30\.000Z \(5 min ago\)$/,
    );
    // Its artifact is as old as its heartbeat: stale too.
    expect(messages[1]).toMatch(/^stale loop artifact: command-bridge artifact was generated at/);
    expect(messages).toHaveLength(2);
  });

  test('one missed minute is not an alarm', () => {
    expect(
      check([
        record('command-bridge', { lastStartedAt: NOW - 80_000 }),
        record('maintenance', { artifact: { generatedAt: new Date(NOW - 80_000).toISOString() } }),
      ]),
    ).toEqual([]);
  });

  test('a stale loop artifact beside a fresh heartbeat', () => {
    expect(
      check([
        record('command-bridge', { artifact: { generatedAt: new Date(NOW - 30 * MIN).toISOString() } }),
        record('maintenance'),
      ]),
    ).toEqual([
      expect.stringMatching(
        /^stale loop artifact: command-bridge artifact was generated at .*\(30 min ago\)$/,
      ),
    ]);
  });

  test('a missing or invalid generatedAt', () => {
    expect(
      check([
        record('command-bridge', { artifact: { executed: 1 } }),
        record('maintenance', { artifact: null }),
      ]),
    ).toEqual([
      'command-bridge artifact has a missing generatedAt',
      'maintenance artifact has a missing generatedAt',
    ]);
    expect(
      check([
        record('command-bridge', { artifact: { generatedAt: 'yesterday' } }),
        record('maintenance', { artifact: { generatedAt: 1_700_000_000_000 } }),
      ]),
    ).toEqual([
      'command-bridge artifact has an invalid generatedAt: "yesterday"',
      'maintenance artifact has an invalid generatedAt: 1700000000000',
    ]);
  });

  test('a failed last run is reported with its error', () => {
    expect(
      check([
        record('command-bridge', { lastStatus: 'error', lastError: 'database is locked' }),
        record('maintenance'),
      ]),
    ).toEqual(['command-bridge failed: database is locked']);
  });
});
