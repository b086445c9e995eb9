import { pino } from 'pino';
import { ManualClock } from '../../src/clock.js';
import { NIGHTLY_AUDIT_EXPRESSION, runNightlyAudit, type AuditDeps } from '../../src/scheduler/audit.js';
import { londonTime } from '../../src/scheduler/london.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

const silent = pino({ level: 'silent' });
const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

describe('nightly-audit: the London gate', () => {
  test.each([
    ['winter: 23:30 UTC is 23:30 in London', '2026-01-15T23:30:00Z', '23:30'],
    ['winter: 22:30 UTC is 22:30', '2026-01-15T22:30:00Z', '22:30'],
    ['summer: 22:30 UTC is 23:30 (BST)', '2026-07-15T22:30:00Z', '23:30'],
    ['summer: 23:30 UTC is 00:30', '2026-07-15T23:30:00Z', '00:30'],
    ['the night before BST starts (29 March 2026)', '2026-03-28T23:30:00Z', '23:30'],
    ['the first BST night', '2026-03-29T22:30:00Z', '23:30'],
    ['the last BST night (BST ends 25 October 2026)', '2026-10-24T22:30:00Z', '23:30'],
    ['the first GMT night', '2026-10-25T23:30:00Z', '23:30'],
  ])('%s', (_name, iso, expected) => {
    expect(londonTime(at(iso))).toBe(expected);
  });

  let t: TestStore;
  afterEach(() => t?.cleanup());

  /** Ticks through one UTC day from 22:00 on a manual clock; which of the two ticks ran the audit. */
  async function ticksOn(day: string): Promise<Array<[string, boolean]>> {
    const clock = new ManualClock(at(`${day}T22:00:00Z`));
    t = await openTestStore('sqlite', clock);
    const deps: AuditDeps = {
      store: t.store,
      clock,
      log: silent,
      alerts: {
        store: t.store,
        log: silent,
        config: { alertUrl: null, telegramBotToken: null, telegramApiUrl: '' },
      },
    };
    const scheduler = new Scheduler({
      store: t.store.scheduler,
      log: silent,
      timers: clock,
      jobs: [
        {
          name: 'nightly-audit',
          expression: NIGHTLY_AUDIT_EXPRESSION,
          run: ({ manual }) => runNightlyAudit(deps, { manual }),
        },
      ],
    });
    scheduler.start();
    const seen: Array<[string, boolean]> = [];
    for (const minutes of [30, 60]) {
      clock.advance(minutes === 30 ? 30 * 60_000 : 60 * 60_000);
      await scheduler.idle();
      const record = await t.store.scheduler.get('nightly-audit');
      const artifact = record!.artifact as { ran: boolean; generatedAt: string };
      seen.push([artifact.generatedAt.slice(11, 16), artifact.ran]);
    }
    await scheduler.stop();
    return seen;
  }

  test('scheduled at 22:30 and 23:30 UTC, it runs once a night: at 23:30 London time, summer and winter', async () => {
    expect(await ticksOn('2026-01-15')).toEqual([
      ['22:30', false],
      ['23:30', true],
    ]);
    await t.cleanup();
    expect(await ticksOn('2026-07-15')).toEqual([
      ['22:30', true],
      ['23:30', false],
    ]);
  });
});

describe('nightly-audit: the checks', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite', new ManualClock(at('2026-01-15T23:30:00Z')));
  });
  afterEach(() => t.cleanup());
  const deps = (): AuditDeps => ({
    store: t.store,
    clock: t.clock,
    log: silent,
    alerts: {
      store: t.store,
      log: silent,
      config: { alertUrl: null, telegramBotToken: null, telegramApiUrl: '' },
    },
  });

  async function run(key: string, repo = 'acme/api', status = 'completed') {
    const { run } = await t.store.runs.createOrGet({
      reviewKey: key,
      repo,
      prNumber: 1,
      headSha: key.slice(-40),
      trigger: 'opened',
      installationId: 7,
    });
    await t.store.db.knex('runs').where({ id: run.id }).update({ status });
    return run;
  }

  test('a clean store: every check empty, no alert', async () => {
    const artifact = await runNightlyAudit(deps(), { manual: false });
    expect(artifact).toMatchObject({
      ran: true,
      londonTime: '23:30',
      checks: {
        analysedNeverPublished: { count: 0 },
        publicationsPending: { count: 0 },
        deadLetters: { count: 0 },
        commandsStuck: { count: 0 },
        deliveriesNotProcessed: { count: 0 },
        reviewsFailing: { count: 0 },
        budget: { budgetUsd: null, reached: false },
      },
      alerts: [],
    });
    expect(await t.store.alerts.list()).toEqual([]);
  });

  test('each inconsistency is found, in the artifact and as an alert; a second night counts on the same alerts', async () => {
    const knex = t.store.db.knex;
    const now = t.clock.now();
    const a = await run(`acme/api#1@${'a'.repeat(40)}`);
    await knex('runs').where({ id: a.id }).update({ analysis_status: 'analysed', publish_status: 'failed' });
    const p = await run(`acme/api#2@${'b'.repeat(40)}`, 'acme/api', 'running');
    await knex('runs')
      .where({ id: p.id })
      .update({ analysis_status: 'degraded', publish_status: 'pending', updated_at: now - 2 * HOUR });
    const fresh = await run(`acme/api#3@${'c'.repeat(40)}`, 'acme/api', 'running');
    await knex('runs')
      .where({ id: fresh.id })
      .update({ analysis_status: 'analysed', publish_status: 'pending', updated_at: now - 60_000 });
    for (const c of ['d', 'e', 'f']) await run(`acme/broken#4@${c.repeat(40)}`, 'acme/broken', 'failed');
    await run(`acme/mixed#5@${'1'.repeat(40)}`, 'acme/mixed', 'failed');
    await run(`acme/mixed#5@${'2'.repeat(40)}`, 'acme/mixed', 'completed');
    const { jobId } = await t.store.jobs.enqueue({ queue: 'reviews', kind: 'review', payload: {} });
    await knex('jobs').where({ id: jobId }).update({ status: 'dead', dead_reason: 'max_attempts' });
    const { command } = await t.store.commands.create({
      id: 'cmd_stuck',
      kind: 'requeue',
      payload: {},
      actor: 'op',
    });
    await knex('operator_commands')
      .where({ id: command.id })
      .update({ status: 'running', started_at: now - 20 * 60_000 });
    await t.store.deliveries.recordBatch([
      {
        id: 'guid-stuck',
        event: 'pull_request',
        action: 'opened',
        raw: '{}',
        bytes: 2,
        repo: 'acme/api',
        prNumber: 1,
        installationId: 7,
        outcome: 'enqueued',
        job: { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: 'guid-stuck' } },
      },
    ]);
    await knex('deliveries')
      .where({ id: 'guid-stuck' })
      .update({ received_at: now - 2 * HOUR });
    const policy = await t.store.policy.get();
    expect(await t.store.policy.update(policy!.revision, { monthlyModelBudgetUsd: 0 }, 'test')).toMatchObject(
      { ok: true },
    );

    const artifact = await runNightlyAudit(deps(), { manual: false });
    expect(artifact).toMatchObject({
      ran: true,
      checks: {
        analysedNeverPublished: { count: 1, sample: [a.reviewKey] },
        publicationsPending: { count: 1, sample: [p.reviewKey] },
        deadLetters: { count: 1, sample: [`job ${jobId} (reviews: max_attempts)`] },
        commandsStuck: { count: 1, sample: ['cmd_stuck (requeue)'] },
        deliveriesNotProcessed: { count: 1, sample: ['guid-stuck'] },
        reviewsFailing: { count: 1, sample: ['acme/broken'] },
        // Two analysed runs recorded no model telemetry: the month's spend is unknown, so not reached.
        budget: { budgetUsd: 0, spentUsd: null, known: false, reached: false },
      },
    });
    const kinds = async () =>
      (await t.store.alerts.list()).map((x) => [x.kind, x.repo, x.count, x.message.split(':')[0]]).sort();
    expect(await kinds()).toEqual(
      [
        ['audit_inconsistency', null, 1, 'nightly audit'],
        ['audit_inconsistency', null, 1, 'nightly audit'],
        ['audit_inconsistency', null, 1, 'nightly audit'],
        ['audit_inconsistency', null, 1, 'nightly audit'],
        ['dead_letters', null, 1, '1 job(s) are dead-lettered'],
        ['reviews_failing', 'acme/broken', 1, 'The last 3 reviews of acme/broken failed'],
      ].sort(),
    );
    t.clock.advance(24 * HOUR);
    await runNightlyAudit(deps(), { manual: false });
    expect((await t.store.alerts.list()).map((x) => x.count)).toEqual([2, 2, 2, 2, 2, 2]);
  });

  test("the month's model spend at the policy's budget is budget_reached", async () => {
    const policy = await t.store.policy.get();
    expect(await t.store.policy.update(policy!.revision, { monthlyModelBudgetUsd: 0 }, 'test')).toMatchObject(
      { ok: true },
    );
    const artifact = await runNightlyAudit(deps(), { manual: false });
    expect(artifact).toMatchObject({
      checks: { budget: { budgetUsd: 0, spentUsd: 0, known: true, reached: true } },
    });
    expect((await t.store.alerts.list()).map((x) => [x.kind, x.severity, x.message])).toEqual([
      [
        'budget_reached',
        'critical',
        "This month's model spend $0.00 has reached the budget of $0.00: automatic reviews are refused",
      ],
    ]);
  });

  test('outside 23:30 in London a tick skips; a manual run (verdict jobs run) checks whatever the time', async () => {
    t.clock.advance(-HOUR); // 22:30 UTC in January: 22:30 in London
    expect(await runNightlyAudit(deps(), { manual: false })).toEqual({
      ran: false,
      londonTime: '22:30',
      reason: 'not_2330_in_london',
    });
    expect(await runNightlyAudit(deps(), { manual: true })).toMatchObject({ ran: true, londonTime: '22:30' });
  });
});
