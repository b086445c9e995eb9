import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, example, postWebhook } from '../helpers/webhooks.js';
import { callApi, TOKENS } from '../helpers/operator.js';

/** Read routes of operator-api 4.1: repositories, webhook history, one delivery, analytics. */
describe('operator read routes', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict(TOKENS);
  });
  afterEach(() => app.stop());

  const get = (path: string, token: string | null = 'read-secret') =>
    callApi(app.baseUrl, 'GET', path, token);

  test('webhooks: status filter, limit rules, one delivery, 404 for a missing id', async () => {
    const opened = await postWebhook(app.baseUrl, 'pull_request', example('pull_request', 'opened'));
    const ignored = await postWebhook(app.baseUrl, 'pull_request', example('pull_request', 'labeled'));
    await eventually(
      async () => (await app.verdict.store.deliveries.get(opened.deliveryId))?.status === 'processed',
    );
    const all = await get('/operator/api/webhooks');
    expect(all.status).toBe(200);
    expect(all.cacheControl).toBe('no-store');
    expect(all.body.deliveries.map((d: any) => d.id).sort()).toEqual(
      [opened.deliveryId, ignored.deliveryId].sort(),
    );
    expect(all.body.deliveries[0]).not.toHaveProperty('payload');
    expect(
      (await get('/operator/api/webhooks?status=ignored')).body.deliveries.map((d: any) => d.id),
    ).toEqual([ignored.deliveryId]);
    expect((await get('/operator/api/webhooks?limit=1')).body.deliveries).toHaveLength(1);
    expect((await get('/operator/api/webhooks?limit=nope')).body.deliveries).toHaveLength(2);
    expect((await get('/operator/api/webhooks?status=weird')).status).toBe(400);
    const one = await get(`/operator/api/webhooks/${opened.deliveryId}`);
    expect(one.body).toMatchObject({
      ok: true,
      delivery: { id: opened.deliveryId, event: 'pull_request', action: 'opened', status: 'processed' },
    });
    expect(await get('/operator/api/webhooks/not-a-delivery')).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found' },
    });
  });

  test('repos lists the stored repositories', async () => {
    await app.verdict.store.repositories.upsertInstalled('acme/api', 9);
    const res = await get('/operator/api/repos');
    expect(res.body).toMatchObject({ ok: true, repos: [expect.objectContaining({ fullName: 'acme/api' })] });
  });

  test('analytics: queue projection per lane, statuses, and at most 100 failure reasons', async () => {
    const { store } = app.verdict;
    for (let i = 0; i < 120; i++) {
      await store.jobs.enqueue({ queue: 'lane', kind: 'k', payload: {}, maxAttempts: 1 });
      const job = (await store.jobs.claim('lane', 'w:1', 1000))!;
      await store.jobs.fail(job.id, job.receipt, 'x', { deadReason: `reason-${i % 110}` });
    }
    await store.jobs.enqueue({ queue: 'reviews', kind: 'review', payload: {} });
    const res = await get('/operator/api/analytics');
    expect(res.status).toBe(200);
    const a = res.body.analytics;
    expect(a.queue.lanes).toEqual([
      expect.objectContaining({ queue: 'lane', dead: 120, waiting: 0, oldestWaitingAgeMs: null }),
      expect.objectContaining({ queue: 'reviews', waiting: 1, oldestWaitingAgeMs: expect.any(Number) }),
    ]);
    expect(a.failureReasons).toHaveLength(100);
    expect(a.failureReasons[0]).toMatchObject({ source: 'queue', count: 2 });
    expect(typeof a.generatedAt).toBe('string');
  });

  test('tokens: the read token; an API key with read may list repos but not webhooks or analytics', async () => {
    const key: string = (
      await callApi(app.baseUrl, 'POST', '/operator/api/keys', 'admin-secret', { name: 'reader' })
    ).body.token;
    const rows: Array<[string, boolean]> = [
      ['/operator/api/repos', true],
      ['/operator/api/webhooks', false],
      ['/operator/api/webhooks/x', false],
      ['/operator/api/analytics', false],
    ];
    for (const [path, keyAllowed] of rows) {
      expect([path, (await get(path, null)).status]).toEqual([path, 401]);
      for (const token of Object.values(TOKENS)) {
        const res = await get(path, token);
        const expected = token === 'read-secret' ? [200, 404] : [401];
        expect([path, token, expected.includes(res.status)]).toEqual([path, token, true]);
      }
      expect([path, (await get(path, key)).status]).toEqual([path, keyAllowed ? 200 : 403]);
    }
  });

  test('PATCH /repos/:encodedRepo merges the operator configuration, audits it, and rejects unknown fields', async () => {
    await app.verdict.store.repositories.upsertInstalled('acme/api', 9);
    const patch = (body: unknown, token = 'admin-secret', repo = 'acme%2Fapi') =>
      callApi(app.baseUrl, 'PATCH', `/operator/api/repos/${repo}`, token, body, {
        'x-operator-actor': 'ops',
      });
    const first = await patch({ enabled: false, branches: { include: ['main'] }, reason: 'noisy' });
    expect(first.status).toBe(200);
    expect(first.body.repo.config).toEqual({ enabled: false, branches: { include: ['main'] } });
    const second = await patch({
      branches: { exclude: ['legacy/*'] },
      model: { provider: 'openai', model: 'gpt-4.1' },
    });
    expect(second.body.repo.config).toEqual({
      enabled: false,
      branches: { include: ['main'], exclude: ['legacy/*'] },
      model: { provider: 'openai', model: 'gpt-4.1' },
    });
    const [audit] = await app.verdict.store.audit.list({ action: 'repos.configure' });
    expect(audit).toMatchObject({
      actor: 'ops',
      target: 'acme/api',
      detail: { patch: { branches: { exclude: ['legacy/*'] } } },
    });
    expect((await app.verdict.store.audit.list({ action: 'repos.configure' }))[1]).toMatchObject({
      reason: 'noisy',
    });

    for (const [body, field] of [
      [{ surprise: true }, 'surprise'],
      [{ branches: { include: 'main' } }, 'branches.include'],
      [{ branches: { only: [] } }, 'only'],
      [{ validation: { provider: 'cloud' } }, 'validation.provider'],
      [{ validation: { provider: 'executor_a' } }, 'use "bubblewrap"'],
      [{ validation: { provider: 'executor_b' } }, 'use "e2b"'],
      [{ alerts: { telegram: 'yes' } }, 'alerts.telegram'],
      [{ reason: 'only a reason' }, 'enabled'],
    ] as const) {
      const res = await patch(body);
      expect([field, res.status, res.body.error]).toEqual([field, 400, 'invalid_request']);
      expect(res.body.message).toContain(field);
    }
    expect((await patch({ enabled: true }, 'admin-secret', 'not-a-repo')).status).toBe(400);
    expect((await patch({ enabled: true }, 'admin-secret', 'acme%2F..')).status).toBe(400);
    expect((await patch({ enabled: true }, 'read-secret')).status).toBe(401);
    expect((await app.verdict.store.repositories.get('acme/api'))!.config).toMatchObject({ enabled: false });
  });
  test('PATCH /repos/:encodedRepo creates the configuration of a repository Verdict has not seen yet', async () => {
    const patch = (repo: string, body: unknown) =>
      callApi(app.baseUrl, 'PATCH', `/operator/api/repos/${repo}`, 'admin-secret', body, {
        'x-operator-actor': 'ops',
      });
    const repos = app.verdict.store.repositories;

    // An invalid body creates nothing.
    for (const body of [
      { enabled: true, surprise: 1 },
      { validation: { provider: 'executor_b' } },
      { reason: 'only a reason' },
    ]) {
      expect((await patch('acme%2Fnew-repo', body)).status).toBe(400);
    }
    expect(await repos.get('acme/new-repo')).toBeNull();
    expect(await app.verdict.store.audit.list({ action: 'repos.configure' })).toEqual([]);

    const first = await patch('acme%2Fnew-repo', {
      enabled: true,
      validation: { provider: 'bubblewrap' },
      reason: 'before its first PR',
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      ok: true,
      created: true,
      repo: {
        fullName: 'acme/new-repo',
        owner: 'acme',
        name: 'new-repo',
        installed: false,
        installationId: null,
        config: { enabled: true, validation: { provider: 'bubblewrap' } },
      },
    });
    const [audit] = await app.verdict.store.audit.list({ action: 'repos.configure' });
    expect(audit).toMatchObject({
      actor: 'ops',
      target: 'acme/new-repo',
      reason: 'before its first PR',
      detail: { patch: { enabled: true }, created: true },
    });

    // The second PATCH updates it; another case of the name configures the same repository.
    const second = await patch('Acme%2FNew-Repo', { validation: { provider: 'e2b' } });
    expect(second.body).toMatchObject({
      created: false,
      repo: {
        fullName: 'acme/new-repo',
        config: { enabled: true, validation: { provider: 'e2b' } },
      },
    });
    expect((await repos.list()).map((r) => r.fullName)).toEqual(['acme/new-repo']);

    // The installation arrives later: it is recorded and the configuration is kept.
    await repos.upsertInstalled('acme/new-repo', 77);
    expect(await repos.get('acme/new-repo')).toMatchObject({
      installed: true,
      installationId: 77,
      config: { enabled: true, validation: { provider: 'e2b' } },
    });
  });
});
