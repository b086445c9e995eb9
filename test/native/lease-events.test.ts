import { jest } from '@jest/globals';
import { example } from '../helpers/webhooks.js';
import { startIngress, until, type Harness } from './harness.js';

/** The worker's JSON log lines (Miniflare relays workerd's stdout through console.log). */
function logEvents(spy: jest.SpiedFunction<typeof console.log>): any[] {
  return spy.mock.calls
    .map((args) => String(args[0]))
    .flatMap((line) => line.split('\n'))
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line));
}

const opened = (sha: string, number: number) => {
  const p = example('pull_request', 'opened');
  p.installation = { id: 77 };
  p.number = number;
  p.pull_request.number = number;
  p.pull_request.head.sha = sha;
  return p;
};

async function dispatchOutcome(h: Harness, id: string, done: (row: any) => boolean): Promise<any> {
  const db = await h.d1();
  return until(() => db.prepare('SELECT * FROM native_deliveries WHERE id = ?').bind(id).first(), done, 400);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** review-engine 6.3: the lease events of a dispatch, logged by the consumer. */
describe('native consumer: lease events', () => {
  let spy: jest.SpiedFunction<typeof console.log>;
  beforeEach(() => {
    spy = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => spy.mockRestore());

  it('a lease lost during the review aborts the dispatch (lease_lost_aborted, container-dispatch-error) and its release fails', async () => {
    let h: Harness | null = null;
    const container = async (request: Request) => {
      const body: any = await request.json();
      // Another owner's doing: the run's lease is released under the dispatch's own token.
      const ns: any = await h!.mf.getDurableObjectNamespace('LEASES', 'verdict');
      const res = await ns.get(ns.idFromName(body.runId)).fetch('https://lease/release', {
        method: 'POST',
        body: JSON.stringify({ token: body.leaseToken, outcome: 'failed' }),
      });
      expect(await res.json()).toEqual({ status: 'released' });
      await sleep(3000); // the consumer's next renewal finds the lease lost and aborts before this ends
      return Response.json({ runId: body.runId, status: 'completed' });
    };
    h = await startIngress({
      consumer: true,
      container,
      bindings: { LEASE_MS: '300', MAX_ATTEMPTS: '1' },
    });
    try {
      const id = crypto.randomUUID();
      expect((await h.post('pull_request', opened('a'.repeat(40), 21), { id })).status).toBe(202);
      const row = await dispatchOutcome(h, id, (r) => r?.dispatch_outcome === 'dead_lettered');
      expect(row.dispatch_reason).toBe('max_attempts');
      const events = logEvents(spy);
      const runId = events.find((e) => e.event === 'lease_lost_aborted')?.runId;
      expect(runId).toEqual(expect.any(String));
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ event: 'container-dispatch-error', runId }),
          expect.objectContaining({ event: 'lease-release-failed', runId, reason: 'lost' }),
          expect.objectContaining({ event: 'dispatch', deliveryId: id, outcome: 'dispatch_failed', runId }),
        ]),
      );
    } finally {
      await h.close();
    }
  }, 60_000);

  it('a renewal that fails is logged (lease_renew_failed) and the review goes on to completion', async () => {
    // A lease object whose renewals fail and whose release finds the lease gone.
    const script = `
      export class FlakyLease {
        async fetch(request) {
          const verb = new URL(request.url).pathname.slice(1);
          if (verb === 'renew') return new Response('unavailable', { status: 500 });
          return Response.json({ status: verb === 'acquire' ? 'acquired' : 'lost' });
        }
      }
      export default { fetch: () => new Response('leases') };`;
    const container = async (request: Request) => {
      const body: any = await request.json();
      await sleep(500); // several renewal periods of LEASE_MS 300
      return Response.json({ runId: body.runId, status: 'completed' });
    };
    const h = await startIngress({
      consumer: true,
      container,
      leases: { className: 'FlakyLease', script },
      bindings: { LEASE_MS: '300' },
    });
    try {
      const id = crypto.randomUUID();
      expect((await h.post('pull_request', opened('b'.repeat(40), 22), { id })).status).toBe(202);
      const row = await dispatchOutcome(h, id, (r) => r?.dispatch_outcome != null);
      expect(row.dispatch_outcome).toBe('dispatched');
      const events = logEvents(spy);
      const failed = events.filter((e) => e.event === 'lease_renew_failed');
      expect(failed.length).toBeGreaterThanOrEqual(1);
      expect(failed[0].err).toContain('lease renew: 500');
      expect(events.some((e) => e.event === 'lease_lost_aborted')).toBe(false);
      expect(events).toEqual(
        expect.arrayContaining([expect.objectContaining({ event: 'lease-release-failed', reason: 'lost' })]),
      );
    } finally {
      await h.close();
    }
  }, 60_000);

  it("a renewed lease keeps the run's row fresh (native_runs.updated_at), so a long review counts as running", async () => {
    let h: Harness | null = null;
    const seen: number[] = [];
    const container = async (request: Request) => {
      const body: any = await request.json();
      const db = await h!.d1();
      const updatedAt = async () => {
        const row: any = await db
          .prepare('SELECT updated_at FROM native_runs WHERE id = ?')
          .bind(body.runId)
          .first();
        return Date.parse(row.updated_at);
      };
      seen.push(await updatedAt());
      await sleep(1200); // longer than LEASE_MS 300: renewed about every 100 ms
      seen.push(await updatedAt());
      return Response.json({ runId: body.runId, status: 'completed' });
    };
    h = await startIngress({ consumer: true, container, bindings: { LEASE_MS: '300' } });
    try {
      const id = crypto.randomUUID();
      expect((await h.post('pull_request', opened('c'.repeat(40), 23), { id })).status).toBe(202);
      await dispatchOutcome(h, id, (r) => r?.dispatch_outcome != null);
      const [before, after] = seen;
      // Refreshed later than one lease's time after the review began: without it the run would have
      // counted as not running (reactions.ts reviewRunning) for the rest of the review.
      expect(after! - before!).toBeGreaterThanOrEqual(300);
    } finally {
      await h.close();
    }
  }, 60_000);

  it('on Cloudflare each run is posted to its own ReviewContainer instance (REVIEW_CONTAINERS, by run id)', async () => {
    // A stand-in for the Container class: it answers /review with the name of its instance.
    const script = `
      export class FakeReviewContainer {
        constructor(state) { this.state = state; }
        async fetch(request) {
          const body = await request.json();
          const url = new URL(request.url);
          console.log(JSON.stringify({ event: 'fake-container', path: url.pathname, runId: body.runId, instance: this.state.id.toString() }));
          return Response.json({ runId: body.runId, status: 'completed' });
        }
      }
      export default { fetch: () => new Response('containers') };`;
    const h = await startIngress({
      consumer: true,
      containers: { className: 'FakeReviewContainer', script },
    });
    try {
      const ids = [crypto.randomUUID(), crypto.randomUUID()];
      expect((await h.post('pull_request', opened('c'.repeat(40), 23), { id: ids[0] })).status).toBe(202);
      expect((await h.post('pull_request', opened('d'.repeat(40), 24), { id: ids[1] })).status).toBe(202);
      for (const id of ids) {
        expect((await dispatchOutcome(h, id, (r) => r?.dispatch_outcome != null)).dispatch_outcome).toBe(
          'dispatched',
        );
      }
      const calls = logEvents(spy).filter((e) => e.event === 'fake-container');
      expect(calls).toHaveLength(2);
      expect(calls.map((c) => c.path)).toEqual(['/review', '/review']);
      const ns: any = await h.mf.getDurableObjectNamespace('REVIEW_CONTAINERS', 'verdict');
      for (const call of calls) expect(call.instance).toBe(ns.idFromName(call.runId).toString());
      expect(new Set(calls.map((c) => c.instance)).size).toBe(2);
    } finally {
      await h.close();
    }
  }, 60_000);
});
