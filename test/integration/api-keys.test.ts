import { createHash } from 'node:crypto';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { callApi, TOKENS } from '../helpers/operator.js';

/** Scoped API keys (operator-api 2.2, 4.6, 5.2). */
describe('API keys', () => {
  let app: RunningVerdict;
  afterEach(() => app.stop());

  const call = (method: string, path: string, token: string | null, body?: unknown) =>
    callApi(app.baseUrl, method, path, token, body, { 'x-operator-actor': 'alice' });
  const admin = (method: string, path: string, body?: unknown) => call(method, path, 'admin-secret', body);

  test('creation answers 201 with the key, a vdt_ token shown once, and the API base URL; only the hash is stored', async () => {
    app = await startVerdict(TOKENS);
    const res = await admin('POST', '/operator/api/keys', { name: 'dashboard reader' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { key, token, apiBaseUrl, ok } = res.body;
    expect(ok).toBe(true);
    expect(token).toMatch(/^vdt_[0-9a-f]{64}$/);
    expect(apiBaseUrl).toBe(`${app.baseUrl}/operator/api`);
    expect(key).toMatchObject({
      name: 'dashboard reader',
      scopes: ['read'],
      prefix: token.slice(0, 14),
      status: 'active',
      createdBy: 'alice',
    });
    expect(typeof key.id).toBe('string');
    expect(typeof key.createdAt).toBe('number');

    const rows = await app.verdict.store.db.knex('api_keys').select();
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(token);

    const listed = await admin('GET', '/operator/api/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toEqual([key]);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(JSON.stringify(listed.body)).not.toContain(rows[0].token_hash);
    const [audit] = await app.verdict.store.audit.list({ action: 'keys.create' });
    expect(audit).toMatchObject({ actor: 'alice', target: key.id });
  });

  test('VERDICT_PUBLIC_URL sets apiBaseUrl; scopes are validated; q searches name and prefix', async () => {
    app = await startVerdict({ ...TOKENS, VERDICT_PUBLIC_URL: 'https://verdict.example.com/' });
    const a = await admin('POST', '/operator/api/keys', {
      name: 'Memory writer',
      scopes: ['memory:write', 'read'],
    });
    expect(a.body.apiBaseUrl).toBe('https://verdict.example.com/operator/api');
    expect(a.body.key.scopes).toEqual(['memory:write', 'read']);
    await admin('POST', '/operator/api/keys', { name: 'other' });
    expect((await admin('GET', '/operator/api/keys?q=MEMORY')).body.keys.map((k: any) => k.name)).toEqual([
      'Memory writer',
    ]);
    expect((await admin('GET', `/operator/api/keys?q=${a.body.token.slice(0, 14)}`)).body.keys).toHaveLength(
      1,
    );
    expect((await admin('GET', '/operator/api/keys?q=100%25_')).body.keys).toEqual([]);

    for (const [body, field] of [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x', scopes: ['admin'] }, 'scopes'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', extra: true }, 'extra'],
      [{ name: 'a\u0000b' }, 'name'],
    ] as const) {
      const res = await admin('POST', '/operator/api/keys', body);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
      expect(res.body.message).toContain(field);
    }
    expect((await admin('GET', `/operator/api/keys?q=${'x'.repeat(301)}`)).status).toBe(400);
  });

  test('only the operator admin token manages keys: other classes get 401, a generated key 403', async () => {
    app = await startVerdict(TOKENS);
    const { token, key } = (
      await admin('POST', '/operator/api/keys', { name: 'k', scopes: ['read', 'memory:write'] })
    ).body;
    const routes: Array<[string, string, unknown]> = [
      ['POST', '/operator/api/keys', { name: 'n' }],
      ['GET', '/operator/api/keys', undefined],
      ['POST', `/operator/api/keys/${key.id}/revoke`, {}],
    ];
    for (const [method, path, body] of routes) {
      expect((await call(method, path, null, body)).body).toEqual({ ok: false, error: 'unauthorized' });
      for (const [name, value] of Object.entries(TOKENS)) {
        if (name === 'VERDICT_OPERATOR_ADMIN_TOKEN') continue;
        const res = await call(method, path, value, body);
        expect([name, path, res.status, res.body]).toEqual([
          name,
          path,
          401,
          { ok: false, error: 'unauthorized' },
        ]);
      }
      const asKey = await call(method, path, token, body);
      expect([path, asKey.status, asKey.body.error]).toEqual([path, 403, 'forbidden']);
    }
    expect((await app.verdict.store.apiKeys.get(key.id))!.status).toBe('active');
  });

  test('a revoked or unknown key fails authentication (401), where an active one was only out of scope (403)', async () => {
    app = await startVerdict(TOKENS);
    const { token, key } = (await admin('POST', '/operator/api/keys', { name: 'k' })).body;
    const repair = (t: string) => call('POST', '/operator/api/queue/requeue-dead', t, { jobKey: 'x' });
    expect((await repair(token)).status).toBe(403);
    const revoked = await admin('POST', `/operator/api/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.key).toMatchObject({ id: key.id, status: 'revoked', revokedBy: 'alice' });
    expect((await repair(token)).body).toEqual({ ok: false, error: 'unauthorized' });
    expect((await repair(`vdt_${'0'.repeat(64)}`)).status).toBe(401);
    // Revoking again keeps the first revocation; an unknown id is 404.
    const again = await admin('POST', `/operator/api/keys/${key.id}/revoke`);
    expect(again.body.key.revokedAt).toBe(revoked.body.key.revokedAt);
    expect((await app.verdict.store.audit.list({ action: 'keys.revoke' })).length).toBe(1);
    expect(await admin('POST', '/operator/api/keys/key_missing/revoke')).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found' },
    });
  });
});
