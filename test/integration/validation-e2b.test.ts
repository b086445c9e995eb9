/**
 * The e2b executor against the real SDK (`e2b`), whose HTTP requests nock answers: the sandbox create of
 * the e2b API, the file upload and the Connect RPC process starts of the sandbox's envd, and the kill.
 * The request shapes come from the SDK's source (its dist bundle and the process.proto descriptor it
 * embeds); docs/validation.md lists them.
 *
 * On Node the SDK sends its requests through the `undici` package's own fetch (HTTP/2, a private
 * dispatcher), which nock cannot see. The SDK falls back to the global fetch when `undici` cannot be
 * loaded, so this file withholds the SDK's `undici` (a module mock that throws): the requests are the same
 * requests, sent through the global fetch that nock intercepts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { PassThrough } from 'node:stream';
import { jest } from '@jest/globals';
import nock from 'nock';
import type { RunOptions, ValidationPlan } from '../../src/validation/types.js';
import type { E2bOptions } from '../../src/validation/e2b.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

const undiciOfTheSdk = createRequire(createRequire(import.meta.url).resolve('e2b')).resolve('undici');
jest.unstable_mockModule(undiciOfTheSdk, () => {
  throw new Error('undici withheld in this test: the SDK uses the global fetch, which nock intercepts');
});

const { e2bExecutorFactory, loadE2bSdk, e2bCostPerSecondUsd, E2B_WORKDIR } =
  await import('../../src/validation/e2b.js');
const { selectValidation, OUTCOMES } = await import('../../src/validation/decide.js');
const { createExecutor } = await import('../../src/validation/executors.js');
const { reviewPolicySchema } = await import('../../src/policy/policy.schema.js');

const API = 'https://api.e2b.app';
const ENVD = 'https://sandbox.e2b.app';
const KEY = `e2b_${'0123456789abcdef'.repeat(2)}`;
const SANDBOX = 'sbx-verdict-1';
const ACCESS = 'envd-access-token-1';

// --- Connect protocol framing (the envelope of streaming RPCs: flags byte, big-endian length, message). ---

function envelope(flags: number, message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** A process.Process/Start response stream: start, output, end, then the end-of-stream envelope. */
function processEvents(pid: number, out: { stdout?: string; stderr?: string }[], exitCode: number): Buffer {
  return Buffer.concat([
    envelope(0, { event: { start: { pid } } }),
    ...out.map((o) =>
      envelope(0, {
        event: {
          data:
            o.stdout !== undefined
              ? { stdout: Buffer.from(o.stdout).toString('base64') }
              : { stderr: Buffer.from(o.stderr ?? '').toString('base64') },
        },
      }),
    ),
    envelope(0, {
      event: { end: { exitCode, exited: true, status: `exit status ${exitCode}` } },
    }),
    envelope(2, {}),
  ]);
}

/** The request message of an enveloped request body (nock hands a binary body over as hex). */
function unenvelope(body: string): { flags: number; message: Record<string, any> } {
  const raw = body.charCodeAt(0) === 0 ? Buffer.from(body, 'latin1') : Buffer.from(body, 'hex');
  const flags = raw.readUInt8(0);
  const length = raw.readUInt32BE(1);
  expect(raw.length).toBe(5 + length);
  return { flags, message: JSON.parse(raw.subarray(5, 5 + length).toString('utf8')) };
}

type Started = { argv: string[]; cwd: string; envs: Record<string, string>; headers: Record<string, any> };

/** Answers every process start with the next of `replies`, recording what was asked. */
function envdProcesses(
  replies: Array<Buffer | (() => NodeJS.ReadableStream)>,
  started: Started[],
): nock.Scope {
  const scope = nock(ENVD);
  for (const reply of replies) {
    scope
      .post('/process.Process/Start')
      .matchHeader('content-type', 'application/connect+json')
      .matchHeader('e2b-sandbox-id', SANDBOX)
      .matchHeader('x-access-token', ACCESS)
      .reply(function (_uri, body) {
        const { flags, message } = unenvelope(body as string);
        expect(flags).toBe(0);
        expect(message.process.cmd).toBe('/bin/bash');
        expect(message.process.args.slice(0, 2)).toEqual(['-l', '-c']);
        started.push({
          argv: message.process.args,
          cwd: message.process.cwd,
          envs: message.process.envs ?? {},
          headers: this.req.headers,
        });
        return [
          200,
          Buffer.isBuffer(reply) ? reply : reply(),
          { 'content-type': 'application/connect+json' },
        ];
      });
  }
  return scope;
}

type Created = { body: Record<string, any>; headers: Record<string, any> };

function createSandbox(created: Created[]): nock.Scope {
  return nock(API)
    .post('/v2/sandboxes')
    .matchHeader('x-api-key', KEY)
    .reply(201, function (_uri, body) {
      created.push({ body: body as Record<string, any>, headers: this.req.headers });
      return {
        sandboxID: SANDBOX,
        templateID: 'rki5dems9wqfm4r03t7g',
        alias: 'base',
        clientID: '6532622b',
        envdVersion: '0.5.4',
        envdAccessToken: ACCESS,
        domain: null,
      };
    });
}

function uploads(bodies: string[], times = 1): nock.Scope {
  return nock(ENVD)
    .post('/files')
    .times(times)
    .matchHeader('e2b-sandbox-id', SANDBOX)
    .matchHeader('x-access-token', ACCESS)
    .reply(200, (_uri, body) => {
      bodies.push(String(body));
      const names = [...String(body).matchAll(/filename="([^"]+)"/g)].map((m) => m[1]!);
      return names.map((p) => ({ name: path.basename(p), type: 'file', path: p }));
    });
}

function killSandbox(): nock.Scope {
  return nock(API).delete(`/sandboxes/${SANDBOX}`).matchHeader('x-api-key', KEY).reply(204);
}

/** The requests of one run (create, upload, a process start for each reply, kill), recording into `seen`. */
function sandboxRun(
  replies: Parameters<typeof envdProcesses>[0],
  seen: { started?: Started[]; created?: Created[]; bodies?: string[] } = {},
): nock.Scope[] {
  return [
    createSandbox(seen.created ?? []),
    uploads(seen.bodies ?? []),
    envdProcesses(replies, seen.started ?? []),
    killSandbox(),
  ];
}

// --- Fixtures ------------------------------------------------------------------------------------------

let dir: string;
let t: TestStore;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-e2b-'));
  fs.mkdirSync(path.join(dir, 'src'));
  fs.mkdirSync(path.join(dir, '.git'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"demo","scripts":{"test":"node src/a.js"}}');
  fs.writeFileSync(path.join(dir, 'src', 'a.js'), 'console.log("it works")\n');
  fs.writeFileSync(path.join(dir, '.git', 'config'), '[core]\n\tsecret = do-not-upload\n');
  t = await openTestStore('sqlite');
});

afterEach(async () => {
  await t.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

const plan = (...argvs: string[][]): ValidationPlan => ({
  kind: 'run',
  source: 'standard',
  packageManager: 'npm',
  commands: argvs.map((argv, i) => ({
    check: (['test', 'lint', 'build', 'typecheck'] as const)[i % 4]!,
    ecosystem: 'javascript',
    argv,
  })),
});

/** A clock that answers `start`, then `start + seconds * 1000` (the executor reads it at create and kill). */
function twoReadings(seconds: number, start = 1_000_000) {
  const values = [start, start + seconds * 1000];
  return () => values.shift() ?? start + seconds * 1000;
}

function executor(over: Partial<E2bOptions> = {}) {
  return e2bExecutorFactory({
    apiKey: KEY,
    costs: t.store.executorCosts,
    runId: 'run-42',
    now: twoReadings(12.5),
    ...over,
  })();
}

/** The executor of `over` runs `p` on `dir` (60 s unless `opts` says otherwise). */
function runE2b(over: Partial<E2bOptions>, p: ValidationPlan, opts: Partial<RunOptions> = {}) {
  return executor(over).run(p, dir, { timeoutMs: 60_000, ...opts });
}

describe('e2b executor', () => {
  test('a passing run: sandbox created, checkout uploaded without .git, commands run in the workspace, sandbox killed, cost recorded', async () => {
    fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho ok\n');
    fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
    const created: Created[] = [];
    const bodies: string[] = [];
    const started: Started[] = [];
    const scopes = sandboxRun(
      [
        processEvents(10, [], 0),
        processEvents(11, [{ stdout: 'tests: 3 passed\n' }], 0),
        processEvents(12, [{ stderr: 'lint clean\n' }], 0),
      ],
      { started, created, bodies },
    );
    const outcome = await runE2b(
      {},
      plan(['npm', 'run', 'test'], ['npm', 'run', 'lint', '--', "it's $HOME"]),
    );
    for (const s of scopes) s.done();

    expect(outcome.status).toBe('passed');
    expect(outcome.evidence).toBe(`PASSED e2b: npm run test, npm run lint -- it's $HOME`);
    // The create request: the API key header, the default template, a sandbox timeout past the run's limit.
    expect(created[0]!.body).toEqual({
      templateID: 'base',
      timeout: 120,
      metadata: { purpose: 'verdict-validation', runId: 'run-42' },
    });
    // The upload: one multipart request with every regular file under the workspace, nothing of .git.
    expect(bodies).toHaveLength(1);
    const names = [...bodies[0]!.matchAll(/filename="([^"]+)"/g)].map((m) => m[1]);
    expect(names).toEqual([
      `${E2B_WORKDIR}/package.json`,
      `${E2B_WORKDIR}/run.sh`,
      `${E2B_WORKDIR}/src/a.js`,
    ]);
    expect(bodies[0]).toContain('console.log("it works")');
    expect(bodies[0]).not.toContain('do-not-upload');
    // The executable bit is given back, then each command runs in the workspace, quoted for the shell.
    expect(started.map((s) => s.argv[2])).toEqual([
      'chmod +x -- run.sh',
      'npm run test',
      `npm run lint -- 'it'\\''s $HOME'`,
    ]);
    expect(started.every((s) => s.cwd === E2B_WORKDIR)).toBe(true);
    expect(started[1]!.envs).toMatchObject({ CI: 'true' });
    expect(started[1]!.envs).not.toHaveProperty('E2B_API_KEY');
    expect(outcome.commands.map((c) => [c.command, c.exitCode, c.outputTail])).toEqual([
      ['npm run test', 0, 'tests: 3 passed\n'],
      [`npm run lint -- it's $HOME`, 0, 'lint clean\n'],
    ]);
    expect(outcome.artifacts[0]).toEqual({
      id: 'e2b-1-test',
      kind: 'command_output',
      command: 'npm run test',
      content: 'tests: 3 passed\n',
    });
    // 12.5 s of sandbox time at the recorded rate, in the store.
    const rate = e2bCostPerSecondUsd();
    expect(rate).toBeCloseTo(2 * 0.000014 + 0.5 * 0.0000045, 12);
    const recorded = await t.store.executorCosts.list('e2b');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ executor: 'e2b', runId: 'run-42', seconds: 12.5 });
    expect(recorded[0]!.costUsd).toBeCloseTo(12.5 * rate, 12);
    expect(await t.store.executorCosts.totalUsd('e2b')).toBeCloseTo(12.5 * rate, 12);
    expect(outcome.note).toContain(`sandbox ${SANDBOX}: 12.5 s`);
  });

  test('a failing command (exit 1) is FAILED with its output tail, the next command still runs, and the sandbox is killed', async () => {
    const scopes = sandboxRun([
      processEvents(
        20,
        [{ stdout: 'running 2 tests\n' }, { stderr: 'AssertionError: expected 2 to be 3\n' }],
        1,
      ),
      processEvents(21, [{ stdout: 'lint ok\n' }], 0),
    ]);
    const outcome = await runE2b(
      { outputCapBytes: 40 },
      plan(['npm', 'run', 'test'], ['npm', 'run', 'lint']),
    );
    for (const s of scopes) s.done();
    expect(outcome.status).toBe('failed');
    expect(outcome.evidence).toBe('FAILED e2b: npm run test (exit 1)');
    expect(outcome.commands[0]).toMatchObject({
      exitCode: 1,
      timedOut: false,
      // The last 40 bytes of the merged output.
      outputTail: ('running 2 tests\n' + 'AssertionError: expected 2 to be 3\n').slice(-40),
      outputTruncated: true,
      outputBytes: 'running 2 tests\n'.length + 'AssertionError: expected 2 to be 3\n'.length,
    });
    expect(outcome.commands[0]!.outputTail).toContain('expected 2 to be 3');
    expect(outcome.commands[1]).toMatchObject({ exitCode: 0 });
    expect(await t.store.executorCosts.totalUsd('e2b')).toBeGreaterThan(0);
  });

  test('a command past the time limit is TIMED OUT, the rest is not run, and the sandbox is killed', async () => {
    const hanging = new PassThrough();
    const started: Started[] = [];
    const scopes = sandboxRun(
      [
        () => {
          hanging.write(envelope(0, { event: { start: { pid: 30 } } }));
          hanging.write(
            envelope(0, { event: { data: { stdout: Buffer.from('still going\n').toString('base64') } } }),
          );
          return hanging; // never ends
        },
      ],
      { started },
    );
    const began = Date.now();
    try {
      const outcome = await runE2b({}, plan(['npm', 'run', 'test'], ['npm', 'run', 'lint']), {
        timeoutMs: 1_500,
      });
      for (const s of scopes) s.done();
      expect(Date.now() - began).toBeLessThan(10_000);
      expect(outcome.status).toBe('timed_out');
      expect(outcome.evidence).toBe(
        'TIMED OUT e2b: npm run test (sandbox killed at the time limit); not run: npm run lint',
      );
      expect(outcome.commands).toHaveLength(1);
      expect(outcome.commands[0]).toMatchObject({ timedOut: true, exitCode: null });
      expect(started).toHaveLength(1);
      expect(await t.store.executorCosts.list('e2b')).toHaveLength(1);
    } finally {
      hanging.end();
    }
  });

  test('abort during a command: NOT RUN e2b: cancelled, and the sandbox is still killed', async () => {
    const hanging = new PassThrough();
    const controller = new AbortController();
    const scopes = sandboxRun([
      () => {
        hanging.write(envelope(0, { event: { start: { pid: 40 } } }));
        setTimeout(() => controller.abort(), 50);
        return hanging;
      },
    ]);
    try {
      const outcome = await runE2b({}, plan(['npm', 'run', 'test'], ['npm', 'run', 'build']), {
        signal: controller.signal,
      });
      for (const s of scopes) s.done();
      expect(outcome.status).toBe('not_run');
      expect(outcome.evidence).toBe('NOT RUN e2b: cancelled (sandbox killed); not run: npm run build');
      expect(outcome.commands[0]).toMatchObject({ timedOut: false, exitCode: null });
    } finally {
      hanging.end();
    }
  });

  test('an already aborted run creates no sandbox', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await runE2b({}, plan(['npm', 'run', 'test']), { signal: controller.signal });
    expect(outcome).toMatchObject({
      status: 'not_run',
      evidence: 'NOT RUN e2b: cancelled; not run: npm run test',
    });
    expect(await t.store.executorCosts.totalUsd('e2b')).toBe(0);
  });

  test('a failed upload is an executor error, and the sandbox is killed anyway', async () => {
    const scopes = [
      createSandbox([]),
      nock(ENVD).post('/files').reply(507, { code: 507, message: 'no space left on device' }),
      killSandbox(),
    ];
    const outcome = await runE2b({}, plan(['npm', 'run', 'test']));
    for (const s of scopes) s.done();
    expect(outcome.status).toBe('error');
    expect(outcome.evidence).toMatch(
      /^ERROR e2b: NotEnoughSpaceError: .*no space left on device.*; not run: npm run test$/,
    );
    expect(await t.store.executorCosts.list('e2b')).toHaveLength(1);
  });

  test('a kill the API refuses is noted, and the sandbox is charged until its lifetime ends', async () => {
    const scopes = [
      createSandbox([]),
      uploads([]),
      envdProcesses([processEvents(50, [], 0)], []),
      nock(API).delete(`/sandboxes/${SANDBOX}`).reply(500, { code: 500, message: 'internal error' }),
    ];
    const outcome = await runE2b(
      { costPerSecondUsd: 0.001, now: twoReadings(3) },
      plan(['npm', 'run', 'test']),
      {
        timeoutMs: 30_000,
      },
    );
    for (const s of scopes) s.done();
    expect(outcome.status).toBe('passed');
    expect(outcome.note).toMatch(/sandbox kill failed \(.*internal error.*\)/);
    // 30 s of run limit + 60 s of margin: 90 s charged, not the 3 s measured.
    const [cost] = await t.store.executorCosts.list('e2b');
    expect(cost).toMatchObject({ seconds: 90 });
    expect(cost!.costUsd).toBeCloseTo(0.09, 12);
  });

  test('a refused create (401) is an error without a sandbox to kill or a cost', async () => {
    const scope = nock(API).post('/v2/sandboxes').reply(401, { code: 401, message: 'Invalid API key' });
    const outcome = await runE2b({}, plan(['npm', 'run', 'test']));
    scope.done();
    expect(outcome.status).toBe('error');
    expect(outcome.evidence).toMatch(/^ERROR e2b: sandbox not created: .*Invalid API key/);
    expect(await t.store.executorCosts.totalUsd('e2b')).toBe(0);
  });

  test('a checkout over the upload cap is not run and creates no sandbox', async () => {
    fs.writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(4096));
    const outcome = await runE2b({ maxUploadBytes: 1024 }, plan(['npm', 'run', 'test']));
    expect(outcome).toMatchObject({
      status: 'not_run',
      evidence: 'NOT RUN e2b: checkout larger than the upload cap of 1024 bytes; no sandbox was created',
    });
  });

  test('no API key: SKIPPED e2b: API key unavailable, nothing requested', async () => {
    for (const apiKey of [undefined, null, '', '   ']) {
      const outcome = await runE2b({ apiKey }, plan(['npm', 'run', 'test']));
      expect(outcome).toMatchObject({ status: 'skipped', evidence: 'SKIPPED e2b: API key unavailable' });
    }
  });

  test('SDK unavailable: SKIPPED e2b: SDK unavailable, from the executor and from the gate', async () => {
    const missing = 'e2b-sdk-that-is-not-installed-verdict';
    expect(await loadE2bSdk(missing)).toBeNull();
    expect(await loadE2bSdk('e2b')).not.toBeNull();
    const outcome = await runE2b({ loadSdk: () => loadE2bSdk(missing) }, plan(['npm', 'run', 'test']));
    expect(outcome).toMatchObject({ status: 'skipped', evidence: 'SKIPPED e2b: SDK unavailable' });
    const gate = await selectValidation(
      { execution: reviewPolicySchema.parse({}).execution, provider: 'e2b', pr: { paths: ['a.ts'] } },
      {
        apiKey: KEY,
        budgetUsd: 50,
        sdkAvailable: async () => (await loadE2bSdk(missing)) !== null,
        readRecordedCostUsd: () => t.store.executorCosts.totalUsd('e2b'),
      },
    );
    expect(gate).toMatchObject({
      run: true,
      primary: null,
      outcomes: [{ role: 'primary', executor: 'e2b', outcome: OUTCOMES.e2bSdkUnavailable }],
    });
  });

  test('createExecutor takes the e2b executor from deps.e2b', async () => {
    const built = createExecutor('e2b', {
      e2b: e2bExecutorFactory({ apiKey: '', costs: t.store.executorCosts }),
    });
    // The real e2b executor (not the SDK-unavailable stand-in): without a key it says so.
    expect(await built.run(plan(['npm', 'test']), dir, { timeoutMs: 1000 })).toMatchObject({
      status: 'skipped',
      evidence: 'SKIPPED e2b: API key unavailable',
    });
  });
});

describe('the e2b budget over recorded costs', () => {
  const shadowInput = () => ({
    execution: reviewPolicySchema.parse({}).execution,
    provider: 'shadow',
    pr: { paths: ['src/a.ts'] },
  });
  const gateDeps = (read: () => Promise<number>) => ({
    apiKey: KEY,
    budgetUsd: 10,
    sdkAvailable: async () => (await loadE2bSdk()) !== null,
    readRecordedCostUsd: read,
  });

  test('the shadow runs below the budget and is withheld (executor_b_budget_exhausted) once recorded runs reach it', async () => {
    const reader = () => t.store.executorCosts.totalUsd('e2b');
    expect(await selectValidation(shadowInput(), gateDeps(reader))).toMatchObject({
      primary: 'bubblewrap',
      shadow: 'e2b',
      outcomes: [],
    });
    // Two runs of 2.5 s and 5 s at $1/s: $7.50 recorded, under the $10 budget.
    for (const seconds of [2.5, 5]) {
      const scopes = sandboxRun([processEvents(1, [], 0)]);
      await runE2b({ costPerSecondUsd: 1, now: twoReadings(seconds) }, plan(['npm', 'test']));
      for (const s of scopes) s.done();
    }
    expect(await t.store.executorCosts.totalUsd('e2b')).toBe(7.5);
    expect(await selectValidation(shadowInput(), gateDeps(reader))).toMatchObject({ shadow: 'e2b' });
    // A third run of 2.5 s reaches exactly $10.00: at the budget the shadow is withheld, the primary stays.
    const scopes = sandboxRun([processEvents(1, [], 1)]);
    await runE2b({ costPerSecondUsd: 1, now: twoReadings(2.5) }, plan(['npm', 'test']));
    for (const s of scopes) s.done();
    expect(await t.store.executorCosts.totalUsd('e2b')).toBe(10);
    expect(await selectValidation(shadowInput(), gateDeps(reader))).toEqual({
      run: true,
      primary: 'bubblewrap',
      shadow: null,
      outcomes: [
        {
          role: 'shadow',
          executor: 'e2b',
          outcome: 'executor_b_budget_exhausted',
          detail: 'recorded e2b cost $10.00, budget $10.00',
        },
      ],
      notes: [],
    });
  });

  test('a failed read of the recorded cost leaves the shadow enabled (executor_b_budget_read_failed)', async () => {
    await t.store.executorCosts.record({ executor: 'e2b', seconds: 100, costUsd: 99 });
    // A store that cannot answer: its connections are closed.
    await t.store.db.knex.destroy();
    const reader = () => t.store.executorCosts.totalUsd('e2b');
    await expect(reader()).rejects.toThrow();
    expect(await selectValidation(shadowInput(), gateDeps(reader))).toMatchObject({
      primary: 'bubblewrap',
      shadow: 'e2b',
      outcomes: [],
      notes: [OUTCOMES.e2bBudgetReadFailed],
    });
  });
});
