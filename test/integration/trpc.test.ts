import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { TRPCClientError } from '@trpc/client';
import { createVerdictClient, operatorCodeOf } from '../../src/trpc/client.js';
import { TRPC_MAX_BATCH } from '../../src/trpc/limits.js';
import { appRouter } from '../../src/trpc/router.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { callApi, TOKENS } from '../helpers/operator.js';

const HEAD = 'c'.repeat(40);

/** The tRPC facade (issue: same services, same token classes and scopes, flattened zod errors). */
describe('tRPC facade at /trpc', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict(TOKENS);
    const { store } = app.verdict;
    await store.pullRequests.upsert({
      repo: 'acme/api',
      number: 4,
      headSha: HEAD,
      title: 'Broken thing',
      author: 'mona',
    });
    const { run } = await store.runs.createOrGet({
      reviewKey: `acme/api#4@${HEAD}`,
      repo: 'acme/api',
      prNumber: 4,
      headSha: HEAD,
      trigger: 'opened',
      installationId: 1,
    });
    await store.runs.update(run.id, { status: 'failed', reason: 'model_timeout' });
    await store.pullRequests.upsert({ repo: 'acme/api', number: 5, headSha: 'd'.repeat(40), title: 'Fine' });
  });
  afterAll(() => app.stop());

  const client = (token: string, extra: { idempotencyKey?: string; actor?: string } = {}) =>
    createVerdictClient({ baseUrl: app.baseUrl, token, ...extra });

  test(`a batch of more than ${TRPC_MAX_BATCH} calls is refused with 400 before any runs; ${TRPC_MAX_BATCH} are served`, async () => {
    const batch = (n: number) => {
      const paths = Array.from({ length: n }, () => 'repos.list').join(',');
      const input = encodeURIComponent(
        JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, {}]))),
      );
      return callApi(
        app.baseUrl,
        'GET',
        `/trpc/${paths}?batch=1&input=${input}`,
        TOKENS.VERDICT_OPERATOR_READ_TOKEN,
      );
    };
    const over = await batch(TRPC_MAX_BATCH + 1);
    expect(over.status).toBe(400);
    const fits = await batch(TRPC_MAX_BATCH);
    expect(fits.status).toBe(200);
    expect(fits.body).toHaveLength(TRPC_MAX_BATCH);
    // The typed client splits a larger batch into requests the server accepts.
    const c = client(TOKENS.VERDICT_OPERATOR_READ_TOKEN);
    const answers = await Promise.all(Array.from({ length: 25 }, () => c.repos.list.query({})));
    expect(answers).toHaveLength(25);
  });

  const rest = async (path: string, token: string) => (await callApi(app.baseUrl, 'GET', path, token)).body;

  async function refusal(call: Promise<unknown>) {
    try {
      await call;
    } catch (error) {
      expect(error).toBeInstanceOf(TRPCClientError);
      const e = error as TRPCClientError<any>;
      return {
        code: e.data?.code,
        httpStatus: e.data?.httpStatus,
        operatorCode: operatorCodeOf(e),
        data: e.data,
      };
    }
    throw new Error('expected the call to be refused');
  }

  test('queries answer what the REST routes answer', async () => {
    const read = client('read-secret');
    const snapshot = await read.snapshot.query({ status: 'failed' });
    const restSnapshot = await rest('/operator/api/snapshot?status=failed', 'read-secret');
    expect({ ...snapshot, generatedAt: 0 }).toEqual({ ...restSnapshot, ok: undefined, generatedAt: 0 });
    expect((snapshot.data as any).items.map((i: any) => i.number)).toEqual([4]);
    const pr = await read.pullRequest.query({ repo: 'acme/api', number: 4 });
    expect(pr.data.runs[0]).toMatchObject({ status: 'failed', reason: 'model_timeout' });
    expect((await read.repos.list.query({})).repos).toEqual(
      (await rest('/operator/api/repos', 'read-secret')).repos,
    );
    expect((await read.analytics.query({})).analytics.runs).toEqual({ failed: 1 });
    expect((await read.traces.list.query({ limit: 5 })).traces).toEqual([]);
    expect(await refusal(read.traces.get.query({ traceId: 'missing' }))).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 404,
      operatorCode: 'not_found',
    });
  });

  test('the same token classes and scopes as REST: 401, and 403 for a key outside its scope', async () => {
    expect(await refusal(client('nope').snapshot.query({}))).toMatchObject({
      code: 'UNAUTHORIZED',
      operatorCode: 'unauthorized',
    });
    // Classes are not hierarchical: the admin token does not read the snapshot.
    expect(await refusal(client('admin-secret').snapshot.query({}))).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await refusal(client('read-secret').keys.list.query({}))).toMatchObject({ code: 'UNAUTHORIZED' });
    const { token } = await app.verdict.store.apiKeys.create({ name: 'k', scopes: ['read'], actor: 't' });
    const keyed = client(token);
    expect((await keyed.snapshot.query({})).schema).toBe('verdict.operator.v1');
    expect(await keyed.settings.usage.query({})).toMatchObject({ model: { calls: 0 } });
    expect(await refusal(keyed.settings.get.query({}))).toMatchObject({
      code: 'FORBIDDEN',
      operatorCode: 'forbidden',
    });
    expect(await refusal(keyed.commands.list.query({}))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await refusal(keyed.keys.list.query({}))).toMatchObject({ code: 'FORBIDDEN' });
  });

  test('invalid input: BAD_REQUEST with the flattened zod error', async () => {
    const failure = await refusal(
      client('command-secret').commands.requeue.mutate({ repo: 'acme/api', number: -1 } as any),
    );
    expect(failure).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(failure.data.zodError.fieldErrors.number).toEqual([expect.any(String)]);
    const unknown = await refusal(client('read-secret').settings.usage.query({ from: '2026-02-30' }));
    expect(unknown.data.zodError.fieldErrors.from).toBeDefined();
  });

  test('commands: created once per idempotency key, then patched by the bridge with the transition table', async () => {
    const first = await client('command-secret', { idempotencyKey: 'trpc-1' }).commands.requeue.mutate({
      reviewKey: `acme/api#4@${HEAD}`,
    });
    expect(first).toMatchObject({
      created: true,
      command: { id: 'trpc-1', kind: 'requeue', status: 'queued' },
    });
    const again = await client('command-secret', { idempotencyKey: 'trpc-1' }).commands.requeue.mutate({
      reviewKey: `acme/api#4@${HEAD}`,
      reason: 'different payload',
    });
    expect(again.created).toBe(false);
    const bridge = client('bridge-secret');
    expect(
      await refusal(bridge.commands.patch.mutate({ id: 'trpc-1', body: { status: 'succeeded' } })),
    ).toMatchObject({
      code: 'CONFLICT',
      operatorCode: 'invalid_transition',
    });
    expect(
      (await bridge.commands.patch.mutate({ id: 'trpc-1', body: { status: 'running' } })).command.status,
    ).toBe('running');
    expect((await rest('/operator/api/commands/trpc-1', 'read-secret')).command.status).toBe('running');
  });

  test('settings: a stale revision is 409 with the current revision; the write is audited', async () => {
    const admin = client('admin-secret', { actor: 'ops@example' });
    const current = await client('read-secret').settings.get.query({});
    const written = await admin.settings.patch.mutate({
      revision: current.revision,
      settings: { strictness: 'high' },
    });
    expect(written.revision).toBeGreaterThan(current.revision);
    const stale = await refusal(
      admin.settings.patch.mutate({ revision: current.revision, settings: { strictness: 'low' } }),
    );
    expect(stale).toMatchObject({
      code: 'CONFLICT',
      operatorCode: 'revision_conflict',
      data: { details: { revision: written.revision } },
    });
    const invalid = await refusal(
      admin.settings.patch.mutate({ revision: written.revision, settings: { strictness: 'max' } }),
    );
    expect(invalid).toMatchObject({ code: 'BAD_REQUEST', operatorCode: 'invalid_settings' });
    const audit = await client('read-secret').settings.audit.query({ q: 'ops@example' });
    expect(audit.entries).toHaveLength(1);
  });

  test('queue repair: the same operations as REST, admin token only, refusals with their codes, audited', async () => {
    const { store } = app.verdict;
    await store.jobs.enqueue({ queue: 'reviews', kind: 'review', key: 'trpc-dead', payload: {} });
    await store.db
      .knex('jobs')
      .where({ job_key: 'trpc-dead' })
      .update({ status: 'dead', dead_reason: 'max_attempts' });
    expect(
      await refusal(client('read-secret').queue.requeueDead.mutate({ jobKey: 'trpc-dead' })),
    ).toMatchObject({
      code: 'UNAUTHORIZED',
      httpStatus: 401,
    });
    const admin = client('admin-secret', { actor: 'ops-oncall' });
    const requeued = await admin.queue.requeueDead.mutate({ jobKey: 'trpc-dead', reason: 'fixed upstream' });
    expect(requeued).toMatchObject({ audited: true, job: { status: 'waiting' } });
    expect(await refusal(admin.queue.requeueDead.mutate({ jobKey: 'trpc-dead' }))).toMatchObject({
      httpStatus: 404,
      operatorCode: 'not_found',
    });
    expect(await refusal(admin.queue.releaseLease.mutate({ jobKey: 'nothing-running' }))).toMatchObject({
      httpStatus: 404,
      operatorCode: 'not_found',
    });
    expect(await refusal(admin.queue.releaseLease.mutate({}))).toMatchObject({ code: 'BAD_REQUEST' });
    const events = await store.audit.list({ limit: 10 });
    expect(events.find((e) => e.action === 'queue.requeue_dead')).toMatchObject({
      actor: 'ops-oncall',
      target: 'trpc-dead',
      reason: 'fixed upstream',
    });
  });

  test('the SCM and Test Lab families: the same operations as REST', async () => {
    const read = client('read-secret');
    expect(await read.scm.get.query({})).toEqual({
      ...(await rest('/operator/api/scm', 'read-secret')),
      ok: undefined,
    });
    expect(await refusal(read.scm.sync.mutate({}))).toMatchObject({ httpStatus: 401 });
    const sync = await client('admin-secret').scm.sync.mutate({});
    expect(sync).toMatchObject({ created: true, command: { kind: 'sync-repositories', status: 'queued' } });
    expect(await app.verdict.store.commands.get(sync.command.id)).toMatchObject({
      kind: 'sync-repositories',
    });
    expect((await read.testLab.list.query({})).runs).toEqual(
      (await rest('/operator/api/test-lab', 'read-secret')).runs,
    );
    expect(await refusal(read.testLab.get.query({ id: 'missing' }))).toMatchObject({
      httpStatus: 404,
      operatorCode: 'not_found',
    });
  });

  test('the memory family: the same services as REST, the same refusals, keys by scope', async () => {
    const read = client('read-secret');
    const admin = client('admin-secret');
    const same = async (answer: Promise<unknown>, path: string) =>
      expect(await answer).toEqual({ ...(await rest(path, 'read-secret')), ok: undefined });

    const { context } = await admin.memory.contexts.create.mutate({
      repo: 'acme/trpc',
      paths: ['src/**'],
      title: 'Through tRPC',
      body: 'Same service.',
    });
    expect(context).toMatchObject({
      repo: 'acme/trpc',
      revision: 1,
      source: 'operator',
      createdBy: 'service-admin',
    });
    const updated = await admin.memory.contexts.update.mutate({
      id: context.id,
      body: { revision: 1, enabled: false },
    });
    expect(updated.context).toMatchObject({ enabled: false, revision: 2 });
    const stale = await refusal(
      admin.memory.contexts.update.mutate({ id: context.id, body: { revision: 1, title: 'x' } }),
    );
    expect(stale).toMatchObject({ code: 'CONFLICT', httpStatus: 409, operatorCode: 'revision_conflict' });
    expect(stale.data.details).toEqual({ revision: 2 });
    const { cluster } = await admin.memory.clusters.create.mutate({
      repo: 'acme/trpc',
      label: 'Nits',
      exemplar: { title: 't', body: 'b' },
      action: 'suppress',
    });
    await admin.memory.knowledge.putDocument.mutate({ repo: 'acme/trpc', path: 'src', body: 'Notes.' });

    await same(read.memory.integrations.list.query({}), '/operator/api/memory/integrations');
    await same(
      read.memory.contexts.list.query({ repo: 'acme/trpc' }),
      '/operator/api/memory/contexts?repo=acme/trpc',
    );
    await same(
      read.memory.contexts.get.query({ id: context.id }),
      `/operator/api/memory/contexts/${context.id}`,
    );
    await same(
      read.memory.clusters.list.query({ repo: 'acme/trpc' }),
      '/operator/api/memory/clusters?repo=acme/trpc',
    );
    await same(
      read.memory.knowledge.list.query({ repo: 'acme/trpc' }),
      '/operator/api/memory/knowledge?repo=acme/trpc',
    );
    await same(
      read.memory.knowledge.document.query({ repo: 'acme/trpc', path: 'src' }),
      '/operator/api/memory/knowledge/document?repo=acme/trpc&path=src',
    );
    expect(
      (await read.memory.knowledge.document.query({ repo: 'acme/trpc', path: 'src' })).document,
    ).toMatchObject({
      body: 'Notes.',
      revision: 1,
    });
    expect(await refusal(read.memory.contexts.get.query({ id: 'c1' }))).toMatchObject({
      httpStatus: 404,
      operatorCode: 'not_found',
    });

    // Invalid input: 400 with the flattened zod error; the REST route says the same field.
    const invalid = await refusal(admin.memory.contexts.create.mutate({ title: '', body: 'b' }));
    expect(invalid).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(invalid.data.zodError.fieldErrors.title).toBeDefined();
    const restInvalid = await callApi(app.baseUrl, 'POST', '/operator/api/memory/contexts', 'admin-secret', {
      title: '',
      body: 'b',
    });
    expect(restInvalid.body).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('title'),
    });
    // No App credentials here: the preview is refused as on REST.
    expect(
      await refusal(admin.memory.integrations.preview.mutate({ repo: 'acme/trpc', number: 1 })),
    ).toMatchObject({
      httpStatus: 503,
      operatorCode: 'app_credentials_missing',
    });

    // Authentication first: other token classes are 401, keys by scope (the preview never opens to a key).
    expect(await refusal(read.memory.contexts.create.mutate({ title: 't', body: 'b' }))).toMatchObject({
      httpStatus: 401,
    });
    expect(await refusal(client('command-secret').memory.contexts.list.query({}))).toMatchObject({
      httpStatus: 401,
    });
    const { store } = app.verdict;
    const writer = client(
      (await store.apiKeys.create({ name: 'w', scopes: ['memory:write'], actor: 't' })).token,
    );
    const reader = client((await store.apiKeys.create({ name: 'r', scopes: ['read'], actor: 't' })).token);
    expect(await writer.memory.clusters.delete.mutate({ id: cluster.id, body: { revision: 1 } })).toEqual({
      deleted: true,
    });
    expect(
      await refusal(writer.memory.clusters.delete.mutate({ id: cluster.id, body: { revision: 1 } })),
    ).toMatchObject({
      httpStatus: 404,
      operatorCode: 'not_found',
    });
    expect(
      await refusal(writer.memory.integrations.preview.mutate({ repo: 'acme/trpc', number: 1 })),
    ).toMatchObject({
      code: 'FORBIDDEN',
      operatorCode: 'forbidden',
    });
    expect(await refusal(writer.memory.contexts.list.query({}))).toMatchObject({ code: 'FORBIDDEN' });
    expect((await reader.memory.contexts.list.query({ repo: 'acme/trpc' })).contexts).toHaveLength(1);
    expect(await refusal(reader.memory.contexts.create.mutate({ title: 't', body: 'b' }))).toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(await writer.memory.contexts.delete.mutate({ id: context.id, body: { revision: 2 } })).toEqual({
      deleted: true,
    });
  });

  test('scm.dismissAlert: the body is checked, then 404 as on REST (no alert is recorded)', async () => {
    const admin = client('admin-secret');
    expect(await refusal(admin.scm.dismissAlert.mutate({ id: 'a1', body: { revision: 3 } }))).toMatchObject({
      httpStatus: 404,
      operatorCode: 'not_found',
    });
    const invalid = await refusal(admin.scm.dismissAlert.mutate({ id: 'a1', body: {} } as any));
    expect(invalid).toMatchObject({ code: 'BAD_REQUEST' });
    expect(
      await refusal(client('read-secret').scm.dismissAlert.mutate({ id: 'a1', body: { revision: 3 } })),
    ).toMatchObject({ httpStatus: 401 });
  });

  test('every operator REST route is an operation the facade serves too (the same input schema)', () => {
    const procedures = Object.values(
      (appRouter as unknown as { _def: { procedures: Record<string, { _def: { inputs: unknown[] } }> } })._def
        .procedures,
    );
    const served = new Set(procedures.flatMap((p) => p._def.inputs));
    const routes = app.verdict.router.list().filter((r) => r.pattern.startsWith('/operator/api/'));
    const unserved = routes
      .filter((r) => r.pattern !== '/operator/api/openapi.json')
      .filter((r) => !r.meta || !served.has(r.meta.input))
      .map((r) => `${r.method} ${r.pattern}`);
    expect(unserved).toEqual([]);
    expect(routes.length).toBeGreaterThan(40);
  });

  test('an input nested 5,000 levels deep is 400 invalid_request, as on REST (no stack overflow)', async () => {
    const deep = `${'{"a":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
    for (const [procedure, token, input] of [
      ['settings.patch', 'admin-secret', `{"revision":0,"review":${deep}}`],
      ['commands.patch', 'bridge-secret', `{"id":"cmd_x","body":{"status":"succeeded","result":${deep}}}`],
    ] as const) {
      const { status, body } = await callApi(app.baseUrl, 'POST', `/trpc/${procedure}`, token, input);
      expect(status).toBe(400);
      expect(body.error.data).toMatchObject({ code: 'BAD_REQUEST', operatorCode: 'invalid_request' });
    }
  });

  test('no answer carries a stack trace or a file path; an unexpected error says only "Internal server error"', async () => {
    const bodies: string[] = [];
    const raw = async (path: string, token: string | null) => {
      const res = await fetch(`${app.baseUrl}${path}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      const text = await res.text();
      bodies.push(text);
      return { status: res.status, body: JSON.parse(text) };
    };
    expect((await raw('/trpc/snapshot', null)).status).toBe(401);
    expect(
      (await raw('/trpc/traces.get?input=%7B%22traceId%22%3A%22missing%22%7D', 'read-secret')).status,
    ).toBe(404);
    expect(
      (await raw('/trpc/settings.usage?input=%7B%22from%22%3A%222026-02-30%22%7D', 'read-secret')).status,
    ).toBe(400);
    const spy = jest
      .spyOn(app.verdict.store.repositories, 'list')
      .mockRejectedValueOnce(new Error(`SQLITE_ERROR in ${process.cwd()}/src/store/repositories.ts:12`));
    try {
      const failed = await raw('/trpc/repos.list?input=%7B%7D', 'read-secret');
      expect(failed.status).toBe(500);
      expect(failed.body.error).toMatchObject({
        message: 'Internal server error',
        data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500 },
      });
    } finally {
      spy.mockRestore();
    }
    for (const text of bodies) {
      expect(text).not.toMatch(/"stack"/);
      expect(text).not.toContain(process.cwd());
      expect(text).not.toMatch(/\.ts:\d+/);
    }
  });

  test('scripts/failed-runs.ts lists failed runs through the typed client', async () => {
    const run = (env: Record<string, string>, args: string[] = [], withUrl = true) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', join(process.cwd(), 'scripts/failed-runs.ts'), ...args],
          { env: { PATH: process.env.PATH ?? '', ...(withUrl ? { VERDICT_URL: app.baseUrl } : {}), ...env } },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
    const json = await run({ VERDICT_OPERATOR_READ_TOKEN: 'read-secret' }, ['--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).map((i: any) => [i.repo, i.number])).toEqual([['acme/api', 4]]);
    const table = await run({ VERDICT_OPERATOR_READ_TOKEN: 'read-secret' });
    expect(table.stdout).toMatch(/acme\/api#4 .*model_timeout {2}Broken thing/);
    // Without VERDICT_URL it calls this machine on the server's own port (PORT), not some other default.
    const byPort = { PORT: new URL(app.baseUrl).port, VERDICT_OPERATOR_READ_TOKEN: 'read-secret' };
    const local = await run(byPort, ['--json'], false);
    expect(local.code).toBe(0);
    expect(JSON.parse(local.stdout).map((i: any) => i.number)).toEqual([4]);
    const refused = await run({ VERDICT_OPERATOR_READ_TOKEN: 'wrong' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^failed-runs: unauthorized: /);
  }, 30_000);
});
