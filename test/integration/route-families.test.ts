import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { callApi, TOKENS } from '../helpers/operator.js';

type Row = {
  method: string;
  path: string;
  body?: unknown;
  token: string; // the static token that opens it
  status: number; // its answer with that token
  key: 'read' | 'memory:write' | null; // the key scope that also opens it
};

/** `[method, path under /operator/api, body, token, status, key]`, the fields of a Row. */
const rows: Row[] = (
  [
    ['GET', '/memory/integrations', undefined, 'read-secret', 200, 'read'],
    ['GET', '/memory/contexts', undefined, 'read-secret', 200, 'read'],
    ['GET', '/memory/contexts/c1', undefined, 'read-secret', 404, 'read'],
    ['GET', '/memory/clusters', undefined, 'read-secret', 200, 'read'],
    ['GET', '/memory/knowledge', undefined, 'read-secret', 200, 'read'],
    ['GET', '/memory/knowledge/document?repo=a/b&path=x', undefined, 'read-secret', 200, 'read'],
    ['POST', '/memory/integrations/preview', {}, 'admin-secret', 400, null],
    ['POST', '/memory/contexts', { title: 't', body: 'b' }, 'admin-secret', 201, 'memory:write'],
    ['PATCH', '/memory/contexts/c1', { revision: 1, title: 't' }, 'admin-secret', 404, 'memory:write'],
    ['DELETE', '/memory/contexts/c1', { revision: 1 }, 'admin-secret', 404, 'memory:write'],
    [
      'POST',
      '/memory/clusters',
      { repo: 'a/b', label: 'l', exemplar: { title: 't', body: 'b' } },
      'admin-secret',
      201,
      'memory:write',
    ],
    ['PATCH', '/memory/clusters/k1', { revision: 1, action: 'keep' }, 'admin-secret', 404, 'memory:write'],
    ['DELETE', '/memory/clusters/k1', { revision: 1 }, 'admin-secret', 404, 'memory:write'],
    [
      'PUT',
      '/memory/knowledge/document',
      { repo: 'a/b', path: 'x', body: 'b', revision: 1 },
      'admin-secret',
      404,
      'memory:write',
    ],
    ['GET', '/scm', undefined, 'read-secret', 200, 'read'],
    ['POST', '/scm/sync', {}, 'admin-secret', 202, null],
    ['DELETE', '/scm/alerts/a1', { revision: 3 }, 'admin-secret', 404, null],
    ['GET', '/test-lab', undefined, 'read-secret', 200, 'read'],
    ['GET', '/test-lab/t1', undefined, 'read-secret', 404, 'read'],
  ] as const
).map(([method, path, body, token, status, key]) => ({
  method,
  path: `/operator/api${path}`,
  body,
  token,
  status,
  key,
}));

/** Memory, SCM and Test Lab routes answer with the right authentication (operator-api 4.6, 5.1, 5.2). */
describe('memory, SCM and Test Lab route families', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict(TOKENS);
  });
  afterEach(() => app.stop());

  const call = (method: string, path: string, token: string | null, body?: unknown) =>
    callApi(app.baseUrl, method, path, token, body);
  async function key(scopes: string[]): Promise<string> {
    return (await call('POST', '/operator/api/keys', 'admin-secret', { name: scopes.join('+'), scopes })).body
      .token;
  }

  test('every row: its token opens it, every other class is 401, keys by scope (403 outside it)', async () => {
    const readKey = await key(['read']);
    const writeKey = await key(['memory:write']);
    for (const row of rows) {
      const label = `${row.method} ${row.path}`;
      expect([label, (await call(row.method, row.path, null, row.body)).status]).toEqual([label, 401]);
      for (const token of Object.values(TOKENS)) {
        if (token === row.token) continue;
        expect([label, token, (await call(row.method, row.path, token, row.body)).status]).toEqual([
          label,
          token,
          401,
        ]);
      }
      const ok = await call(row.method, row.path, row.token, row.body);
      expect([label, ok.status]).toEqual([label, row.status]);
      const withRead = (await call(row.method, row.path, readKey, row.body)).status;
      const withWrite = (await call(row.method, row.path, writeKey, row.body)).status;
      expect([label, 'read key', withRead]).toEqual([
        label,
        'read key',
        row.key === 'read' ? row.status : 403,
      ]);
      expect([label, 'write key', withWrite]).toEqual([
        label,
        'write key',
        row.key === 'memory:write' ? row.status : 403,
      ]);
    }
  });

  test('POST /scm/sync takes an empty JSON object and creates a sync-repositories command', async () => {
    const res = await call('POST', '/operator/api/scm/sync', 'admin-secret', {});
    expect(res).toMatchObject({
      status: 202,
      body: {
        ok: true,
        created: true,
        command: { kind: 'sync-repositories', status: 'queued', actor: 'service-admin' },
      },
    });
    expect(await app.verdict.store.commands.get(res.body.command.id)).toMatchObject({
      kind: 'sync-repositories',
    });
    expect((await call('POST', '/operator/api/scm/sync', 'admin-secret', { repos: ['a/b'] })).status).toBe(
      400,
    );
    const patch = await call('PATCH', `/operator/api/commands/${res.body.command.id}`, 'bridge-secret', {
      status: 'running',
    });
    expect(patch).toMatchObject({ status: 409, body: { error: 'bridge_owned' } });
  });

  test('reads answer well-formed empty data; an SCM alert dismissal needs its revision', async () => {
    expect((await call('GET', '/operator/api/memory/contexts', 'read-secret')).body).toEqual({
      ok: true,
      contexts: [],
    });
    expect((await call('GET', '/operator/api/test-lab', 'read-secret')).body).toEqual({ ok: true, runs: [] });
    expect((await call('DELETE', '/operator/api/scm/alerts/a1', 'admin-secret', {})).status).toBe(400);
  });
});
