import { requestReview } from '../../src/review/request.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, example, postWebhook } from '../helpers/webhooks.js';
import { callApi, TOKENS } from '../helpers/operator.js';

/** Snapshot (operator-api 2.4) and pull-request detail (2.5). */
describe('snapshot and pull-request detail', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict(TOKENS);
  });
  afterEach(() => app.stop());

  const get = (path: string, token: string | null = 'read-secret') =>
    callApi(app.baseUrl, 'GET', path, token);

  async function seed(count: number) {
    const { store } = app.verdict;
    for (let i = 1; i <= count; i++) {
      await store.pullRequests.upsert({
        repo: i % 2 ? 'acme/api' : 'acme/web',
        number: i,
        title: i === 7 ? 'Fix the Flux capacitor' : `Change ${i}`,
        author: i === 8 ? 'marty' : 'doc',
        headSha: i.toString(16).padStart(40, '0'),
        baseRef: 'main',
      });
    }
  }

  test('the pull-requests view: schema, ttl, fallback view, at most 100 items, filters', async () => {
    await seed(105);
    await requestReview(app.verdict.store, {
      owner: 'acme',
      repo: 'api',
      number: 7,
      headSha: (7).toString(16).padStart(40, '0'),
      installationId: 1,
      trigger: 'opened',
    });
    const res = await get('/operator/api/snapshot?view=nonsense');
    expect(res.status).toBe(200);
    expect(res.cacheControl).toBe('no-store');
    expect(res.body).toMatchObject({
      ok: true,
      schema: 'verdict.operator.v1',
      ttlSeconds: 15,
      view: 'pull-requests',
    });
    expect(Date.parse(res.body.generatedAt)).not.toBeNaN();
    expect(res.body.data.items).toHaveLength(100);
    expect(res.body.data.truncated).toBe(true);

    const byRepo = await get('/operator/api/snapshot?repo=acme/web');
    expect(byRepo.body.data.items.every((i: any) => i.repo === 'acme/web')).toBe(true);
    expect(byRepo.body.data.items).toHaveLength(52);
    expect((await get('/operator/api/snapshot?q=flux')).body.data.items.map((i: any) => i.number)).toEqual([
      7,
    ]);
    expect((await get('/operator/api/snapshot?q=MARTY')).body.data.items.map((i: any) => i.number)).toEqual([
      8,
    ]);
    expect((await get('/operator/api/snapshot?q=%25')).body.data.items).toEqual([]);
    const queued = await get('/operator/api/snapshot?status=queued');
    expect(queued.body.data.items).toEqual([
      expect.objectContaining({
        repo: 'acme/api',
        number: 7,
        latestRun: expect.objectContaining({
          status: 'queued',
          reviewKey: expect.stringContaining('acme/api#7@'),
        }),
      }),
    ]);
    expect((await get(`/operator/api/snapshot?q=${'x'.repeat(301)}`)).status).toBe(400);
  });

  test('other views answer well-formed data', async () => {
    const a = await get('/operator/api/snapshot?view=analytics');
    expect(a.body).toMatchObject({ view: 'analytics', data: { queue: { lanes: [] }, failureReasons: [] } });
    const memory = (await get('/operator/api/snapshot?view=memory')).body;
    expect(memory.view).toBe('memory');
    expect(memory.data).toEqual({
      contexts: [],
      clusters: [],
      documents: [],
      totals: { contexts: 0, clusters: 0, knowledge: 0 },
    });
    expect((await get('/operator/api/snapshot?view=settings')).body.view).toBe('settings');
  });

  test('PR detail: runs, findings, events and the publication ledger; 404 and 400', async () => {
    const payload = example('pull_request', 'opened');
    const res = await postWebhook(app.baseUrl, 'pull_request', payload);
    await eventually(
      async () => (await app.verdict.store.deliveries.get(res.deliveryId))?.status === 'processed',
    );
    await app.verdict.store.publications.record({
      runId: null,
      repo: 'Codertocat/Hello-World',
      prNumber: 2,
      kind: 'comment',
      mode: 'shadow',
      status: 'shadowed',
      receipt: null,
      body: 'hello',
      error: null,
    });
    const detail = await get('/operator/api/pr?repo=Codertocat/Hello-World&number=2');
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ ok: true, schema: 'verdict.operator.v1' });
    const data = detail.body.data;
    expect(data.pullRequest).toMatchObject({ repo: 'Codertocat/Hello-World', number: 2 });
    expect(data.runs).toHaveLength(1);
    expect(data.findings).toEqual([]);
    expect(data.publications).toEqual([expect.objectContaining({ kind: 'comment', status: 'shadowed' })]);
    expect(data.events.map((e: any) => e.type).sort()).toEqual(['run', 'webhook']);
    expect(data.events.find((e: any) => e.type === 'webhook')).toMatchObject({
      deliveryId: res.deliveryId,
      outcome: 'enqueued',
    });

    expect((await get('/operator/api/pr?repo=Codertocat/Hello-World&number=999')).status).toBe(404);
    expect((await get('/operator/api/pr?repo=bad&number=2')).status).toBe(400);
    expect((await get('/operator/api/pr?repo=Codertocat/Hello-World&number=two')).status).toBe(400);
  });

  test('tokens: read token or an API key with read; others 401', async () => {
    const key: string = (
      await callApi(app.baseUrl, 'POST', '/operator/api/keys', 'admin-secret', { name: 'reader' })
    ).body.token;
    for (const path of ['/operator/api/snapshot', '/operator/api/pr?repo=a/b&number=1']) {
      expect((await get(path, null)).status).toBe(401);
      for (const token of ['admin-secret', 'command-secret', 'bridge-secret']) {
        expect([path, token, (await get(path, token)).status]).toEqual([path, token, 401]);
      }
      expect([200, 404]).toContain((await get(path, 'read-secret')).status);
      expect([200, 404]).toContain((await get(path, key)).status);
    }
  });
});
