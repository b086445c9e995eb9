import pino from 'pino';
import { HttpQueue, QueueHttpError } from '../../src/queue/http-client.js';
import { QueueWorker } from '../../src/worker/runner.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

const TOKENS = {
  VERDICT_OPERATOR_ADMIN_TOKEN: 'admin-secret',
  VERDICT_OPERATOR_READ_TOKEN: 'read-secret',
  VERDICT_OPERATOR_COMMAND_TOKEN: 'command-secret',
  VERDICT_OPERATOR_BRIDGE_TOKEN: 'bridge-secret',
  VERDICT_QUEUE_ADMIN_TOKEN: 'qadmin-secret',
  VERDICT_QUEUE_ENQUEUE_TOKEN: 'qenqueue-secret',
  VERDICT_QUEUE_WORKER_TOKEN: 'qworker-secret',
};

/** The `/queue` routes on the real server (operator-api 4.5, 5.1) and a worker over them. */
describe('queue routes', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict({ ...TOKENS, VERDICT_WORKER_INLINE: '0' });
  });
  afterEach(() => app.stop());

  async function call(method: string, path: string, token: string | null, body?: unknown) {
    const res = await fetch(app.baseUrl + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

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

  test('bodies are validated: unknown fields, types, bounds; a stale receipt is 409', async () => {
    const bad: Array<[string, unknown, string, string]> = [
      ['/queue/enqueue', { queue: 'lane', kind: 'k', payload: {}, extra: 1 }, 'qenqueue-secret', 'extra'],
      ['/queue/enqueue', { queue: 'has space', kind: 'k', payload: {} }, 'qenqueue-secret', 'queue'],
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
          },
        }),
    );
    workers.forEach((w) => w.start());
    for (let i = 0; i < 500 && seen.length < 25; i++) await new Promise((r) => setTimeout(r, 10));
    await Promise.all(workers.map((w) => w.stop(1000)));
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(await app.verdict.store.jobs.stats()).toEqual([{ queue: 'remote', status: 'done', count: 25 }]);
    // The worker token cannot read the admin routes, and says so clearly.
    await expect(queue.stats()).rejects.toThrow(QueueHttpError);
    await expect(queue.stats()).rejects.toThrow(/401 unauthorized/);
  });
});
