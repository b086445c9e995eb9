import type { RunRecord } from '../../src/store/runs.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, example, postWebhook } from '../helpers/webhooks.js';

const REPO = 'Codertocat/Hello-World';

/** From a webhook to a dispatched review: ingress → webhooks lane → run + job → reviews lane → executor. */
describe('the in-process reviews lane', () => {
  let app: RunningVerdict;
  let reviewed: RunRecord[];
  afterEach(() => app.stop());

  async function start(env: Record<string, string> = {}) {
    reviewed = [];
    app = await startVerdict(
      { VERDICT_QUEUE_LEASE_SECONDS: '30', ...env },
      {
        reviewExecutor: async (run, _job, ctx) => {
          await ctx.assertLease();
          reviewed.push(run);
          return { status: 'completed' };
        },
      },
    );
  }

  test('a pull_request.opened delivery ends with its run dispatched once and completed', async () => {
    await start();
    const payload = example('pull_request', 'opened');
    payload.installation = { id: 77 };
    await postWebhook(app.baseUrl, 'pull_request', payload);
    const run = await eventually(async () => {
      const r = await app.verdict.store.runs.latestForPr(REPO, 2);
      return r?.status === 'completed' ? r : null;
    }, 15_000);
    expect(reviewed.map((r) => r.id)).toEqual([run.id]);
    const [job] = await app.verdict.store.jobs.list({ queue: 'reviews' });
    expect(job).toMatchObject({ status: 'done', attempts: 1 });
    expect(job!.leaseOwner).toMatch(/:\d+$/);
  });

  test('with the in-process worker off, review jobs wait for a separate worker', async () => {
    await start({ VERDICT_WORKER_INLINE: '0' });
    expect(app.verdict.reviewWorker).toBeNull();
    expect(app.verdict.webhookWorker).toBeNull();
  });
});
