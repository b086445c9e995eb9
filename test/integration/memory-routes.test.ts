import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { callApi, TOKENS } from '../helpers/operator.js';
import { assertNoUnusedInterceptors, localNetworkOnly } from '../helpers/network.js';

const API = '/operator/api';
const GITHUB = 'https://api.github.com';

/** The memory family of operator-api 4.6 with the shapes of NAMES.md "Memory": every route, every status. */
describe('memory routes', () => {
  let app: RunningVerdict;
  let readKey: string;
  let writeKey: string;
  beforeAll(async () => {
    app = await startVerdict(TOKENS);
    const key = async (scopes: string[]) =>
      (await callApi(app.baseUrl, 'POST', `${API}/keys`, 'admin-secret', { name: scopes.join('+'), scopes }))
        .body.token as string;
    readKey = await key(['read']);
    writeKey = await key(['memory:write']);
  });
  afterAll(() => app.stop());

  const call = (method: string, path: string, token: string | null, body?: unknown) =>
    callApi(app.baseUrl, method, API + path, token, body);
  const admin = (method: string, path: string, body?: unknown) => call(method, path, 'admin-secret', body);
  const read = (path: string) => call('GET', path, 'read-secret');
  const invalid = (field: string) => ({
    status: 400,
    body: {
      ok: false,
      error: 'invalid_request',
      message: expect.stringContaining(`Invalid field ${field}:`),
    },
  });
  const invalidParam = (field: string) => ({
    status: 400,
    body: {
      ok: false,
      error: 'invalid_request',
      message: expect.stringContaining(`Invalid parameter ${field}:`),
    },
  });
  const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  describe('contexts', () => {
    test('create (201), get, list and filter, update and delete with revisions', async () => {
      const created = await admin('POST', '/memory/contexts', {
        repo: 'acme/ctx',
        paths: ['src/**', 'lib/*.ts'],
        title: 'Log through the logger',
        body: 'Never console.log in src/.\nUse log.info.',
      });
      expect(created.status).toBe(201);
      const context = created.body.context;
      expect(created.body).toEqual({
        ok: true,
        context: {
          id: expect.stringMatching(/^mem_/),
          repo: 'acme/ctx',
          paths: ['src/**', 'lib/*.ts'],
          title: 'Log through the logger',
          body: 'Never console.log in src/.\nUse log.info.',
          enabled: true,
          source: 'operator',
          revision: 1,
          createdAt: ISO,
          updatedAt: ISO,
          createdBy: 'service-admin',
        },
      });
      const workspace = await callApi(app.baseUrl, 'POST', `${API}/memory/contexts`, writeKey, {
        repo: null,
        title: 'Tabs',
        body: 'Indent with tabs.',
        enabled: false,
      });
      expect(workspace.status).toBe(201);
      expect(workspace.body.context).toMatchObject({
        repo: null,
        paths: [],
        enabled: false,
        createdBy: expect.stringMatching(/^api-key:/),
      });

      expect(await read(`/memory/contexts/${context.id}`)).toMatchObject({ status: 200, body: { context } });
      const one = await call('GET', `/memory/contexts/${context.id}`, readKey);
      expect(one.body.context).toEqual(context);
      const ids = async (query: string) =>
        (await read(`/memory/contexts${query}`)).body.contexts.map((c: any) => c.id);
      expect(await ids('?repo=ACME/ctx')).toEqual([context.id]);
      expect(await ids('?q=INDENT')).toEqual([workspace.body.context.id]);
      expect(await ids('?q=console.log&repo=acme/ctx')).toEqual([context.id]);
      expect((await ids('?limit=1')).length).toBe(1);

      const patched = await admin('PATCH', `/memory/contexts/${context.id}`, {
        revision: 1,
        title: 'Use the logger',
        enabled: false,
        paths: [],
      });
      expect(patched).toMatchObject({
        status: 200,
        body: {
          ok: true,
          context: { id: context.id, title: 'Use the logger', enabled: false, paths: [], revision: 2 },
        },
      });
      expect(patched.body.context.body).toBe(context.body);
      const stale = await admin('PATCH', `/memory/contexts/${context.id}`, { revision: 1, title: 'x' });
      expect(stale).toEqual({
        ...stale,
        status: 409,
        body: { ok: false, error: 'revision_conflict', message: expect.any(String), revision: 2 },
      });
      expect(await admin('DELETE', `/memory/contexts/${context.id}`, { revision: 1 })).toMatchObject({
        status: 409,
        body: { error: 'revision_conflict', revision: 2 },
      });
      expect(await admin('DELETE', `/memory/contexts/${context.id}`, { revision: 2 })).toMatchObject({
        status: 200,
        body: { ok: true, deleted: true },
      });
      const gone = { status: 404, body: { ok: false, error: 'not_found' } };
      expect(await read(`/memory/contexts/${context.id}`)).toMatchObject(gone);
      expect(
        await admin('PATCH', `/memory/contexts/${context.id}`, { revision: 2, title: 'x' }),
      ).toMatchObject(gone);
      expect(await admin('DELETE', `/memory/contexts/${context.id}`, { revision: 2 })).toMatchObject(gone);
    });

    test('400 invalid_request naming the field', async () => {
      const ok = { title: 'A rule', body: 'Its text.' };
      const cases: Array<[unknown, string]> = [
        [{ body: 'b' }, 'title'],
        [{ ...ok, title: '' }, 'title'],
        [{ ...ok, title: '   ' }, 'title'],
        [{ ...ok, title: 'x'.repeat(201) }, 'title'],
        [{ ...ok, title: 'bell\u0007' }, 'title'],
        [{ ...ok, body: 'x'.repeat(4001) }, 'body'],
        [{ ...ok, body: 'nul\u0000' }, 'body'],
        [{ ...ok, repo: 'no-slash' }, 'repo'],
        [{ ...ok, repo: 'acme/..' }, 'repo'],
        [{ ...ok, paths: 'src/**' }, 'paths'],
        [{ ...ok, paths: ['src/**a'] }, 'paths.0'],
        [{ ...ok, paths: ['ok/**', '../up'] }, 'paths.1'],
        [{ ...ok, paths: ['a//b'] }, 'paths.0'],
        [{ ...ok, paths: ['src/[ab].ts'] }, 'paths.0'],
        [{ ...ok, paths: Array.from({ length: 51 }, (_, i) => `d${i}/**`) }, 'paths'],
        [{ ...ok, enabled: 'yes' }, 'enabled'],
        [{ ...ok, source: 'comment' }, 'source'],
        [{ ...ok, revision: 1 }, 'revision'],
      ];
      for (const [body, field] of cases) {
        expect([field, await admin('POST', '/memory/contexts', body)]).toMatchObject([field, invalid(field)]);
      }
      expect(await admin('POST', '/memory/contexts', '{"title":')).toMatchObject({
        status: 400,
        body: { error: 'invalid_json' },
      });
      // Tab, newline and carriage return are text, not control characters.
      expect((await admin('POST', '/memory/contexts', { title: 'a\tb', body: 'c\r\nd' })).status).toBe(201);

      const { context } = (await admin('POST', '/memory/contexts', ok)).body;
      const path = `/memory/contexts/${context.id}`;
      expect(await admin('PATCH', path, { title: 'x' })).toMatchObject(invalid('revision'));
      expect(await admin('PATCH', path, { revision: '1', title: 'x' })).toMatchObject(invalid('revision'));
      expect(await admin('PATCH', path, { revision: 1 })).toMatchObject(invalid('body'));
      expect(await admin('PATCH', path, { revision: 1, title: '' })).toMatchObject(invalid('title'));
      expect(await admin('PATCH', path, { revision: 1, id: 'other' })).toMatchObject(invalid('id'));
      expect(await admin('DELETE', path, {})).toMatchObject(invalid('revision'));
      expect(await admin('DELETE', path)).toMatchObject(invalid('revision'));
      expect(await read('/memory/contexts?repo=nope')).toMatchObject(invalidParam('repo'));
      expect(await read(`/memory/contexts?q=${encodeURIComponent('a\u0001')}`)).toMatchObject(
        invalidParam('q'),
      );
      // Nothing of the refused writes was stored.
      expect((await admin('GET', path)).status).toBe(401);
      expect((await read(path)).body.context.revision).toBe(1);
    });

    test('tokens: reads with the read token or a read key; writes with the admin token or a memory:write key', async () => {
      const body = { title: 't', body: 'b' };
      expect((await call('POST', '/memory/contexts', null, body)).status).toBe(401);
      expect((await call('POST', '/memory/contexts', 'read-secret', body)).status).toBe(401);
      expect((await call('POST', '/memory/contexts', 'command-secret', body)).status).toBe(401);
      expect(await call('POST', '/memory/contexts', readKey, body)).toMatchObject({
        status: 403,
        body: { ok: false, error: 'forbidden' },
      });
      expect((await call('GET', '/memory/contexts', 'admin-secret')).status).toBe(401);
      expect((await call('GET', '/memory/contexts', writeKey)).status).toBe(403);
      expect((await call('GET', '/memory/contexts', readKey)).status).toBe(200);
      expect((await call('GET', '/memory/contexts', null)).status).toBe(401);
    });
  });

  describe('clusters', () => {
    test('create (201), list by repository, update and delete with revisions', async () => {
      const created = await admin('POST', '/memory/clusters', {
        repo: 'acme/clu',
        label: 'Null checks on lookups',
        exemplar: {
          title: 'user may be undefined',
          body: 'users.find() returns undefined when no user matches.',
          category: 'correctness',
          path: 'src/users.ts',
        },
      });
      expect(created.status).toBe(201);
      const cluster = created.body.cluster;
      expect(cluster).toEqual({
        id: expect.stringMatching(/^clu_/),
        repo: 'acme/clu',
        label: 'Null checks on lookups',
        action: 'none',
        size: 0,
        exemplar: {
          title: 'user may be undefined',
          body: 'users.find() returns undefined when no user matches.',
          category: 'correctness',
          path: 'src/users.ts',
        },
        feedback: { up: 0, down: 0, dismissed: 0, addressed: 0 },
        revision: 1,
        createdAt: ISO,
        updatedAt: ISO,
      });
      const other = await callApi(app.baseUrl, 'POST', `${API}/memory/clusters`, writeKey, {
        repo: 'acme/other-clu',
        label: 'Style',
        exemplar: { title: 'x', body: 'y' },
        action: 'suppress',
      });
      expect(other.body.cluster).toMatchObject({
        action: 'suppress',
        exemplar: { category: null, path: null },
      });
      expect((await read('/memory/clusters?repo=acme/clu')).body).toEqual({ ok: true, clusters: [cluster] });
      expect((await call('GET', '/memory/clusters?repo=acme/other-clu', readKey)).body.clusters).toHaveLength(
        1,
      );

      const patched = await admin('PATCH', `/memory/clusters/${cluster.id}`, { revision: 1, action: 'keep' });
      expect(patched).toMatchObject({ status: 200, body: { cluster: { action: 'keep', revision: 2 } } });
      expect(
        await admin('PATCH', `/memory/clusters/${cluster.id}`, { revision: 1, label: 'x' }),
      ).toMatchObject({ status: 409, body: { error: 'revision_conflict', revision: 2 } });
      expect(await admin('DELETE', `/memory/clusters/${cluster.id}`, { revision: 1 })).toMatchObject({
        status: 409,
        body: { revision: 2 },
      });
      expect(await admin('DELETE', `/memory/clusters/${cluster.id}`, { revision: 2 })).toMatchObject({
        status: 200,
        body: { ok: true, deleted: true },
      });
      expect(
        await admin('PATCH', `/memory/clusters/${cluster.id}`, { revision: 2, label: 'x' }),
      ).toMatchObject({
        status: 404,
        body: { error: 'not_found' },
      });
      expect(await admin('DELETE', `/memory/clusters/${cluster.id}`, { revision: 2 })).toMatchObject({
        status: 404,
      });
    });

    test('400 naming the field; tokens', async () => {
      const ok = { repo: 'acme/c2', label: 'L', exemplar: { title: 't', body: 'b' } };
      const cases: Array<[unknown, string]> = [
        [{ ...ok, repo: undefined }, 'repo'],
        [{ ...ok, repo: null }, 'repo'],
        [{ ...ok, label: '' }, 'label'],
        [{ ...ok, label: 'x'.repeat(201) }, 'label'],
        [{ ...ok, exemplar: undefined }, 'exemplar'],
        [{ ...ok, exemplar: { title: 't' } }, 'exemplar.body'],
        [{ ...ok, exemplar: { title: 't', body: 'x'.repeat(4001) } }, 'exemplar.body'],
        [{ ...ok, exemplar: { title: 't\u001b[31m', body: 'b' } }, 'exemplar.title'],
        [{ ...ok, exemplar: { title: 't', body: 'b', line: 3 } }, 'exemplar.line'],
        [{ ...ok, action: 'mute' }, 'action'],
      ];
      for (const [body, field] of cases) {
        expect([field, await admin('POST', '/memory/clusters', body)]).toMatchObject([field, invalid(field)]);
      }
      const { cluster } = (await admin('POST', '/memory/clusters', ok)).body;
      expect(
        await admin('PATCH', `/memory/clusters/${cluster.id}`, { revision: 1, action: 'off' }),
      ).toMatchObject(invalid('action'));
      expect(await admin('PATCH', `/memory/clusters/${cluster.id}`, { revision: 1, size: 3 })).toMatchObject(
        invalid('size'),
      );
      expect(await admin('DELETE', `/memory/clusters/${cluster.id}`, { revision: -1 })).toMatchObject(
        invalid('revision'),
      );
      expect(await read('/memory/clusters?repo=x')).toMatchObject(invalidParam('repo'));
      expect((await call('POST', '/memory/clusters', readKey, ok)).status).toBe(403);
      expect(
        (await call('DELETE', `/memory/clusters/${cluster.id}`, 'read-secret', { revision: 1 })).status,
      ).toBe(401);
      expect((await call('GET', '/memory/clusters', writeKey)).status).toBe(403);
    });
  });

  describe('knowledge documents', () => {
    test('create, refuse an unversioned overwrite (409), replace by revision, list and read', async () => {
      const doc = '/memory/knowledge/document';
      expect(await read(`${doc}?repo=acme/kn&path=src/api`)).toEqual(
        expect.objectContaining({ status: 200, body: { ok: true, document: null } }),
      );
      const created = await admin('PUT', doc, {
        repo: 'acme/kn',
        path: 'src/api',
        body: 'Handlers stay thin; ünïcode.',
      });
      expect(created.body).toEqual({
        ok: true,
        document: {
          repo: 'acme/kn',
          path: 'src/api',
          title: 'src/api',
          body: 'Handlers stay thin; ünïcode.',
          revision: 1,
          updatedAt: ISO,
        },
      });
      expect(created.status).toBe(200);
      expect(await admin('PUT', doc, { repo: 'acme/kn', path: 'src/api', body: 'again' })).toMatchObject({
        status: 409,
        body: { ok: false, error: 'revision_conflict', revision: 1 },
      });
      const replaced = await callApi(app.baseUrl, 'PUT', API + doc, writeKey, {
        repo: 'acme/kn',
        path: 'src/api',
        title: 'The API layer',
        body: 'New notes.',
        revision: 1,
      });
      expect(replaced.body.document).toMatchObject({
        title: 'The API layer',
        body: 'New notes.',
        revision: 2,
      });
      expect(
        await admin('PUT', doc, { repo: 'acme/kn', path: 'src/api', body: 'x', revision: 1 }),
      ).toMatchObject({ status: 409, body: { revision: 2 } });
      expect(
        await admin('PUT', doc, { repo: 'acme/kn', path: 'nope', body: 'x', revision: 1 }),
      ).toMatchObject({
        status: 404,
        body: { error: 'not_found' },
      });
      expect((await admin('PUT', doc, { repo: 'acme/kn', path: '/', body: 'x'.repeat(20_000) })).status).toBe(
        200,
      );
      expect(await read(`${doc}?repo=acme/kn&path=src/api`)).toMatchObject({
        status: 200,
        body: { document: { repo: 'acme/kn', path: 'src/api', title: 'The API layer', body: 'New notes.' } },
      });
      const list = await call('GET', '/memory/knowledge?repo=acme/kn', readKey);
      expect(list.body).toEqual({
        ok: true,
        documents: [
          { repo: 'acme/kn', path: '/', title: '/', revision: 1, updatedAt: ISO, bytes: 20_000 },
          {
            repo: 'acme/kn',
            path: 'src/api',
            title: 'The API layer',
            revision: 2,
            updatedAt: ISO,
            bytes: 10,
          },
        ],
      });
    });

    test('400 naming the field; tokens', async () => {
      const doc = '/memory/knowledge/document';
      const ok = { repo: 'acme/kn2', path: 'docs', body: 'b' };
      const cases: Array<[unknown, string]> = [
        [{ ...ok, repo: undefined }, 'repo'],
        [{ ...ok, path: '' }, 'path'],
        [{ ...ok, path: '/src' }, 'path'],
        [{ ...ok, path: 'src/' }, 'path'],
        [{ ...ok, path: 'a/../b' }, 'path'],
        [{ ...ok, body: 'x'.repeat(20_001) }, 'body'],
        [{ ...ok, body: 'x\u0000' }, 'body'],
        [{ ...ok, title: '' }, 'title'],
        [{ ...ok, revision: 1.5 }, 'revision'],
        [{ ...ok, bytes: 3 }, 'bytes'],
      ];
      for (const [body, field] of cases) {
        expect([field, await admin('PUT', doc, body)]).toMatchObject([field, invalid(field)]);
      }
      expect(await admin('PUT', doc, { ...ok, body: 'x'.repeat(257 * 1024) })).toMatchObject({
        status: 413,
        body: { ok: false, error: 'payload_too_large' },
      });
      expect(await read(`${doc}?repo=acme/kn2`)).toMatchObject(invalidParam('path'));
      expect(await read(`${doc}?path=x`)).toMatchObject(invalidParam('repo'));
      expect(await read(`${doc}?repo=acme/kn2&path=a//b`)).toMatchObject(invalidParam('path'));
      expect(await read('/memory/knowledge?repo=kn2')).toMatchObject(invalidParam('repo'));
      expect((await call('PUT', doc, readKey, ok)).status).toBe(403);
      expect((await call('PUT', doc, 'read-secret', ok)).status).toBe(401);
      expect((await call('GET', '/memory/knowledge', writeKey)).status).toBe(403);
      expect((await call('GET', `${doc}?repo=acme/kn2&path=docs`, 'admin-secret')).status).toBe(401);
      expect((await read('/memory/knowledge?repo=acme/kn2')).body.documents).toEqual([]);
    });
  });

  test('integrations: linked-issues, instruction-files, review-feedback; those reading GitHub off without the App', async () => {
    const res = await call('GET', '/memory/integrations', readKey);
    expect(res.body).toEqual({
      ok: true,
      integrations: [
        { id: 'linked-issues', name: 'Linked issues', enabled: false, description: expect.any(String) },
        {
          id: 'instruction-files',
          name: 'Instruction files',
          enabled: false,
          description: expect.any(String),
        },
        { id: 'review-feedback', name: 'Review feedback', enabled: true, description: expect.any(String) },
      ],
    });
    expect((await call('GET', '/memory/integrations', writeKey)).status).toBe(403);
    expect((await call('GET', '/memory/integrations', 'admin-secret')).status).toBe(401);
  });

  test('the preview without App credentials: 503 app_credentials_missing once the body is valid', async () => {
    expect(
      await admin('POST', '/memory/integrations/preview', { repo: 'acme/web', number: 7 }),
    ).toMatchObject({
      status: 503,
      body: { ok: false, error: 'app_credentials_missing' },
    });
    expect(await admin('POST', '/memory/integrations/preview', { repo: 'acme/web' })).toMatchObject(
      invalid('number'),
    );
  });

  test('every write is in the audit listing, with its actor', async () => {
    const { context } = (await admin('POST', '/memory/contexts', { title: 'audited', body: 'b' })).body;
    await callApi(app.baseUrl, 'PATCH', `${API}/memory/contexts/${context.id}`, writeKey, {
      revision: 1,
      enabled: false,
    });
    await admin('DELETE', `/memory/contexts/${context.id}`, { revision: 2 });
    await admin('PUT', '/memory/knowledge/document', { repo: 'acme/audit', path: 'a', body: 'b' });
    const entries = (await read(`/settings/audit?q=memory.&limit=100`)).body.entries as any[];
    const mine = entries.filter((e) => e.target === context.id).map((e) => [e.action, e.actor]);
    expect(mine).toEqual([
      ['memory.context.delete', 'service-admin'],
      ['memory.context.update', expect.stringMatching(/^api-key:/)],
      ['memory.context.create', 'service-admin'],
    ]);
    expect(entries.some((e) => e.action === 'memory.knowledge.put' && e.target === 'acme/audit:a')).toBe(
      true,
    );
  });

  test("the snapshot's memory view lists contexts, clusters and knowledge documents", async () => {
    const { context } = (await admin('POST', '/memory/contexts', { title: 'in snapshot', body: 'b' })).body;
    const { cluster } = (
      await admin('POST', '/memory/clusters', {
        repo: 'acme/snap',
        label: 'l',
        exemplar: { title: 't', body: 'b' },
      })
    ).body;
    await admin('PUT', '/memory/knowledge/document', { repo: 'acme/snap', path: 'src', body: 'notes' });
    const snap = await read('/snapshot?view=memory');
    expect(snap.body.view).toBe('memory');
    const data = snap.body.data;
    expect(data.contexts[0]).toEqual(context);
    expect(data.clusters[0]).toEqual(cluster);
    expect(data.documents).toContainEqual({
      repo: 'acme/snap',
      path: 'src',
      title: 'src',
      revision: 1,
      updatedAt: expect.any(String),
      bytes: 5,
    });
    expect(data.totals).toEqual({
      contexts: data.contexts.length,
      clusters: data.clusters.length,
      knowledge: data.documents.length,
    });
  });
});

describe('POST /memory/integrations/preview with the GitHub App', () => {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const HEAD = 'a'.repeat(40);
  let app: RunningVerdict;
  beforeAll(async () => {
    localNetworkOnly();
    app = await startVerdict({
      ...TOKENS,
      APP_ID: '123',
      PRIVATE_KEY: privateKey,
      VERDICT_GITHUB_RETRIES: '0',
    });
  });
  afterAll(async () => {
    await app.stop();
    nock.enableNetConnect();
  });
  afterEach(() => assertNoUnusedInterceptors());

  const preview = (body: unknown, token = 'admin-secret') =>
    callApi(app.baseUrl, 'POST', `${API}/memory/integrations/preview`, token, body);
  const token = (installation: number) =>
    nock(GITHUB)
      .post(`/app/installations/${installation}/access_tokens`)
      .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' });
  const pull = (body: string) => ({
    number: 7,
    state: 'open',
    title: 'Add a cache',
    body,
    draft: false,
    user: { login: 'alice' },
    labels: [],
    head: { sha: HEAD, ref: 'feature/cache' },
    base: { ref: 'main', sha: 'b'.repeat(40), repo: { default_branch: 'main' } },
    changed_files: 2,
  });
  const file = (filename: string) => ({
    sha: 'c'.repeat(40),
    filename,
    status: 'modified',
    additions: 1,
    deletions: 1,
    changes: 2,
    patch: '@@ -1 +1 @@\n-a\n+b',
  });
  const blob = (path: string) => ({ path, mode: '100644', type: 'blob', sha: 'f'.repeat(40), size: 9 });

  test('what a review would be given: matching contexts and knowledge, linked issues, instruction files, suppressed clusters', async () => {
    const { store } = app.verdict;
    await store.repositories.upsertInstalled('acme/web', 77);
    const add = (id: string, over: Record<string, unknown>) =>
      store.memory.createContext({
        id,
        repo: 'acme/web',
        paths: [],
        title: 't',
        body: 'b',
        createdBy: 't',
        ...over,
      });
    await add('ctx-src', { paths: ['src/**'] });
    await add('ctx-docs', { paths: ['docs/**'] });
    await add('ctx-all', { repo: null });
    await add('ctx-off', { enabled: false });
    await add('ctx-other', { repo: 'acme/other' });
    await store.memory.putKnowledge({ repo: 'acme/web', path: 'src/cache', body: 'notes' }, 't');
    await store.memory.putKnowledge({ repo: 'acme/web', path: 'docs', body: 'notes' }, 't');
    await store.memory.createCluster({
      id: 'clu-suppress',
      repo: 'acme/web',
      label: 'l',
      action: 'suppress',
      exemplar: { title: 't', body: 'b' },
      actor: 't',
    });
    await store.memory.createCluster({
      id: 'clu-none',
      repo: 'acme/web',
      label: 'l',
      exemplar: { title: 't', body: 'b' },
      actor: 't',
    });

    token(77);
    nock(GITHUB)
      .get('/repos/acme/web/pulls/7')
      .reply(200, pull('Fixes #12. Part of acme/web#3; see other/repo#4 and #7 (itself).'))
      .get('/repos/acme/web/pulls/7/files')
      .query({ per_page: '100' })
      .reply(200, [file('src/cache/lru.ts'), file('README.md')])
      .get('/repos/acme/web/git/trees/main')
      .query({ recursive: 'true' })
      .reply(200, {
        sha: 'f'.repeat(40),
        url: '',
        truncated: false,
        tree: [blob('AGENTS.md'), blob('src/AGENTS.md'), blob('docs/CLAUDE.md'), blob('src/cache/lru.ts')],
      })
      .get('/repos/acme/web/contents/AGENTS.md')
      .query({ ref: 'main' })
      .reply(200, 'Log every request id.')
      .get('/repos/acme/web/contents/src%2FAGENTS.md')
      .query({ ref: 'main' })
      .reply(200, 'Prefer pure functions in src.')
      // The linked issues are read as the review reads them: #3 is a pull request, so not given.
      .get('/repos/acme/web/issues/12')
      .reply(200, { id: 1, number: 12, state: 'open', title: 'Cache misses', body: 'Misses.' })
      .get('/repos/acme/web/issues/3')
      .reply(200, { id: 2, number: 3, state: 'open', title: 'A PR', body: '', pull_request: { url: 'u' } });
    const res = await preview({ repo: 'acme/web', number: 7 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      // In the review's order: the repository's with globs, then the workspace's for every path.
      preview: {
        contexts: ['ctx-src', 'ctx-all'],
        knowledge: ['src/cache'],
        linkedIssues: [12],
        instructionFiles: ['AGENTS.md', 'src/AGENTS.md'],
        suppressedClusters: ['clu-suppress'],
      },
      memory: {
        leftOut: { contexts: 0, knowledge: 0, linkedIssues: 0 },
        skippedIssues: [{ number: 3, reason: 'pull request' }],
      },
      pullRequest: {
        repo: 'acme/web',
        number: 7,
        title: 'Add a cache',
        headSha: HEAD,
        baseRef: 'main',
        changedFiles: 2,
      },
      notes: [],
    });
    // The preview stores nothing and calls no model.
    expect(await store.runs.listForPr('acme/web', 7)).toEqual([]);
  });

  test('a repository the store does not know: its installation from GitHub; 404 when the App is not on it', async () => {
    nock(GITHUB)
      .get('/repos/acme/fresh/installation')
      .reply(200, { id: 88, account: { login: 'acme' } })
      .get('/repos/acme/missing/installation')
      .reply(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    token(88);
    nock(GITHUB)
      .get('/repos/acme/fresh/pulls/1')
      .reply(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    expect(await preview({ repo: 'acme/fresh', number: 1 })).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found', message: 'No pull request acme/fresh#1 on GitHub' },
    });
    expect(await preview({ repo: 'acme/missing', number: 1 })).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found', message: 'The GitHub App is not installed on acme/missing' },
    });
  });

  test('GitHub failing: 502 github_unavailable', async () => {
    await app.verdict.store.repositories.upsertInstalled('acme/down', 99);
    token(99);
    nock(GITHUB).get('/repos/acme/down/pulls/2').reply(500, { message: 'Server Error' });
    expect(await preview({ repo: 'acme/down', number: 2 })).toMatchObject({
      status: 502,
      body: { ok: false, error: 'github_unavailable' },
    });
  });

  test('admin only, body checked before GitHub is read; integrations reading GitHub are on', async () => {
    const body = { repo: 'acme/web', number: 7 };
    const writeKey = (
      await app.verdict.store.apiKeys.create({ name: 'w', scopes: ['memory:write'], actor: 't' })
    ).token;
    expect(await preview(body, writeKey)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect((await preview(body, 'read-secret')).status).toBe(401);
    expect((await preview(body, 'command-secret')).status).toBe(401);
    for (const [bad, field] of [
      [{ repo: 'acme/web', number: 0 }, 'number'],
      [{ repo: 'acme/web', number: '7x' }, 'number'],
      [{ repo: 'nope', number: 7 }, 'repo'],
      [{ ...body, dryRun: true }, 'dryRun'],
    ] as const) {
      expect((await preview(bad)).body).toMatchObject({
        error: 'invalid_request',
        message: expect.stringContaining(`Invalid field ${field}:`),
      });
    }
    const integrations = await callApi(app.baseUrl, 'GET', `${API}/memory/integrations`, 'read-secret');
    expect(integrations.body.integrations.map((i: any) => [i.id, i.enabled])).toEqual([
      ['linked-issues', true],
      ['instruction-files', true],
      ['review-feedback', true],
    ]);
  });
});
