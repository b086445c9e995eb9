import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Router } from '../../src/http/router.js';
import { registerOperatorRoutes } from '../../src/operator/routes.js';
import { ReadCache, StampedCache } from '../../src/services/read-cache.js';
import { createHttpServer } from '../../src/server.js';
import { QueueWorker } from '../../src/worker/runner.js';
import { openTestStore, type TestDialect, type TestStore } from '../helpers/store.js';
import { untilTurns } from '../helpers/turns.js';

const silent = pino({ level: 'silent' });
export const ADMIN = 'admin-token-for-tests';
export const TOKENS = {
  operatorAdmin: ADMIN,
  operatorRead: 'read-token',
  operatorCommand: 'command-token',
  operatorBridge: 'bridge-token',
  queueAdmin: 'queue-admin-token',
  queueEnqueue: 'queue-enqueue-token',
  queueWorker: 'queue-worker-token',
};

export type RepairHarness = {
  t: TestStore;
  post(path: string, body: unknown, token?: string | null, headers?: Record<string, string>): Promise<any>;
  close(): Promise<void>;
};

export async function repairHarness(dialect: TestDialect): Promise<RepairHarness> {
  const t = await openTestStore(dialect);
  const router = new Router();
  registerOperatorRoutes(router, {
    store: t.store,
    tokens: TOKENS,
    log: silent,
    now: () => t.clock.now(),
    newId: (prefix) => `${prefix}_test`,
    publicUrl: null,
    cache: new ReadCache(0),
    prCache: new StampedCache(false),
  });
  const server: Server = createHttpServer(router, [], silent);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    t,
    post: async (path, body, token = ADMIN, headers = {}) => {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.cleanup();
    },
  };
}

/** A failing job walks its retries to the dead letter; `requeue-dead` brings it back (both dialects). */
export function retriesToDeadSuite(dialect: TestDialect): void {
  let h: RepairHarness;
  beforeEach(async () => {
    h = await repairHarness(dialect);
  });
  afterEach(() => h.close());

  test('a failing job walks its retries to the dead letter and requeue-dead brings it back', async () => {
    const { store, clock } = h.t;
    await store.jobs.enqueue({ queue: 'lane', kind: 'test', key: 'acme/api#7:latest-waiting', payload: {} });
    let broken = true;
    let calls = 0;
    const worker = new QueueWorker({
      queue: store.jobs,
      queueName: 'lane',
      owner: 'w:1',
      leaseMs: 60_000,
      concurrency: 1,
      log: silent,
      pollMs: 5,
      timers: clock,
      handler: async () => {
        calls++;
        if (broken) throw new Error(`upstream 502 (call ${calls})`);
      },
    });
    const job = async () => (await store.jobs.findByKey('acme/api#7:latest-waiting'))[0]!;
    // The worker has recorded attempt `n` and sleeps until its next poll (the one timer left).
    const asleepAfter = (n: number) =>
      untilTurns(async () => {
        const { status, attempts } = await job();
        return status !== 'running' && attempts === n && clock.pendingTimers === 1;
      }, `attempt ${n} recorded`);
    worker.start();
    try {
      // Each failure schedules a back-off (10 minutes at most); the clock moves past it and the worker's
      // next poll claims the job again, until its eighth failure dead-letters it.
      for (let attempt = 1; attempt < 8; attempt++) {
        await asleepAfter(attempt);
        expect(await job()).toMatchObject({ status: 'waiting', attempts: attempt });
        clock.advance(600_000);
      }
      await asleepAfter(8);
      const [dead] = await store.jobs.findByKey('acme/api#7:latest-waiting');
      expect(dead).toMatchObject({ status: 'dead', deadReason: 'max_attempts', attempts: 8 });
      expect(dead!.lastError).toBe('upstream 502 (call 8)');
      expect(calls).toBe(8);
      expect((await store.jobs.list({ status: 'dead' })).map((j) => j.id)).toEqual([dead!.id]);

      broken = false;
      const res = await h.post(
        '/operator/api/queue/requeue-dead',
        { jobKey: 'acme/api#7:latest-waiting', resetAttempts: true, reason: 'upstream fixed' },
        ADMIN,
        { 'x-operator-actor': 'alice' },
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        ok: true,
        audited: true,
        job: { id: dead!.id, status: 'waiting', attempts: 0 },
      });
      worker.kick();
      await untilTurns(
        async () => (await store.jobs.get(dead!.id))!.status === 'done',
        'the requeued job done',
      );
      expect(await store.jobs.get(dead!.id)).toMatchObject({ status: 'done', attempts: 1 });
      expect(calls).toBe(9);
      const [audit] = await store.audit.list({ action: 'queue.requeue_dead' });
      expect(audit).toMatchObject({
        actor: 'alice',
        target: 'acme/api#7:latest-waiting',
        reason: 'upstream fixed',
        detail: { resetAttempts: true, jobId: dead!.id },
      });
      // The audit event comes after the repair.
      expect(audit!.createdAt).toBeGreaterThanOrEqual((await store.jobs.get(dead!.id))!.createdAt);
    } finally {
      await worker.stop(1000);
    }
  }, 60_000);

  test('an idle worker dead-letters a job whose lease expired on its last attempt (its worker kept dying)', async () => {
    const { store, clock } = h.t;
    await store.jobs.enqueue({ queue: 'lane', kind: 'test', key: 'doomed', payload: {}, maxAttempts: 1 });
    const lost = (await store.jobs.claim('lane', 'crashed:1', 1000))!;
    clock.advance(1001);
    let calls = 0;
    const worker = new QueueWorker({
      queue: store.jobs,
      queueName: 'lane',
      owner: 'w:2',
      leaseMs: 1000,
      concurrency: 1,
      log: silent,
      pollMs: 5,
      reapEveryMs: 0,
      timers: clock,
      handler: async () => {
        calls++;
      },
    });
    worker.start();
    try {
      // Its first poll finds nothing to claim (no attempt left), so it reaps.
      await untilTurns(async () => (await store.jobs.get(lost.id))!.status === 'dead', 'the reap');
    } finally {
      await worker.stop(1000);
    }
    expect(await store.jobs.get(lost.id)).toMatchObject({ status: 'dead', deadReason: 'max_attempts' });
    expect(calls).toBe(0);
  });

  test('release-lease frees a stuck lease (force for a live one) and fences the old holder', async () => {
    const { store, clock } = h.t;
    await store.jobs.enqueue({ queue: 'lane', kind: 'test', key: 'k1', payload: {} });
    const held = (await store.jobs.claim('lane', 'stuck:1', 60_000))!;

    const refused = await h.post('/operator/api/queue/release-lease', { jobKey: 'k1', reason: 'stuck' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ ok: false, error: 'lease_active', jobId: held.id });
    expect((await store.jobs.get(held.id))!.status).toBe('running');
    expect(await store.audit.list()).toEqual([]);

    const forced = await h.post('/operator/api/queue/release-lease', {
      receiptId: held.receipt,
      force: true,
      reason: 'worker host lost',
      actorId: 'bob-from-body',
    });
    expect(forced.status).toBe(200);
    expect(forced.body.job).toMatchObject({ id: held.id, status: 'waiting', receipt: null });
    expect(await store.jobs.ack(held.id, held.receipt)).toBe(false);
    const [audit] = await store.audit.list();
    // The body cannot supply identity: the actor is the header's (default service-admin).
    expect(audit).toMatchObject({
      actor: 'service-admin',
      action: 'queue.release_lease',
      detail: { force: true, requestedActorId: 'bob-from-body' },
    });

    // An expired lease needs no force.
    const again = (await store.jobs.claim('lane', 'stuck:2', 1000))!;
    clock.advance(1001);
    const expired = await h.post('/operator/api/queue/release-lease', { jobKey: 'k1' });
    expect(expired.status).toBe(200);
    expect(await store.jobs.renew(again.id, again.receipt, 1000)).toBeNull();
  });
}
