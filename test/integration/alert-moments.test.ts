import pino from 'pino';
import { deadLettered, reviewFailed } from '../../src/alerts/moments.js';
import { FAILING_RUNS } from '../../src/scheduler/audit-rules.js';
import type { AlertDeps } from '../../src/alerts/raise.js';
import { requestReview } from '../../src/review/request.js';
import { QueueWorker } from '../../src/worker/runner.js';
import { reviewJobHandler } from '../../src/worker/review-consumer.js';
import { openTestStore, type TestStore } from '../helpers/store.js';
import { eventually } from '../helpers/webhooks.js';
import { github, reviewHarness } from '../helpers/review-harness.js';

/**
 * Alerts raised the moment their condition happens (issue 36 item 3), not only when the nightly audit
 * finds them: dead letters, a repository whose last reviews failed, the budget reached at admission.
 */
const silent = pino({ level: 'silent' });
const config = { alertUrl: null, telegramBotToken: null, telegramApiUrl: 'http://127.0.0.1:9' };

describe('moment alerts on the store', () => {
  let t: TestStore;
  let deps: AlertDeps;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
    deps = { store: t.store, log: silent, config };
  });
  afterEach(() => t.cleanup());

  async function finishedRun(n: number, status: 'completed' | 'failed') {
    const { run } = await requestReview(t.store, {
      owner: 'acme',
      repo: 'web',
      number: n,
      headSha: String(n).padStart(40, '0'),
      installationId: 1,
      trigger: 'opened',
    });
    t.clock.advance(1000);
    await t.store.runs.update(run.id, { status });
  }

  test(`reviews_failing when the last ${FAILING_RUNS} finished reviews of a repository failed, not before`, async () => {
    await finishedRun(1, 'failed');
    await finishedRun(2, 'completed');
    await finishedRun(3, 'failed');
    await finishedRun(4, 'failed');
    await reviewFailed(deps, 'acme/web');
    expect(await t.store.alerts.list()).toEqual([]);
    await finishedRun(5, 'failed');
    await reviewFailed(deps, 'acme/web');
    await reviewFailed(deps, 'acme/web');
    expect(await t.store.alerts.list()).toMatchObject([
      {
        kind: 'reviews_failing',
        repo: 'acme/web',
        severity: 'critical',
        count: 2,
        message: `The last ${FAILING_RUNS} reviews of acme/web failed`,
      },
    ]);
  });

  test('a job dead-lettered by a worker raises dead_letters at once, counted on the open alert', async () => {
    for (const key of ['a', 'b']) {
      await t.store.jobs.enqueue({ queue: 'lane', kind: 'k', key, payload: {}, maxAttempts: 1 });
    }
    const worker = new QueueWorker({
      queue: t.store.jobs,
      queueName: 'lane',
      owner: 'w:1',
      leaseMs: 60_000,
      concurrency: 1,
      log: silent,
      pollMs: 10,
      handler: async () => ({ type: 'retry', error: 'the model is down' }),
      onDeadLetter: (e) => deadLettered(deps, e),
    });
    worker.start();
    try {
      const alerts = await eventually(async () => {
        const list = await t.store.alerts.list();
        return list[0]?.count === 2 ? list : null;
      }, 10_000);
      expect(alerts).toMatchObject([{ kind: 'dead_letters', repo: null, severity: 'warning', count: 2 }]);
      expect(alerts[0]!.message).toMatch(
        /^job \d+ of the lane queue dead-lettered \(max_attempts\): the model is down/,
      );
    } finally {
      await worker.stop();
    }
  });

  test('the review consumer tells a final failure, not a failure that will be retried', async () => {
    const failedFor: string[] = [];
    const handler = reviewJobHandler(
      t.store,
      async () => ({ status: 'failed', error: 'boom', retry: true }),
      silent,
      {
        onRunFailed: async (repo) => void failedFor.push(repo),
      },
    );
    const { run } = await requestReview(t.store, {
      owner: 'acme',
      repo: 'web',
      number: 9,
      headSha: '9'.repeat(40),
      installationId: 1,
      trigger: 'opened',
      maxAttempts: 2,
    });
    const ctx = { signal: new AbortController().signal, assertLease: async () => undefined };
    const first = (await t.store.jobs.claim('reviews', 'w:1', 60_000))!;
    expect(await handler(first, ctx)).toMatchObject({ type: 'retry' });
    expect(failedFor).toEqual([]);
    await t.store.jobs.fail(first.id, first.receipt, 'boom');
    t.clock.advance(3_600_000);
    const second = (await t.store.jobs.claim('reviews', 'w:1', 60_000))!;
    expect(second.attempts).toBe(2);
    await handler(second, ctx);
    expect(failedFor).toEqual(['acme/web']);
    expect((await t.store.runs.get(run.id))!.status).toBe('failed');
  });
});

describe('budget_reached when admission refuses on the budget', () => {
  const h = reviewHarness();

  test('a review refused monthly_model_budget_reached raises the alert', async () => {
    const store = await h.start();
    await h.setPolicy({ monthlyModelBudgetUsd: 0 });
    github();
    const run = await h.reviewRun();
    expect(run).toMatchObject({ status: 'skipped', reason: 'monthly_model_budget_reached' });
    const alerts = await eventually(async () => {
      const list = await store.alerts.list();
      return list.length > 0 ? list : null;
    }, 10_000);
    expect(alerts).toMatchObject([{ kind: 'budget_reached', repo: null, severity: 'critical' }]);
    expect(alerts[0]!.message).toMatch(/^Automatic reviews are refused: /);
  }, 60_000);
});
