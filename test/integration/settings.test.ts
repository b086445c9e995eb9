import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { callApi, TOKENS } from '../helpers/operator.js';

/** The workspace review policy routes (operator-api 2.9, 3, 4.6, 7). */
describe('settings (review policy)', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict(TOKENS);
  });
  afterEach(() => app.stop());

  const call = (method: string, path: string, token: string | null, body?: unknown, actor?: string) =>
    callApi(app.baseUrl, method, path, token, body, actor ? { 'x-operator-actor': actor } : {});
  const patch = (body: unknown, actor?: string) =>
    call('PATCH', '/operator/api/settings', 'admin-secret', body, actor);
  const get = () => call('GET', '/operator/api/settings', 'read-secret');

  test('JSON nested 5,000 levels deep answers 400 invalid_request, and the settings stay as they were', async () => {
    const before = await get();
    const deep = `{"revision": ${before.body.revision}, "settings": {"customInstructions": ${'['.repeat(5000)}1${']'.repeat(5000)}}}`;
    const res = await patch(deep);
    expect(res).toMatchObject({ status: 400, body: { ok: false, error: 'invalid_request' } });
    expect(res.body.message).toBe('Request body is nested deeper than 64 levels');
    expect((await get()).body).toEqual(before.body);
  });

  test('a fresh install serves the defaults at revision 1; a PATCH merges over the saved document and audits it', async () => {
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      ok: true,
      revision: 1,
      settings: { autoEnableNewRepos: false, fileChangeLimit: 500 },
    });
    expect(Date.parse(first.body.updatedAt)).not.toBeNaN();
    // Beside the policy, what this server runs whatever it says (no PATH here: no executor, switch unset).
    expect(first.body.server).toEqual({ validation: { switch: 'auto', running: false } });

    const a = await patch({ revision: 1, settings: { fileChangeLimit: 50 } }, 'alice');
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      ok: true,
      revision: 2,
      settings: { fileChangeLimit: 50, autoEnableNewRepos: false },
    });
    const b = await patch({ revision: 2, settings: { autoEnableNewRepos: true } });
    expect(b.body.settings).toMatchObject({ fileChangeLimit: 50, autoEnableNewRepos: true }); // earlier field kept
    expect((await get()).body).toMatchObject({
      revision: 3,
      settings: { fileChangeLimit: 50, autoEnableNewRepos: true },
    });

    const audit = await call('GET', '/operator/api/settings/audit?q=settings', 'read-secret');
    expect(audit.body.entries.map((e: any) => [e.action, e.actor, e.detail.toRevision])).toEqual([
      ['settings.update', 'service-admin', 3],
      ['settings.update', 'alice', 2],
    ]);
    expect(
      (await call('GET', '/operator/api/settings/audit?limit=1&offset=1', 'read-secret')).body.entries,
    ).toEqual([expect.objectContaining({ actor: 'alice' })]);
  });

  test('a stale revision is 409 "Review policy revision conflict"; of concurrent writers with one revision exactly one wins', async () => {
    await patch({ revision: 1, settings: { fileChangeLimit: 10 } });
    const stale = await patch({ revision: 1, settings: { fileChangeLimit: 20 } });
    expect(stale).toMatchObject({
      status: 409,
      body: { ok: false, message: 'Review policy revision conflict' },
    });
    expect((await get()).body.settings.fileChangeLimit).toBe(10);
    const racing = await Promise.all(
      Array.from({ length: 8 }, (_, i) => patch({ revision: 2, settings: { fileChangeLimit: 100 + i } })),
    );
    expect(racing.filter((r) => r.status === 200)).toHaveLength(1);
    expect(racing.filter((r) => r.status === 409)).toHaveLength(7);
    expect((await get()).body.revision).toBe(3);
  });

  test('invalid settings are 400 naming the dotted path; the stored document is unchanged', async () => {
    const cases: Array<[unknown, string]> = [
      [{ nope: 1 }, 'settings.nope'],
      [{ fileChangeLimit: 0 }, 'settings.fileChangeLimit'],
      [{ statusChecks: { requiredConfidence: 'high' } }, 'settings.statusChecks.requiredConfidence'],
      [{ filters: [{ conditions: [] }] }, 'settings.filters'],
    ];
    for (const [settings, path] of cases) {
      const res = await patch({ revision: 1, settings });
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.body.message).toContain(`Unknown or invalid field: ${path}`);
    }
    expect((await patch({ settings: {} })).body.message).toContain('revision');
    expect((await patch({ revision: 1, settings: {}, extra: true })).body.message).toContain('extra');
    expect((await patch('{')).body.error).toBe('invalid_json');
    expect((await get()).body.revision).toBe(1);
  });

  test('a body over 256 KiB is 413 "Request body is too large"', async () => {
    const res = await patch({ revision: 1, settings: { customInstructions: 'x'.repeat(300 * 1024) } });
    expect(res).toMatchObject({ status: 413, body: { ok: false, message: 'Request body is too large' } });
  });

  test('503 when the workspace row is absent, 500 when the storage fails', async () => {
    await app.verdict.store.db.knex('review_policies').del();
    expect(await get()).toMatchObject({
      status: 503,
      body: { message: 'Review policy schema is not initialized' },
    });
    expect(await patch({ revision: 1, settings: {} })).toMatchObject({ status: 503 });
    await app.verdict.store.db.knex.schema.dropTable('review_policies');
    expect(await get()).toMatchObject({
      status: 500,
      body: { message: 'Review policy storage is unavailable' },
    });
    expect(await patch({ revision: 1, settings: {} })).toMatchObject({ status: 500 });
  });

  test("the server's validation switch is shown as this process resolved it", async () => {
    const off = await startVerdict({ ...TOKENS, VERDICT_VALIDATION_ENABLED: '0' });
    try {
      const res = await fetch(`${off.baseUrl}/operator/api/settings`, {
        headers: { authorization: 'Bearer read-secret' },
      });
      expect(((await res.json()) as { server: unknown }).server).toEqual({
        validation: { switch: 'off', running: false },
      });
    } finally {
      await off.stop();
    }
  });

  test('tokens: read token reads, admin token writes; API keys reach neither', async () => {
    const key = (
      await call('POST', '/operator/api/keys', 'admin-secret', {
        name: 'k',
        scopes: ['read', 'memory:write'],
      })
    ).body.token;
    expect((await call('GET', '/operator/api/settings', 'admin-secret')).status).toBe(401);
    expect((await call('GET', '/operator/api/settings', key)).status).toBe(403);
    expect(
      (await call('PATCH', '/operator/api/settings', 'read-secret', { revision: 1, settings: {} })).status,
    ).toBe(401);
    expect((await call('PATCH', '/operator/api/settings', key, { revision: 1, settings: {} })).status).toBe(
      403,
    );
    expect((await call('GET', '/operator/api/settings/audit', 'command-secret')).status).toBe(401);
    expect((await call('GET', '/operator/api/settings/audit', key)).status).toBe(403);
    expect((await get()).body.revision).toBe(1);
  });
});
