import {
  ADMIN,
  TOKENS,
  repairHarness,
  retriesToDeadSuite,
  type RepairHarness,
} from './queue-repair-suite.js';

describe('retries, dead letter and queue repair on SQLite', () => retriesToDeadSuite('sqlite'));

describe('queue repair routes (operator-api 4.4)', () => {
  let h: RepairHarness;
  beforeEach(async () => {
    h = await repairHarness('sqlite');
  });
  afterEach(() => h.close());

  const routes = ['/operator/api/queue/requeue-dead', '/operator/api/queue/release-lease'];

  test.each(routes)(
    '%s accepts only the operator admin token (classes are not hierarchical)',
    async (path) => {
      expect(await h.post(path, { jobKey: 'k' }, null)).toEqual({
        status: 401,
        body: { ok: false, error: 'unauthorized' },
      });
      for (const [cls, token] of Object.entries(TOKENS)) {
        if (cls === 'operatorAdmin') continue;
        const res = await h.post(path, { jobKey: 'k' }, token);
        expect([cls, res.status, res.body]).toEqual([cls, 401, { ok: false, error: 'unauthorized' }]);
      }
      expect((await h.post(path, { jobKey: 'k' }, ADMIN + 'x')).status).toBe(401);
      expect((await h.post(path, { jobKey: 'k' }, ADMIN)).status).toBe(404); // authenticated; nothing to repair
    },
  );

  test('bodies are validated: unknown fields, wrong types, and exactly one of jobKey / receiptId', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/operator/api/queue/requeue-dead', {}, 'jobKey'],
      ['/operator/api/queue/requeue-dead', { jobKey: 'k', resetAttempts: 'yes' }, 'resetAttempts'],
      ['/operator/api/queue/requeue-dead', { jobKey: 'k', extra: 1 }, 'extra'],
      ['/operator/api/queue/requeue-dead', { jobKey: '' }, 'jobKey'],
      ['/operator/api/queue/requeue-dead', { jobKey: 'k', reason: 'x'.repeat(1001) }, 'reason'],
      ['/operator/api/queue/release-lease', {}, 'jobKey'],
      ['/operator/api/queue/release-lease', { jobKey: 'k', receiptId: 'r' }, 'jobKey'],
      ['/operator/api/queue/release-lease', { jobKey: 'k', force: 1 }, 'force'],
    ];
    for (const [path, body, field] of cases) {
      const res = await h.post(path, body);
      expect(res.status).toBe(400);
      expect(res.body.ok).toBe(false);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.message).toContain(field);
    }
    const bad = await h.post('/operator/api/queue/requeue-dead', '{"jobKey":');
    expect(bad).toMatchObject({ status: 400, body: { ok: false, error: 'invalid_json' } });
  });

  test('requeue-dead refuses when nothing is dead, and when the key already has a waiting job', async () => {
    const { store } = h.t;
    expect(await h.post('/operator/api/queue/requeue-dead', { jobKey: 'nope' })).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found' },
    });
    await store.jobs.enqueue({ queue: 'lane', kind: 'test', key: 'k', payload: { v: 1 }, maxAttempts: 1 });
    const job = (await store.jobs.claim('lane', 'w:1', 1000))!;
    expect(await store.jobs.fail(job.id, job.receipt, 'boom')).toEqual({
      status: 'dead',
      reason: 'max_attempts',
    });
    const waiting = await store.jobs.enqueue({ queue: 'lane', kind: 'test', key: 'k', payload: { v: 2 } });
    const res = await h.post('/operator/api/queue/requeue-dead', { jobKey: 'k' });
    expect(res).toMatchObject({
      status: 409,
      body: { ok: false, error: 'waiting_job_exists', jobId: waiting.jobId },
    });
    expect((await store.jobs.get(job.id))!.status).toBe('dead');
    expect(await store.audit.list()).toEqual([]);
  });

  test('requeue-dead without resetAttempts keeps the count, so the next failure dead-letters again', async () => {
    const { store } = h.t;
    await store.jobs.enqueue({ queue: 'lane', kind: 'test', key: 'k', payload: {}, maxAttempts: 2 });
    for (let i = 0; i < 2; i++) {
      h.t.clock.advance(600_000);
      const job = (await store.jobs.claim('lane', 'w:1', 1000))!;
      await store.jobs.fail(job.id, job.receipt, 'boom');
    }
    const res = await h.post('/operator/api/queue/requeue-dead', { jobKey: 'k' });
    expect(res.body.job).toMatchObject({ status: 'waiting', attempts: 2, deadReason: null });
    const job = (await store.jobs.claim('lane', 'w:1', 1000))!;
    expect(await store.jobs.fail(job.id, job.receipt, 'boom')).toEqual({
      status: 'dead',
      reason: 'max_attempts',
    });
  });

  test('release-lease: unknown key or receipt is 404', async () => {
    expect(await h.post('/operator/api/queue/release-lease', { jobKey: 'none' })).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found' },
    });
    expect(await h.post('/operator/api/queue/release-lease', { receiptId: 'rcpt_none' })).toMatchObject({
      status: 404,
    });
  });
});
