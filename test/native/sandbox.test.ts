/**
 * The worker's side of `sandbox.internal` (review-engine 4.2, 7.4): the container's validation job is
 * checked against the run's lease and handed to the run's sandbox (here the `SANDBOX` service binding),
 * whose outcome is the answer; a deployment without a sandbox answers 503 `no_sandbox`. The container's
 * side and the sandbox service are tested in test/native/container/sandbox.test.ts.
 */
import { sandboxJobSchema } from '../../src/native/protocol.js';
import { DEV_TOKEN, internalPost, leaseFor, startIngress, type Harness } from './harness.js';

const REPO = 'acme/web';
const job = {
  executor: 'bubblewrap',
  trusted: false,
  plan: {
    kind: 'run',
    source: 'standard',
    commands: [{ check: 'test', ecosystem: 'javascript', argv: ['npm', 'test'] }],
  },
  timeoutMs: 60_000,
  archive: Buffer.from('not really a tarball').toString('base64'),
};
const passed = {
  executor: 'bubblewrap',
  status: 'passed',
  evidence: 'PASSED bubblewrap: npm test',
  commands: [],
  artifacts: [],
};
const read = async (res: Response): Promise<any> => res.json();

describe('sandbox.internal', () => {
  let h: Harness;
  const received: unknown[] = [];
  let answer: () => Response = () => new Response(JSON.stringify(passed), { status: 200 });

  beforeAll(async () => {
    h = await startIngress({
      bindings: { VERDICT_INTERNAL_DEV_TOKEN: DEV_TOKEN },
      sandbox: async (request) => {
        received.push({ url: request.url, body: await request.json() });
        return answer();
      },
    });
    await leaseFor(h, 'run-sandbox', 'sandbox-token', REPO);
  }, 60_000);
  afterAll(() => h?.close());

  it("hands the lease holder's job to the run's sandbox, without the lease, and answers its outcome", async () => {
    const res = await internalPost(h, 'sandbox.internal', '/run', {
      runId: 'run-sandbox',
      leaseToken: 'sandbox-token',
      ...job,
    });
    expect(res.status).toBe(200);
    expect(await read(res)).toEqual(passed);
    expect(received).toHaveLength(1);
    const forwarded = received[0] as { url: string; body: unknown };
    expect(new URL(forwarded.url).pathname).toBe('/run');
    expect(forwarded.body).toEqual(sandboxJobSchema.parse(job));
    expect(forwarded.body).not.toHaveProperty('leaseToken');
  });

  it('refuses a token that does not hold the lease (409), an unknown run (404) and a job that is not one (400)', async () => {
    const before = received.length;
    const lost = await internalPost(h, 'sandbox.internal', '/run', {
      runId: 'run-sandbox',
      leaseToken: 'x',
      ...job,
    });
    expect(lost.status).toBe(409);
    expect((await read(lost)).error.code).toBe('lease_lost');
    const unknown = await internalPost(h, 'sandbox.internal', '/run', {
      runId: 'nope',
      leaseToken: 'x',
      ...job,
    });
    expect(unknown.status).toBe(404);
    const bad = await internalPost(h, 'sandbox.internal', '/run', {
      runId: 'run-sandbox',
      leaseToken: 'sandbox-token',
      ...job,
      executor: 'e2b',
    });
    expect(bad.status).toBe(400);
    expect((await read(bad)).error.code).toBe('invalid_request');
    expect(received.length).toBe(before);
  });

  it('a sandbox that fails or answers no outcome is 502 sandbox_failed; a busy one 503', async () => {
    const call = () =>
      internalPost(h, 'sandbox.internal', '/run', {
        runId: 'run-sandbox',
        leaseToken: 'sandbox-token',
        ...job,
      });
    answer = () => new Response('{"nothing":true}', { status: 200 });
    const garbage = await call();
    expect(garbage.status).toBe(502);
    expect((await read(garbage)).error.code).toBe('sandbox_failed');
    answer = () => new Response('{"error":{"code":"sandbox_busy"}}', { status: 503 });
    const busy = await call();
    expect(busy.status).toBe(503);
    expect((await read(busy)).error.code).toBe('sandbox_failed');
    answer = () => new Response(JSON.stringify(passed), { status: 200 });
  });
});

describe('sandbox.internal without a sandbox', () => {
  it('answers 503 no_sandbox (the review reports "no sandbox binding available")', async () => {
    const h = await startIngress({ bindings: { VERDICT_INTERNAL_DEV_TOKEN: DEV_TOKEN } });
    try {
      await leaseFor(h, 'run-none', 'none-token', REPO);
      const res = await internalPost(h, 'sandbox.internal', '/run', {
        runId: 'run-none',
        leaseToken: 'none-token',
        ...job,
      });
      expect(res.status).toBe(503);
      expect((await read(res)).error.code).toBe('no_sandbox');
    } finally {
      await h.close();
    }
  }, 60_000);
});
