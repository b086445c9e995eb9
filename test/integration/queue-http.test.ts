import { requestReview } from '../../src/review/request.js';
import { EventEmitter, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Router } from '../../src/http/router.js';
import { HttpQueue, QueueHttpError } from '../../src/queue/http-client.js';
import { registerQueueRoutes } from '../../src/queue/http-routes.js';
import type { QueueBackend } from '../../src/queue/types.js';
import { createHttpServer } from '../../src/server.js';
import { retryDelayMs } from '../../src/store/jobs.js';
import { QueueWorker } from '../../src/worker/runner.js';
import { openTestStore, type TestStore } from '../helpers/store.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { TOKENS } from '../helpers/operator.js';

/** One request with a bearer token (none: no authorization header); a string body is sent as it is. */
async function request(base: string, method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The `/queue` routes on the real server (operator-api 4.5, 5.1) and a worker over them. */
describe('queue routes', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict({ ...TOKENS, VERDICT_WORKER_INLINE: '0' });
  });
  afterEach(() => app.stop());

  const call = (method: string, path: string, token: string | null, body?: unknown) =>
    request(app.baseUrl, method, path, token, body);

  test('every route accepts exactly its token class (not hierarchical); others get 401', async () => {
    const rows: Array<[string, string, unknown, string]> = [
      ['GET', '/queue/jobs', undefined, 'qadmin-secret'],
      ['GET', '/queue/stats', undefined, 'qadmin-secret'],
      ['POST', '/queue/enqueue', { queue: 'lane', kind: 'k', payload: {} }, 'qenqueue-secret'],
      ['POST', '/queue/claim', { queue: 'lane', owner: 'w:1' }, 'qworker-secret'],
      ['POST', '/queue/renew', { jobId: 999, receipt: 'r' }, 'qworker-secret'],
      ['POST', '/queue/ack', { jobId: 999, receipt: 'r' }, 'qworker-secret'],
      ['POST', '/queue/fail', { jobId: 999, receipt: 'r', error: 'e' }, 'qworker-secret'],
      ['POST', '/queue/release', { jobId: 999, receipt: 'r' }, 'qworker-secret'],
    ];
    for (const [method, path, body, accepted] of rows) {
      expect([path, await call(method, path, null, body)]).toEqual([
        path,
        { status: 401, body: { ok: false, error: 'unauthorized' } },
      ]);
      for (const token of Object.values(TOKENS)) {
        if (token === accepted) continue;
        expect([path, token, (await call(method, path, token, body)).status]).toEqual([path, token, 401]);
      }
      const res = await call(method, path, accepted, body);
      expect([path, res.status === 401 || res.status >= 500]).toEqual([path, false]);
    }
  });

  test('a reviews job that would re-run an ended run is refused 409 run_ended (re-runs are requeue commands)', async () => {
    const { store } = app.verdict;
    const request = { owner: 'acme', repo: 'web', number: 3, installationId: 1, trigger: 'opened' };
    const { run: ended } = await requestReview(store, { ...request, headSha: 'e'.repeat(40) });
    await store.runs.update(ended.id, { status: 'failed', error: 'model down' });
    const refused = await call('POST', '/queue/enqueue', 'qenqueue-secret', {
      queue: 'reviews',
      kind: 'review',
      payload: { runId: ended.id },
    });
    expect(refused).toMatchObject({
      status: 409,
      body: { ok: false, error: 'run_ended', runId: ended.id, status: 'failed' },
    });
    expect(refused.body.message).toContain('/operator/api/commands/requeue');
    // A run still waiting for its review may be enqueued (an external producer's own run).
    const { run: waiting } = await requestReview(store, { ...request, number: 4, headSha: 'f'.repeat(40) });
    const accepted = await call('POST', '/queue/enqueue', 'qenqueue-secret', {
      queue: 'reviews',
      kind: 'review',
      key: 'external-1',
      payload: { runId: waiting.id },
    });
    expect(accepted.status).toBeLessThan(300);
  });

  test('a payload nested 5,000 levels deep answers 400 invalid_request; nothing is enqueued', async () => {
    const deep = `{"queue": "lane", "kind": "k", "payload": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const res = await call('POST', '/queue/enqueue', 'qenqueue-secret', deep);
    expect(res).toMatchObject({ status: 400, body: { ok: false, error: 'invalid_request' } });
    expect(res.body.message).toContain('nested deeper than 64 levels');
    const listed = await call('GET', '/queue/jobs?queue=lane', 'qadmin-secret');
    expect(listed.body.jobs ?? []).toHaveLength(0);
  });

  test('bodies are validated: unknown fields, types, bounds; a stale receipt is 409', async () => {
    const bad: Array<[string, unknown, string, string]> = [
      ['/queue/enqueue', { queue: 'lane', kind: 'k', payload: {}, extra: 1 }, 'qenqueue-secret', 'extra'],
      ['/queue/enqueue', { queue: 'has space', kind: 'k', payload: {} }, 'qenqueue-secret', 'queue'],
      // The webhooks lane is Verdict's own: a job there would replay a processed delivery without `force`.
      [
        '/queue/enqueue',
        { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: 'd1' } },
        'qenqueue-secret',
        'queue',
      ],
      ['/queue/enqueue', { queue: 'lane', kind: 'k', payload: {}, mode: 'other' }, 'qenqueue-secret', 'mode'],
      [
        '/queue/enqueue',
        { queue: 'lane', kind: 'k', payload: {}, maxAttempts: 0 },
        'qenqueue-secret',
        'maxAttempts',
      ],
      ['/queue/claim', { queue: 'lane' }, 'qworker-secret', 'owner'],
      ['/queue/claim', { queue: 'lane', owner: 'w', leaseMs: 0 }, 'qworker-secret', 'leaseMs'],
      ['/queue/ack', { jobId: '1', receipt: 'r' }, 'qworker-secret', 'jobId'],
      ['/queue/fail', { jobId: 1, receipt: 'r' }, 'qworker-secret', 'error'],
    ];
    for (const [path, body, token, field] of bad) {
      const res = await call('POST', path, token, body);
      expect([path, field, res.status, res.body.error]).toEqual([path, field, 400, 'invalid_request']);
      expect(res.body.message).toContain(field);
    }
    expect((await call('GET', '/queue/jobs?status=bogus', 'qadmin-secret')).status).toBe(400);
    expect((await call('POST', '/queue/ack', 'qworker-secret', '{')).body.error).toBe('invalid_json');

    const created = await call('POST', '/queue/enqueue', 'qenqueue-secret', {
      queue: 'lane',
      kind: 'k',
      key: 'a',
      payload: 1,
    });
    expect(created).toMatchObject({ status: 201, body: { ok: true, outcome: 'enqueued' } });
    const replaced = await call('POST', '/queue/enqueue', 'qenqueue-secret', {
      queue: 'lane',
      kind: 'k',
      key: 'a',
      payload: 2,
    });
    expect(replaced).toMatchObject({ status: 200, body: { outcome: 'replace_waiting', replacedPayload: 1 } });
    const claimed = await call('POST', '/queue/claim', 'qworker-secret', { queue: 'lane', owner: 'w:1' });
    // A claim that names no lease gets the server default, 300 s.
    expect(claimed.body.job.leaseExpiresAt - claimed.body.job.updatedAt).toBe(300_000);
    const stale = await call('POST', '/queue/ack', 'qworker-secret', {
      jobId: claimed.body.job.id,
      receipt: 'rcpt_old',
    });
    expect(stale).toEqual({
      status: 409,
      body: { ok: false, error: 'stale_receipt', message: expect.any(String) },
    });
    const empty = await call('POST', '/queue/claim', 'qworker-secret', { queue: 'lane', owner: 'w:1' });
    expect(empty.body).toEqual({ ok: true, job: null });
  });

  test('a worker with only VERDICT_QUEUE_URL and the worker token processes each job exactly once', async () => {
    const enqueue = new HttpQueue({ url: app.baseUrl, token: 'qenqueue-secret' });
    for (let i = 0; i < 25; i++) await enqueue.enqueue({ queue: 'remote', kind: 'k', payload: { i } });
    const seen: number[] = [];
    let allSeen!: () => void;
    const done = new Promise<void>((r) => (allSeen = r));
    const queue = new HttpQueue({ url: app.baseUrl, token: 'qworker-secret' });
    const workers = [1, 2].map(
      (n) =>
        new QueueWorker({
          queue,
          queueName: 'remote',
          owner: `remote-${n}:1`,
          leaseMs: 10_000,
          concurrency: 3,
          log: pino({ level: 'silent' }),
          pollMs: 10,
          handler: async (job, ctx) => {
            await ctx.assertLease();
            seen.push((job.payload as { i: number }).i);
            if (seen.length === 25) allSeen();
          },
        }),
    );
    workers.forEach((w) => w.start());
    await done;
    // Stopping lets the last acks finish.
    await Promise.all(workers.map((w) => w.stop(1000)));
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(await app.verdict.store.jobs.stats()).toEqual([{ queue: 'remote', status: 'done', count: 25 }]);
    // The worker token cannot read the admin routes, and says so clearly.
    await expect(queue.stats()).rejects.toThrow(QueueHttpError);
    await expect(queue.stats()).rejects.toThrow(/401 unauthorized/);
  });
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

const Q_TOKENS = { queueAdmin: 'qa', queueEnqueue: 'qe', queueWorker: 'qw' };

/**
 * The routes on their own router over a SQLite job table with a manual clock, so leases, back-off and
 * fencing can be driven exactly; each client holds one token, as a worker machine does.
 */
describe('queue routes over a manual clock', () => {
  let t: TestStore;
  let server: Server;
  let url: string;
  let logLines: string[];
  let admin: HttpQueue;
  let enqueuer: HttpQueue;
  let worker: HttpQueue;

  async function start(opts: { queue?: QueueBackend; maxLeaseMs?: number; defaultLeaseMs?: number } = {}) {
    if (server) await closeServer(server);
    logLines = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
    const router = new Router();
    registerQueueRoutes(router, {
      queue: opts.queue ?? t.store.jobs,
      tokens: Q_TOKENS,
      defaultLeaseMs: opts.defaultLeaseMs ?? 300_000,
      maxLeaseMs: opts.maxLeaseMs,
      log,
    });
    server = createHttpServer(router, [], log);
    url = await listen(server);
    admin = new HttpQueue({ url, token: 'qa' });
    enqueuer = new HttpQueue({ url, token: 'qe' });
    worker = new HttpQueue({ url, token: 'qw' });
  }

  beforeEach(async () => {
    t = await openTestStore('sqlite');
    await start();
  });
  afterEach(async () => {
    await closeServer(server);
    await t.cleanup();
  });

  const raw = (method: string, path: string, token: string | null, body?: unknown) =>
    request(url, method, path, token, body);

  test('enqueue → claim → renew → ack through HttpQueue; the store sees every step', async () => {
    const input = { queue: 'lane', kind: 'review', key: 'pr-1', payload: { n: 1 }, priority: 2 };
    const created = await enqueuer.enqueue(input);
    expect(created).toEqual({ outcome: 'enqueued', jobId: expect.any(Number) });
    expect(await enqueuer.enqueue({ ...input, payload: { n: 2 }, mode: 'keep_existing' })).toEqual({
      outcome: 'already_waiting',
      jobId: created.jobId,
    });
    expect(await worker.claim('other', 'w:1', 1000)).toBeNull();
    const job = (await worker.claim('lane', 'w:1', 1000))!;
    expect(job).toMatchObject({
      id: created.jobId,
      queue: 'lane',
      kind: 'review',
      key: 'pr-1',
      payload: { n: 1 },
      priority: 2,
      status: 'running',
      attempts: 1,
      leaseOwner: 'w:1',
      leaseExpiresAt: t.clock.now() + 1000,
    });
    expect(job.receipt).toMatch(/\S/);
    t.clock.advance(600);
    const renewed = await worker.renew(job.id, job.receipt, 2000);
    expect(renewed).toBe(t.clock.now() + 2000);
    expect((await t.store.jobs.get(job.id))!.leaseExpiresAt).toBe(renewed);
    // The lease was renewed: past the first expiry nobody else can claim the job.
    t.clock.advance(1000);
    expect(await worker.claim('lane', 'w:2', 1000)).toBeNull();
    expect(await worker.ack(job.id, job.receipt)).toBe(true);
    expect(await t.store.jobs.get(job.id)).toMatchObject({ status: 'done', attempts: 1 });
    expect(await worker.ack(job.id, job.receipt)).toBe(false);
    expect(await admin.list({ status: 'done' })).toEqual([expect.objectContaining({ id: job.id })]);
    expect(await admin.stats()).toEqual([{ queue: 'lane', status: 'done', count: 1 }]);
  });

  test('fencing over HTTP: after the lease expires and another owner claims, the old receipt is refused', async () => {
    const { jobId } = await enqueuer.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    const first = (await worker.claim('lane', 'first:1', 1000))!;
    expect(await worker.claim('lane', 'second:2', 1000)).toBeNull();
    t.clock.advance(1001);
    const second = (await worker.claim('lane', 'second:2', 1000))!;
    expect(second).toMatchObject({ id: jobId, leaseOwner: 'second:2', attempts: 2 });
    expect(second.receipt).not.toBe(first.receipt);

    // The client maps the refusal to the interface's values...
    expect(await worker.renew(first.id, first.receipt, 1000)).toBeNull();
    expect(await worker.ack(first.id, first.receipt)).toBe(false);
    expect(await worker.fail(first.id, first.receipt, 'late')).toBeNull();
    expect(await worker.release(first.id, first.receipt)).toBe(false);
    // ...from a 409 stale_receipt on the wire.
    const old = { jobId: first.id, receipt: first.receipt };
    for (const [path, body] of [
      ['/queue/renew', old],
      ['/queue/ack', old],
      ['/queue/fail', { ...old, error: 'late' }],
      ['/queue/release', old],
    ] as const) {
      expect([path, await raw('POST', path, 'qw', body)]).toEqual([
        path,
        { status: 409, body: { ok: false, error: 'stale_receipt', message: expect.any(String) } },
      ]);
    }
    // None of it touched the new holder's lease.
    expect(await t.store.jobs.get(jobId)).toMatchObject({
      status: 'running',
      leaseOwner: 'second:2',
      receipt: second.receipt,
      attempts: 2,
      lastError: null,
    });
    expect(await worker.ack(second.id, second.receipt)).toBe(true);
    expect(await t.store.jobs.get(jobId)).toMatchObject({ status: 'done', leaseOwner: 'second:2' });
  });

  test('fail → retry after the back-off → dead letter with max_attempts; a given reason dead-letters at once', async () => {
    const { jobId } = await enqueuer.enqueue({ queue: 'lane', kind: 'k', payload: {}, maxAttempts: 3 });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const claimed = (await worker.claim('lane', 'w:1', 1000))!;
      expect(claimed).toMatchObject({ id: jobId, attempts: attempt });
      expect(await worker.fail(claimed.id, claimed.receipt, `boom ${attempt}`)).toEqual({
        status: 'waiting',
        runAt: t.clock.now() + retryDelayMs(attempt),
      });
      expect(await t.store.jobs.get(jobId)).toMatchObject({
        status: 'waiting',
        lastError: `boom ${attempt}`,
      });
      t.clock.advance(retryDelayMs(attempt) - 1);
      expect(await worker.claim('lane', 'w:1', 1000)).toBeNull();
      t.clock.advance(1);
    }
    const last = (await worker.claim('lane', 'w:1', 1000))!;
    expect(last.attempts).toBe(3);
    expect(await worker.fail(last.id, last.receipt, 'boom 3')).toEqual({
      status: 'dead',
      reason: 'max_attempts',
    });
    t.clock.advance(3_600_000);
    expect(await worker.claim('lane', 'w:1', 1000)).toBeNull();
    expect(await admin.list({ status: 'dead' })).toEqual([
      expect.objectContaining({ id: jobId, deadReason: 'max_attempts', lastError: 'boom 3', attempts: 3 }),
    ]);

    const other = await enqueuer.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    const claimed = (await worker.claim('lane', 'w:1', 1000))!;
    expect(await worker.fail(claimed.id, claimed.receipt, 'no route', { deadReason: 'unroutable' })).toEqual({
      status: 'dead',
      reason: 'unroutable',
    });
    expect(await t.store.jobs.get(other.jobId)).toMatchObject({ status: 'dead', deadReason: 'unroutable' });
  });

  test('release (Verdict extension) gives the job back after delayMs without counting the attempt', async () => {
    const { jobId } = await enqueuer.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    const claimed = (await worker.claim('lane', 'w:1', 1000))!;
    expect(await worker.release(claimed.id, claimed.receipt, { delayMs: 500 })).toBe(true);
    expect(await t.store.jobs.get(jobId)).toMatchObject({ status: 'waiting', attempts: 0, receipt: null });
    expect(await worker.claim('lane', 'w:1', 1000)).toBeNull();
    t.clock.advance(500);
    expect((await worker.claim('lane', 'w:2', 1000))!).toMatchObject({ id: jobId, attempts: 1 });
  });

  test('the token is checked before the body is read', async () => {
    const big = JSON.stringify({ queue: 'lane', kind: 'k', payload: 'x'.repeat(2 * 1024 * 1024) });
    for (const token of [null, 'qa', 'qw']) {
      expect((await raw('POST', '/queue/enqueue', token, big)).status).toBe(401);
      expect((await raw('POST', '/queue/enqueue', token, '{not json')).status).toBe(401);
      expect((await raw('POST', '/queue/enqueue', token, { nope: 1 })).status).toBe(401);
    }
    expect((await raw('POST', '/queue/enqueue', 'qe', big)).body.error).toBe('payload_too_large');
    expect((await raw('POST', '/queue/ack', 'qe', '{not json')).status).toBe(401);
    expect((await raw('POST', '/queue/ack', 'qw', '{not json')).body.error).toBe('invalid_json');
    // Queue routes take no API key, and a malformed header is no token.
    expect((await raw('GET', '/queue/stats', 'vdt_' + 'a'.repeat(64))).status).toBe(401);
    const basic = await fetch(url + '/queue/stats', { headers: { authorization: 'Basic qa' } });
    expect(basic.status).toBe(401);
    expect(await t.store.jobs.stats()).toEqual([]);
  });

  test('every field is validated; the message names it', async () => {
    const enq = { queue: 'lane', kind: 'k', payload: {} };
    const ack = { jobId: 1, receipt: 'r' };
    const cases: Array<[string, string, unknown, string]> = [
      ['/queue/enqueue', 'qe', { queue: 'lane', kind: 'k' }, 'payload'],
      ['/queue/enqueue', 'qe', { ...enq, queue: '' }, 'queue'],
      ['/queue/enqueue', 'qe', { ...enq, queue: 'q'.repeat(65) }, 'queue'],
      ['/queue/enqueue', 'qe', { ...enq, kind: 'a/b' }, 'kind'],
      ['/queue/enqueue', 'qe', { ...enq, key: 'k'.repeat(501) }, 'key'],
      ['/queue/enqueue', 'qe', { ...enq, key: 'a\nb' }, 'key'],
      ['/queue/enqueue', 'qe', { ...enq, key: 7 }, 'key'],
      ['/queue/enqueue', 'qe', { ...enq, maxAttempts: 101 }, 'maxAttempts'],
      ['/queue/enqueue', 'qe', { ...enq, maxAttempts: 1.5 }, 'maxAttempts'],
      ['/queue/enqueue', 'qe', { ...enq, priority: 1001 }, 'priority'],
      ['/queue/enqueue', 'qe', { ...enq, runAt: -1 }, 'runAt'],
      ['/queue/enqueue', 'qe', { ...enq, runAt: 2 ** 53 }, 'runAt'],
      ['/queue/enqueue', 'qe', { ...enq, jobId: 1 }, 'jobId'],
      ['/queue/enqueue', 'qe', [enq], 'body'],
      ['/queue/claim', 'qw', {}, 'queue'],
      ['/queue/claim', 'qw', { queue: 'lane', owner: '' }, 'owner'],
      ['/queue/claim', 'qw', { queue: 'lane', owner: 'o'.repeat(256) }, 'owner'],
      ['/queue/claim', 'qw', { queue: 'lane', owner: 'w\u0000' }, 'owner'],
      ['/queue/claim', 'qw', { queue: 'lane', owner: 'w', leaseMs: '1000' }, 'leaseMs'],
      ['/queue/claim', 'qw', { queue: 'lane', owner: 'w', limit: 5 }, 'limit'],
      ['/queue/renew', 'qw', { ...ack, leaseMs: -5 }, 'leaseMs'],
      ['/queue/renew', 'qw', { receipt: 'r' }, 'jobId'],
      ['/queue/ack', 'qw', { ...ack, jobId: 0 }, 'jobId'],
      ['/queue/ack', 'qw', { ...ack, jobId: 2 ** 53 }, 'jobId'],
      ['/queue/ack', 'qw', { ...ack, jobId: 1.5 }, 'jobId'],
      ['/queue/ack', 'qw', { ...ack, receipt: '' }, 'receipt'],
      ['/queue/ack', 'qw', { ...ack, receipt: 'r'.repeat(129) }, 'receipt'],
      ['/queue/ack', 'qw', { ...ack, owner: 'w' }, 'owner'],
      ['/queue/fail', 'qw', { ...ack, error: 'e'.repeat(4001) }, 'error'],
      ['/queue/fail', 'qw', { ...ack, error: 'e', deadReason: 'no spaces' }, 'deadReason'],
      ['/queue/release', 'qw', { ...ack, delayMs: -1 }, 'delayMs'],
      ['/queue/release', 'qw', { ...ack, delayMs: 86_400_001 }, 'delayMs'],
    ];
    for (const [path, token, body, field] of cases) {
      const res = await raw('POST', path, token, body);
      expect([path, field, res.status, res.body.ok, res.body.error]).toEqual([
        path,
        field,
        400,
        false,
        'invalid_request',
      ]);
      expect([path, field, res.body.message]).toEqual([path, field, expect.stringContaining(field)]);
    }
    expect(await t.store.jobs.stats()).toEqual([]);
  });

  test('GET /queue/jobs: limit default 50, clamped to 1..100, non-integer → 50; status and queue checked', async () => {
    await t.store.jobs.enqueueMany(
      Array.from({ length: 120 }, (_, i) => ({ queue: 'bulk', kind: 'k', payload: i })),
    );
    await t.store.jobs.enqueue({ queue: 'other', kind: 'k', payload: null });
    const count = async (query: string) => {
      const res = await raw('GET', `/queue/jobs${query}`, 'qa');
      expect([query, res.status, res.body.ok]).toEqual([query, 200, true]);
      return (res.body.jobs as unknown[]).length;
    };
    expect(await count('')).toBe(50);
    expect(await count('?limit=1000')).toBe(100);
    expect(await count('?limit=99999999999999999999')).toBe(100);
    expect(await count('?limit=0')).toBe(1);
    expect(await count('?limit=-3')).toBe(1);
    expect(await count('?limit=abc')).toBe(50);
    expect(await count('?limit=2.5')).toBe(50);
    expect(await count('?limit=7')).toBe(7);
    expect(await count('?queue=other')).toBe(1);
    expect(await count('?queue=bulk&status=waiting&limit=100')).toBe(100);
    expect(await count('?status=dead')).toBe(0);
    expect(await count('?status=&queue=')).toBe(50);
    const bad = await raw('GET', '/queue/jobs?status=bogus', 'qa');
    expect(bad).toMatchObject({ status: 400, body: { ok: false, error: 'invalid_request' } });
    expect(bad.body.message).toContain('status');
    const badQueue = await raw('GET', `/queue/jobs?queue=${encodeURIComponent('a b')}`, 'qa');
    expect(badQueue).toMatchObject({ status: 400, body: { ok: false, error: 'invalid_request' } });
    expect(badQueue.body.message).toContain('queue');
    expect(await admin.stats()).toEqual(
      expect.arrayContaining([
        { queue: 'bulk', status: 'waiting', count: 120 },
        { queue: 'other', status: 'waiting', count: 1 },
      ]),
    );
  });

  test('leases: the default applies when none is named, and both are bounded by maxLeaseMs', async () => {
    await start({ defaultLeaseMs: 300_000, maxLeaseMs: 60_000 });
    await enqueuer.enqueue({ queue: 'lane', kind: 'k', payload: {} });
    const over = await raw('POST', '/queue/claim', 'qw', { queue: 'lane', owner: 'w', leaseMs: 60_001 });
    expect(over.status).toBe(400);
    expect(over.body.message).toContain('leaseMs');
    const claimed = await raw('POST', '/queue/claim', 'qw', { queue: 'lane', owner: 'w' });
    expect(claimed.status).toBe(200);
    expect(claimed.body.job.leaseExpiresAt).toBe(t.clock.now() + 60_000);
    const { id, receipt } = claimed.body.job;
    expect((await raw('POST', '/queue/renew', 'qw', { jobId: id, receipt, leaseMs: 60_001 })).status).toBe(
      400,
    );
    t.clock.advance(10);
    expect(await raw('POST', '/queue/renew', 'qw', { jobId: id, receipt })).toEqual({
      status: 200,
      body: { ok: true, leaseExpiresAt: t.clock.now() + 60_000 },
    });
    expect(await worker.renew(id, receipt, 60_000)).toBe(t.clock.now() + 60_000);
    await expect(worker.renew(id, receipt, 60_001)).rejects.toThrow(/400 invalid_request.*leaseMs/);
  });

  test('a failing store answers 500 queue_unavailable, logged; the client throws with status and code', async () => {
    const broken = new Proxy({ kind: 'sqlite' } as QueueBackend, {
      get: (target, prop) =>
        prop === 'kind' ? target.kind : async () => Promise.reject(new Error('database is locked')),
    });
    await start({ queue: broken });
    const routes: Array<[string, string, string, unknown]> = [
      ['GET', '/queue/jobs', 'qa', undefined],
      ['GET', '/queue/stats', 'qa', undefined],
      ['POST', '/queue/enqueue', 'qe', { queue: 'lane', kind: 'k', payload: {} }],
      ['POST', '/queue/claim', 'qw', { queue: 'lane', owner: 'w' }],
      ['POST', '/queue/renew', 'qw', { jobId: 1, receipt: 'r' }],
      ['POST', '/queue/ack', 'qw', { jobId: 1, receipt: 'r' }],
      ['POST', '/queue/fail', 'qw', { jobId: 1, receipt: 'r', error: 'e' }],
      ['POST', '/queue/release', 'qw', { jobId: 1, receipt: 'r' }],
    ];
    for (const [method, path, token, body] of routes) {
      const res = await raw(method, path, token, body);
      expect([path, res.status, res.body.ok, res.body.error]).toEqual([
        path,
        500,
        false,
        'queue_unavailable',
      ]);
      expect(JSON.stringify(res.body)).not.toContain('locked');
    }
    const failures = logLines.map((l) => JSON.parse(l)).filter((l) => l.event === 'queue-route-failed');
    expect(failures.map((l) => l.path)).toEqual(routes.map((r) => r[1]));
    expect(failures[0].err.message).toBe('database is locked');
    const error = await worker.claim('lane', 'w', 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueHttpError);
    expect(error).toMatchObject({ status: 500, code: 'queue_unavailable' });
    expect((error as Error).message).toMatch(/POST \/queue\/claim answered 500 queue_unavailable/);
    // A worker's renew/ack throws too: only a 409 stale_receipt is a refusal.
    await expect(worker.ack(1, 'r')).rejects.toMatchObject({ status: 500, code: 'queue_unavailable' });
  });

  test('a QueueWorker over HttpQueue: retries after the back-off, and a graceful stop releases its job', async () => {
    const attempts = new Map<number, number>();
    const log = pino({ level: 'silent' });
    const handlerEntered = new EventEmitter();
    const handler = async (job: { payload: unknown }, ctx: { signal: AbortSignal }) => {
      const n = (job.payload as { n: number }).n;
      attempts.set(n, (attempts.get(n) ?? 0) + 1);
      handlerEntered.emit('job', n);
      if (n === 1 && attempts.get(n) === 1) throw new Error('transient');
      if (n === 2) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    };
    // The worker's answers to the queue, announced once the server has taken them.
    const answered = new EventEmitter();
    const reporting = Object.assign(Object.create(worker) as HttpQueue, {
      ack: async (...args: Parameters<HttpQueue['ack']>) => {
        const ok = await worker.ack(...args);
        answered.emit('ack', args[0]);
        return ok;
      },
      fail: async (...args: Parameters<HttpQueue['fail']>) => {
        const result = await worker.fail(...args);
        answered.emit('fail', args[0]);
        return result;
      },
    });
    const w = new QueueWorker({
      queue: reporting,
      queueName: 'lane',
      owner: 'remote:1',
      leaseMs: 60_000,
      concurrency: 2,
      log,
      pollMs: 5,
      handler,
    });
    const one = await enqueuer.enqueue({ queue: 'lane', kind: 'k', payload: { n: 1 } });
    const failed = once(answered, 'fail');
    w.start();
    expect(await failed).toEqual([one.jobId]);
    expect(await t.store.jobs.get(one.jobId)).toMatchObject({
      status: 'waiting',
      attempts: 1,
      lastError: 'transient',
    });
    const acked = once(answered, 'ack');
    t.clock.advance(retryDelayMs(1));
    w.kick();
    expect(await acked).toEqual([one.jobId]);
    expect(await t.store.jobs.get(one.jobId)).toMatchObject({
      status: 'done',
      attempts: 2,
      leaseOwner: 'remote:1',
    });

    const running = once(handlerEntered, 'job');
    const two = await enqueuer.enqueue({ queue: 'lane', kind: 'k', payload: { n: 2 } });
    w.kick();
    expect(await running).toEqual([2]);
    expect(await t.store.jobs.get(two.jobId)).toMatchObject({ status: 'running' });
    await w.stop(20);
    expect(await t.store.jobs.get(two.jobId)).toMatchObject({
      status: 'waiting',
      attempts: 0,
      receipt: null,
    });
    expect(Object.fromEntries(attempts)).toEqual({ 1: 2, 2: 1 });
  });
});

/** The client against servers that misbehave: errors are QueueHttpErrors with a clear message. */
describe('HttpQueue failures', () => {
  let stub: Server | null = null;
  afterEach(async () => {
    if (stub) await closeServer(stub);
    stub = null;
  });

  test('sends the bearer token and JSON, and throws on errors other than a stale receipt', async () => {
    const seen: Array<{ method?: string; url?: string; auth?: string; body: string }> = [];
    stub = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body });
        const answer = (status: number, json: unknown, type = 'application/json') => {
          res.writeHead(status, { 'content-type': type });
          res.end(typeof json === 'string' ? json : JSON.stringify(json));
        };
        if (req.url === '/base/queue/ack') return answer(409, { ok: false, error: 'conflict' });
        if (req.url === '/base/queue/claim') return answer(200, '<html>proxy</html>', 'text/html');
        if (req.url === '/base/queue/renew') return answer(502, 'bad gateway', 'text/plain');
        if (req.url === '/base/queue/stats') return answer(200, { ok: false });
        return answer(404, { ok: false, error: 'not_found', message: 'No route' });
      });
    });
    const base = await listen(stub);
    const q = new HttpQueue({ url: `${base}/base/`, token: 'tok-1' });
    await expect(q.ack(1, 'r')).rejects.toMatchObject({ status: 409, code: 'conflict' });
    await expect(q.claim('lane', 'w', 10)).rejects.toMatchObject({ status: 200, code: 'invalid_response' });
    await expect(q.renew(1, 'r', 10)).rejects.toThrow('queue POST /queue/renew answered 502 http_error');
    await expect(q.stats()).rejects.toMatchObject({ code: 'invalid_response' });
    await expect(q.release(1, 'r')).rejects.toThrow('answered 404 not_found: No route');
    expect(await q.reapExpired()).toBe(0);
    expect(seen[0]).toEqual({
      method: 'POST',
      url: '/base/queue/ack',
      auth: 'Bearer tok-1',
      body: JSON.stringify({ jobId: 1, receipt: 'r' }),
    });
    expect(seen.every((s) => s.auth === 'Bearer tok-1')).toBe(true);
    expect(seen.map((s) => s.url)).not.toContain('/base/queue/reap');
  });

  test('a server that does not answer times out; a closed port is unreachable', async () => {
    stub = createServer(() => undefined); // never answers
    const base = await listen(stub);
    const slow = new HttpQueue({ url: base, token: 't', timeoutMs: 100 });
    const started = Date.now();
    await expect(slow.claim('lane', 'w', 10)).rejects.toMatchObject({ status: null, code: 'queue_timeout' });
    expect(Date.now() - started).toBeLessThan(5000);
    await closeServer(stub);
    stub = null;
    const gone = new HttpQueue({ url: base, token: 't', timeoutMs: 2000 });
    const error = await gone.ack(1, 'r').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueHttpError);
    expect(error).toMatchObject({ status: null, code: 'queue_unreachable' });
    expect((error as Error).message).toMatch(/queue POST \/queue\/ack failed: .*ECONNREFUSED/);
  });

  test('refuses a bad URL or an empty token at construction', () => {
    expect(() => new HttpQueue({ url: 'not a url', token: 't' })).toThrow(/VERDICT_QUEUE_URL/);
    expect(() => new HttpQueue({ url: 'ftp://x', token: 't' })).toThrow(/http or https/);
    expect(() => new HttpQueue({ url: 'http://127.0.0.1:1', token: '' })).toThrow(/VERDICT_QUEUE_TOKEN/);
  });
});
