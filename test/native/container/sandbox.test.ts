/**
 * Validation in the native runtime (review-engine 4.2 "`sandbox.internal` handles validation", 7.4): the
 * review container's executors pack the checkout and send the plan to `sandbox.internal/run`; the sandbox
 * service (src/native/sandbox/) unpacks it and runs it with its own executor (bubblewrap here, for real).
 * The worker's side of `sandbox.internal` (lease, routing) is tested in test/native/sandbox.test.ts.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { InternalCallError, type InternalClient } from '../../../src/native/container/internal.js';
import { containerExecutors } from '../../../src/native/container/sandbox.js';
import { sandboxRunRequestSchema } from '../../../src/native/protocol.js';
import { SandboxService } from '../../../src/native/sandbox/service.js';
import { findBinary } from '../../../src/validation/bubblewrap.js';
import { configuredExecutors } from '../../../src/validation/executors.js';
import { planValidation } from '../../../src/validation/plan.js';
import { NO_SANDBOX_BINDING } from '../../../src/validation/review.js';

const FIXTURES = path.resolve('fixtures/validation');
const haveBwrap = findBinary('bwrap') !== undefined;
const maybe = haveBwrap || process.env.CI ? describe : describe.skip;
const log = pino({ level: 'silent' });
const lease = { runId: 'run-1', leaseToken: 'token-1' };

let work: string;
let service: SandboxService;
let base: string;
beforeEach(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-sandbox-test-'));
  service = new SandboxService({
    executors: configuredExecutors({
      install: 'off',
      registry: 'https://registry.npmjs.org/',
      allowLocal: false,
      selfHostValidation: null,
      isolatedCommand: [],
    }),
    log,
    scratchRoot: work,
  });
  base = `http://127.0.0.1:${await service.listen(0, '127.0.0.1')}`;
});
afterEach(async () => {
  await service.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

/** A checkout of a fixture repository, as the review's validation downloads it. */
function checkout(name: string): string {
  const dir = path.join(work, `checkout-${name}`);
  fs.cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** `sandbox.internal` as the outer worker answers it, reduced to its forwarding: the body minus the lease. */
function forwardingInternal(calls: unknown[]): InternalClient {
  return (async (host: string, p: string, body: any, schema: any) => {
    calls.push({ host, path: p, body });
    const { runId: _r, leaseToken: _t, leaseName: _n, ...job } = body;
    const res = await fetch(`${base}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(job),
    });
    if (!res.ok) throw new InternalCallError('sandbox.internal', p, res.status, null, await res.text());
    return schema.parse(await res.json());
  }) as InternalClient;
}

maybe('the container validates through sandbox.internal, the sandbox runs the plan under bubblewrap', () => {
  it('a passing repository: the checkout travels packed, the plan runs in the sandbox, PASSED comes back', async () => {
    const calls: any[] = [];
    const executors = containerExecutors(true, forwardingInternal(calls), () => lease);
    const dir = checkout('passing');
    const plan = planValidation({ dir }, ['index.js']);
    const outcome = await executors('bubblewrap', { trusted: false }).run(plan, dir, { timeoutMs: 60_000 });
    expect(outcome).toMatchObject({ executor: 'bubblewrap', status: 'passed' });
    expect(outcome.evidence).toMatch(/^PASSED bubblewrap: /);
    expect(outcome.commands.map((c) => c.exitCode)).toEqual(outcome.commands.map(() => 0));
    // One call, under the run's lease, shaped as the protocol says.
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ host: 'sandbox.internal', path: '/run' });
    const request = sandboxRunRequestSchema.parse(calls[0].body);
    expect(request).toMatchObject({ ...lease, executor: 'bubblewrap', trusted: false, plan });
    // The sandbox's scratch folder is gone after the job.
    expect(fs.readdirSync(work).filter((f) => f.startsWith('verdict-sandbox-'))).toEqual([]);
  }, 90_000);

  it('a failing repository: FAILED with the failing command and its output', async () => {
    const executors = containerExecutors(true, forwardingInternal([]), () => lease);
    const dir = checkout('failing-after');
    const plan = planValidation({ dir }, ['index.js']);
    const outcome = await executors('bubblewrap', { trusted: false }).run(plan, dir, { timeoutMs: 60_000 });
    expect(outcome.status).toBe('failed');
    expect(outcome.evidence).toMatch(/^FAILED bubblewrap: /);
    expect(outcome.commands.some((c) => c.exitCode !== 0 && c.outputTail.length > 0)).toBe(true);
  }, 90_000);
});

describe('the sandbox service', () => {
  const post = (body: unknown) =>
    fetch(`${base}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('answers health, refuses a job that is not one (400) and any other path (404)', async () => {
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true, busy: false });
    const bad = await post({ executor: 'e2b', trusted: false, plan: {}, timeoutMs: 1, archive: '' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.code).toBe('invalid_request');
    expect((await post('{')).status).toBe(400);
    expect((await fetch(`${base}/review`, { method: 'POST' })).status).toBe(404);
  });

  it('refuses a job larger than it takes with 413 payload_too_large, and takes the next job', async () => {
    // The declared length is past the limit; nothing of the body is sent: the answer comes first.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${base}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(200 * 1024 * 1024) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true, busy: false });
    expect((await post('{')).status).toBe(400);
  });

  it('runs one job at a time: a second one meanwhile answers 503 sandbox_busy', async () => {
    const slow = new SandboxService({
      executors: () => ({
        name: 'bubblewrap',
        run: () =>
          new Promise((r) =>
            setTimeout(
              () =>
                r({
                  executor: 'bubblewrap',
                  status: 'passed',
                  evidence: 'PASSED',
                  commands: [],
                  artifacts: [],
                }),
              500,
            ),
          ),
      }),
      log,
      scratchRoot: work,
    });
    const port = await slow.listen(0, '127.0.0.1');
    try {
      const tar = await import('tar');
      const chunks: Buffer[] = [];
      for await (const c of tar.c({ gzip: true, cwd: FIXTURES, portable: true }, ['passing']))
        chunks.push(c as Buffer);
      const job = {
        executor: 'bubblewrap',
        trusted: false,
        plan: {
          kind: 'run',
          source: 'standard',
          commands: [{ check: 'test', ecosystem: 'custom', argv: ['true'] }],
        },
        timeoutMs: 10_000,
        archive: Buffer.concat(chunks).toString('base64'),
      };
      const send = () => fetch(`http://127.0.0.1:${port}/run`, { method: 'POST', body: JSON.stringify(job) });
      const first = send();
      await new Promise((r) => setTimeout(r, 100));
      const second = await send();
      expect(second.status).toBe(503);
      expect(((await second.json()) as any).error.code).toBe('sandbox_busy');
      expect((await first).status).toBe(200);
      expect((await send()).status).toBe(200);
    } finally {
      await slow.stop();
    }
  });
});

describe("the container's executors", () => {
  it('without VERDICT_CF_SANDBOX_ENABLED=1 none can be built (the review reports no sandbox binding)', () => {
    const executors = containerExecutors(false, forwardingInternal([]), () => lease);
    expect(() => executors('bubblewrap', { trusted: false })).toThrow(/VERDICT_CF_SANDBOX_ENABLED/);
  });

  it('a deployment without a sandbox (503 no_sandbox) gives "no sandbox binding available"; other failures an error', async () => {
    const dir = checkout('passing');
    const plan = planValidation({ dir }, ['index.js']);
    const refusing = (status: number, code: string | null): InternalClient =>
      (async () => {
        throw new InternalCallError('sandbox.internal', '/run', status, code, `answered ${status}`);
      }) as InternalClient;
    const none = await containerExecutors(
      true,
      refusing(503, 'no_sandbox'),
      () => lease,
    )('bubblewrap', {
      trusted: false,
    }).run(plan, dir, { timeoutMs: 10_000 });
    expect(none).toMatchObject({ status: 'not_run', evidence: `${NO_SANDBOX_BINDING} for bubblewrap` });
    const lost = await containerExecutors(
      true,
      refusing(409, 'lease_lost'),
      () => lease,
    )('bubblewrap', {
      trusted: false,
    }).run(plan, dir, { timeoutMs: 10_000 });
    expect(lost).toMatchObject({ status: 'error', evidence: 'ERROR bubblewrap: answered 409' });
  });

  it('e2b is never provisioned in the container: skipped, key unavailable', async () => {
    const executors = containerExecutors(true, forwardingInternal([]), () => lease);
    const outcome = await executors('e2b', { trusted: false }).run(
      { kind: 'none', reason: 'x', commands: [] },
      work,
      { timeoutMs: 1000 },
    );
    expect(outcome).toMatchObject({ status: 'skipped', evidence: 'SKIPPED e2b: API key unavailable' });
  });
});
