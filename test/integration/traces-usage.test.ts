import { ManualClock } from '../../src/clock.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { TOKENS } from '../helpers/operator.js';

/** A GET of the operator API with the read token. */
function readGet(app: RunningVerdict, path: string): Promise<Response> {
  return fetch(app.baseUrl + path, { headers: { authorization: 'Bearer read-secret' } });
}

/** Another connection to the app's SQLite file: writes like another process's, which the cache does not watch. */
async function otherConnection(app: RunningVerdict) {
  const { default: knexFactory } = await import('knex');
  const { filename } = app.verdict.config.store as { filename: string };
  return knexFactory({ client: 'better-sqlite3', connection: { filename }, useNullAsDefault: true });
}

const HEAD = 'b'.repeat(40);
const KEY = `acme/api#7@${HEAD}`;

/** Traces (operator-api 2.6, 4.1), the usage report (4.6, 7, 8) and PR-detail findings over HTTP. */
describe('traces, usage and findings routes', () => {
  let app: RunningVerdict;
  let readKey: string;
  let memoryKey: string;
  beforeAll(async () => {
    app = await startVerdict(TOKENS);
    const { store } = app.verdict;
    readKey = (await store.apiKeys.create({ name: 'reader', scopes: ['read'], actor: 't' })).token;
    memoryKey = (await store.apiKeys.create({ name: 'mem', scopes: ['memory:write'], actor: 't' })).token;
    const now = Date.now();
    await store.traces.start({
      id: 'tr-a',
      runId: 'run-a',
      reviewKey: KEY,
      repo: 'acme/api',
      prNumber: 7,
      name: 'review',
      startedAt: now - 5000,
    });
    await store.traces.addSpan({
      traceId: 'tr-a',
      spanId: 'root',
      kind: 'stage',
      name: 'review',
      status: 'ok',
      startedAt: now - 5000,
    });
    await store.traces.addSpan({
      traceId: 'tr-a',
      spanId: 'm1',
      parentSpanId: 'root',
      kind: 'model',
      name: 'chunk 1',
      status: 'ok',
      provider: 'direct_a',
      model: 'gpt',
      inputTokens: 900,
      outputTokens: 100,
      costUsd: 0.02,
      startedAt: now - 4000,
      attributes: { input: 'the diff' },
    });
    await store.traces.finish('tr-a', 'ok');
    await store.traces.start({
      id: 'tr-b',
      runId: 'run-b',
      repo: 'acme/web',
      prNumber: 3,
      name: 'review',
      startedAt: now - 1000,
    });
    await store.pullRequests.upsert({ repo: 'acme/api', number: 7, headSha: HEAD, title: 'Add cache' });
    await store.findings.recordMany(
      { runId: 'run-a', reviewKey: KEY, repo: 'acme/api', prNumber: 7, headSha: HEAD },
      [
        {
          severity: 'high',
          category: 'bug',
          path: 'src/cache.ts',
          line: 12,
          title: 'Stale read',
          body: 'b',
          fingerprint: 'f1',
          outsideDiff: false,
        },
        {
          severity: 'low',
          category: 'style',
          path: null,
          line: null,
          title: 'Naming',
          body: 'b',
          fingerprint: 'f2',
          outsideDiff: true,
        },
      ],
    );
  });
  afterAll(() => app.stop());

  async function get(path: string, token: string | null = 'read-secret') {
    const res = await fetch(app.baseUrl + path, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  test('trace list: newest first, summaries without totals or span counts, every filter', async () => {
    const all = await get('/operator/api/traces');
    expect(all.status).toBe(200);
    expect(all.body.traces.map((x: any) => x.traceId)).toEqual(['tr-b', 'tr-a']);
    for (const summary of all.body.traces) {
      expect(Object.keys(summary).sort()).toEqual(
        [
          'attributes',
          'durationMs',
          'endedAt',
          'name',
          'prNumber',
          'repo',
          'reviewKey',
          'runId',
          'startedAt',
          'status',
          'traceId',
        ].sort(),
      );
    }
    const ids = async (q: string) =>
      (await get(`/operator/api/traces?${q}`)).body.traces.map((x: any) => x.traceId);
    expect(await ids('repo=acme/api')).toEqual(['tr-a']);
    expect(await ids('prNumber=3')).toEqual(['tr-b']);
    expect(await ids('pr=7')).toEqual(['tr-a']);
    expect(await ids(`reviewKey=${encodeURIComponent(KEY)}`)).toEqual(['tr-a']);
    expect(await ids('runId=run-b')).toEqual(['tr-b']);
    expect(await ids('status=running')).toEqual(['tr-b']);
    expect(await ids('limit=1')).toEqual(['tr-b']);
    expect(await ids('limit=abc')).toEqual(['tr-b', 'tr-a']);
    for (const bad of [
      'status=weird',
      'prNumber=x',
      'pr=0',
      'repo=nope',
      'pr=3&prNumber=7',
      `reviewKey=${'k'.repeat(301)}`,
    ]) {
      expect([bad, (await get(`/operator/api/traces?${bad}`)).status]).toEqual([bad, 400]);
    }
  });

  test('one trace: trace with spans beside it, token and cost fields, no bodies; 404 when missing', async () => {
    const one = await get('/operator/api/traces/tr-a');
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(['ok', 'spans', 'trace']);
    expect(one.body.trace).toMatchObject({ traceId: 'tr-a', status: 'ok' });
    expect(one.body.spans.map((s: any) => [s.spanId, s.parentSpanId, s.kind])).toEqual([
      ['root', null, 'stage'],
      ['m1', 'root', 'model'],
    ]);
    expect(one.body.spans[1]).toMatchObject({ inputTokens: 900, outputTokens: 100, costUsd: 0.02 });
    expect(JSON.stringify(one.body)).not.toContain('the diff');
    expect(await get('/operator/api/traces/missing')).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found' },
    });
  });

  test('traces and usage: read token or a read key; other credentials refused', async () => {
    for (const path of [
      '/operator/api/traces',
      '/operator/api/traces/tr-a',
      '/operator/api/settings/usage',
    ]) {
      expect([path, (await get(path, readKey)).status]).toEqual([path, 200]);
      expect([path, (await get(path, memoryKey)).status]).toEqual([path, 403]);
      for (const token of [
        null,
        'admin-secret',
        'bridge-secret',
        'command-secret',
        'qadmin-secret',
        'nope',
        'vdt_' + '0'.repeat(64),
      ]) {
        expect([path, token, (await get(path, token)).body]).toEqual([
          path,
          token,
          { ok: false, error: 'unauthorized' },
        ]);
      }
    }
  });

  test('usage: month start through today by default, known totals, unknown where a call did not report', async () => {
    const res = await get('/operator/api/settings/usage');
    expect(res.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(res.body).toMatchObject({ ok: true, from: `${today.slice(0, 8)}01`, to: today });
    expect(res.body.model).toMatchObject({
      calls: 1,
      inputTokens: 900,
      outputTokens: 100,
      costUsd: 0.02,
      complete: true,
    });
    expect(res.body.chat).toMatchObject({ calls: 0, complete: true });
    await app.verdict.store.traces.addSpan({
      traceId: 'tr-b',
      spanId: 'c1',
      kind: 'chat',
      name: 'reply',
      status: 'ok',
      provider: 'direct_a',
      model: 'gpt',
      inputTokens: null,
      outputTokens: 3,
      costUsd: null,
      startedAt: Date.now(),
    });
    const after = await get('/operator/api/settings/usage');
    expect(after.body.chat).toMatchObject({
      calls: 1,
      inputTokens: null,
      outputTokens: 3,
      costUsd: null,
      complete: false,
    });
    expect(after.body.notes.join(' ')).toMatch(/chat: some calls did not report usage/);
    const past = await get('/operator/api/settings/usage?from=2020-01-01&to=2020-01-31');
    expect(past.body).toMatchObject({
      from: '2020-01-01',
      to: '2020-01-31',
      model: { calls: 0, costUsd: 0 },
    });
  });

  test('usage: from/to must be real UTC days in order', async () => {
    for (const bad of [
      'from=2026-13-01',
      'from=2026-02-30',
      'to=yesterday',
      'from=2026-05-02&to=2026-05-01',
      'from=20260501',
    ]) {
      const res = await get(`/operator/api/settings/usage?${bad}`);
      expect([bad, res.status, res.body.error]).toEqual([bad, 400, 'invalid_request']);
    }
    expect((await get('/operator/api/settings/usage?from=2024-02-29&to=2024-02-29')).status).toBe(200);
  });

  test('PR detail carries the recorded findings with nullable locations', async () => {
    const res = await get('/operator/api/pr?repo=acme/api&number=7');
    expect(res.status).toBe(200);
    expect(res.body.data.findings).toEqual([
      expect.objectContaining({
        title: 'Stale read',
        path: 'src/cache.ts',
        line: 12,
        severity: 'high',
        reviewKey: KEY,
      }),
      expect.objectContaining({ title: 'Naming', path: null, line: null, outsideDiff: true }),
    ]);
  });
});

describe('usage over 50,000 source rows', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict(TOKENS);
  });
  afterAll(() => app.stop());

  test('answers 413 with the row count, and a narrower range answers 200', async () => {
    const knex = app.verdict.store.db.knex;
    const day = Date.UTC(2025, 5, 10);
    const rows = Array.from({ length: 50_001 }, (_, i) => ({
      trace_id: 't',
      span_id: `s${i}`,
      kind: 'model',
      name: 'm',
      status: 'ok',
      started_at: day + (i < 10 ? 86_400_000 : 0),
    }));
    for (let i = 0; i < rows.length; i += 500) await knex('spans').insert(rows.slice(i, i + 500));
    const res = await readGet(app, '/operator/api/settings/usage?from=2025-06-01&to=2025-06-30');
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, error: 'usage_too_large', sourceRows: 50_001 });
    const narrow = await readGet(app, '/operator/api/settings/usage?from=2025-06-11&to=2025-06-11');
    expect(narrow.status).toBe(200);
    expect(((await narrow.json()) as any).model.calls).toBe(10);
  }, 60_000);
});

describe('operator read cache and the read-only connection', () => {
  test('in-process writes show at once; writes by another process show within the cache TTL', async () => {
    // The cache's TTL runs on the manual clock.
    const clock = new ManualClock();
    const app = await startVerdict({ ...TOKENS, VERDICT_OPERATOR_CACHE_MS: '300' }, { timers: clock });
    try {
      const { store } = app.verdict;
      const items = async () => {
        const res = await readGet(app, '/operator/api/snapshot');
        return ((await res.json()) as any).data.items.map((i: any) => i.number);
      };
      expect(await items()).toEqual([]);
      await store.pullRequests.upsert({ repo: 'acme/api', number: 1, title: 'one' });
      expect(await items()).toEqual([1]);
      // Another process writing the same file (a worker).
      const other = await otherConnection(app);
      try {
        await other('pull_requests').insert({
          repo: 'acme/api',
          number: 2,
          title: 'two',
          draft: false,
          created_at: clock.now() + 1,
          updated_at: clock.now() + 1,
        });
      } finally {
        await other.destroy();
      }
      expect(await items()).toEqual([1]);
      clock.advance(299);
      expect(await items()).toEqual([1]);
      clock.advance(1);
      expect(await items()).toEqual([2, 1]);
    } finally {
      await app.stop();
    }
  });

  test('PR detail: a change by another process shows at once (the stamp), an unchanged PR is served from cache', async () => {
    const clock = new ManualClock();
    const app = await startVerdict({ ...TOKENS }, { timers: clock });
    const other = await otherConnection(app);
    try {
      const { store } = app.verdict;
      await store.pullRequests.upsert({
        repo: 'acme/api',
        number: 4,
        title: 'four',
        headSha: 'a'.repeat(40),
      });
      const { run } = await store.runs.createOrGet({
        reviewKey: `acme/api#4@${'a'.repeat(40)}`,
        repo: 'acme/api',
        prNumber: 4,
        headSha: 'a'.repeat(40),
        trigger: 'opened',
        installationId: 1,
      });
      const detail = async () => {
        const res = await readGet(app, '/operator/api/pr?repo=acme/api&number=4');
        expect(res.status).toBe(200);
        return ((await res.json()) as any).data;
      };
      const firstRes = await readGet(app, '/operator/api/pr?repo=acme/api&number=4');
      const firstBody = (await firstRes.json()) as any;
      const first = firstBody.data;
      expect(first.runs[0].status).toBe('queued');
      // Unchanged: the same answer, generatedAt included, comes from the cache 30 ms later.
      clock.advance(30);
      const again = await readGet(app, '/operator/api/pr?repo=acme/api&number=4');
      const cached = (await again.json()) as any;
      expect(cached).toEqual(firstBody);
      expect(again.headers.get('cache-control')).toBe('no-store');
      // Each write below is made by another connection, which this process does not watch.
      await other('runs')
        .where({ id: run.id })
        .update({ status: 'completed', updated_at: clock.now() + 5 });
      expect((await detail()).runs[0].status).toBe('completed');
      await other('publications').insert({
        run_id: run.id,
        repo: 'acme/api',
        pr_number: 4,
        kind: 'review',
        mode: 'shadow',
        status: 'shadowed',
        created_at: clock.now(),
      });
      expect((await detail()).publications).toHaveLength(1);
      await other('findings').insert({
        run_id: run.id,
        review_key: run.reviewKey,
        repo: 'acme/api',
        pr_number: 4,
        severity: 'high',
        category: 'bug',
        title: 'Off by one',
        body: 'i <= n',
        fingerprint: 'f'.repeat(16),
        created_at: clock.now(),
      });
      expect((await detail()).findings.map((f: any) => f.title)).toEqual(['Off by one']);
      await other('operator_commands').insert({
        id: 'cmd-x',
        kind: 'requeue',
        status: 'queued',
        payload: '{}',
        repo: 'acme/api',
        pr_number: 4,
        actor: 'test',
        created_at: clock.now(),
        updated_at: clock.now(),
      });
      expect((await detail()).events.some((e: any) => e.commandId === 'cmd-x' && e.status === 'queued')).toBe(
        true,
      );
      await other('operator_commands')
        .where({ id: 'cmd-x' })
        .update({ status: 'running', updated_at: clock.now() + 10 });
      expect((await detail()).events.find((e: any) => e.commandId === 'cmd-x').status).toBe('running');
    } finally {
      await other.destroy();
      await app.stop();
    }
  });
});
