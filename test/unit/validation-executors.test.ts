import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BWRAP_REFUSED_UNTRUSTED,
  BWRAP_UNAVAILABLE,
  createBubblewrapExecutor,
} from '../../src/validation/bubblewrap.js';
import { createExecutor } from '../../src/validation/executors.js';
import { createLocalExecutor } from '../../src/validation/local.js';
import {
  createShadowExecutor,
  DEFAULT_SHADOW_TIMEOUT_MS,
  SHADOW_NOT_EVIDENCE,
} from '../../src/validation/shadow.js';
import { TailBuffer } from '../../src/validation/tail-buffer.js';
import {
  simpleOutcome,
  type Executor,
  type RunOptions,
  type ValidationPlan,
} from '../../src/validation/types.js';

const plan: ValidationPlan = {
  kind: 'run',
  source: 'standard',
  packageManager: 'npm',
  commands: [{ check: 'test', ecosystem: 'javascript', argv: ['npm', 'run', 'test'] }],
};
const repoConfigPlan: ValidationPlan = { ...plan, source: 'repo-config' };
const opts = { timeoutMs: 1000 };

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-val-unit-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('executor refusals and skips', () => {
  it('bubblewrap: SKIPPED when the binary is missing (checked before anything else)', async () => {
    const ex = createBubblewrapExecutor({ bwrapPath: path.join(dir, 'no-such-bwrap') });
    for (const p of [plan, repoConfigPlan]) {
      expect(await ex.run(p, dir, opts)).toMatchObject({
        executor: 'bubblewrap',
        status: 'skipped',
        evidence: 'SKIPPED bubblewrap: binary unavailable',
        commands: [],
      });
    }
    expect(BWRAP_UNAVAILABLE).toBe('SKIPPED bubblewrap: binary unavailable');
  });

  it('bubblewrap: a non-executable file is not a binary', async () => {
    const fake = path.join(dir, 'bwrap');
    fs.writeFileSync(fake, '');
    fs.chmodSync(fake, 0o644);
    const out = await createBubblewrapExecutor({ bwrapPath: fake }).run(plan, dir, opts);
    expect(out.evidence).toBe(BWRAP_UNAVAILABLE);
  });

  it('bubblewrap: REFUSED for repo-committed config when untrusted (before any copy or run)', async () => {
    // /bin/true stands in for bwrap: it is never started for a refusal.
    const ex = createBubblewrapExecutor({ bwrapPath: '/bin/true', scratchRoot: dir });
    expect(await ex.run(repoConfigPlan, dir, opts)).toMatchObject({
      status: 'refused',
      evidence: 'REFUSED bubblewrap: repo-committed config untrusted',
    });
    expect(BWRAP_REFUSED_UNTRUSTED).toBe('REFUSED bubblewrap: repo-committed config untrusted');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('every executor passes a plan without commands through as its outcome', async () => {
    const none: ValidationPlan = {
      kind: 'none',
      reason: 'no standard test/typecheck/lint/build scripts',
      commands: [],
    };
    expect(await createBubblewrapExecutor().run(none, dir, opts)).toMatchObject({
      status: 'not_run',
      evidence: 'no standard test/typecheck/lint/build scripts',
    });
  });

  it('local: local_execution_not_allowed unless explicitly allowed', async () => {
    for (const o of [{}, { allowLocal: false, selfHostValidation: '1', isolatedExecutorCommand: ['env'] }]) {
      expect(await createLocalExecutor(o).run(plan, dir, opts)).toMatchObject({
        executor: 'local',
        status: 'refused',
        evidence: 'local_execution_not_allowed',
      });
    }
  });

  it('local: self_host_not_configured without VERDICT_SELF_HOST_VALIDATION=1 and an isolated-executor command', async () => {
    for (const o of [
      { allowLocal: true },
      { allowLocal: true, selfHostValidation: '1' },
      { allowLocal: true, selfHostValidation: '1', isolatedExecutorCommand: [] },
      { allowLocal: true, selfHostValidation: 'true', isolatedExecutorCommand: ['env'] },
      { allowLocal: true, isolatedExecutorCommand: ['env'] },
    ]) {
      expect(await createLocalExecutor(o).run(plan, dir, opts)).toMatchObject({
        status: 'refused',
        evidence: 'self_host_not_configured',
      });
    }
  });

  it('local: when configured, runs each command through the isolated-executor command', async () => {
    const echoPlan: ValidationPlan = {
      kind: 'run',
      source: 'standard',
      commands: [{ check: 'test', ecosystem: 'javascript', argv: ['verdict-local-ok'] }],
    };
    const ex = createLocalExecutor({
      allowLocal: true,
      selfHostValidation: '1',
      isolatedExecutorCommand: ['echo'],
    });
    const out = await ex.run(echoPlan, dir, { timeoutMs: 10000 });
    expect(out).toMatchObject({ status: 'passed', evidence: 'PASSED local: verdict-local-ok' });
    expect(out.commands[0]!.outputTail).toBe('verdict-local-ok\n');
  });

  it('createExecutor builds the three executors by name; e2b without its executor is SKIPPED', async () => {
    for (const n of ['local', 'bubblewrap', 'e2b'] as const) expect(createExecutor(n).name).toBe(n);
    expect(await createExecutor('e2b').run(plan, dir, opts)).toMatchObject({
      status: 'skipped',
      evidence: 'SKIPPED e2b: SDK unavailable',
    });
  });
});

describe('shadow executor', () => {
  const fixed = (name: string, status: 'passed' | 'failed', seen?: RunOptions[]): Executor => ({
    name,
    run: async (_p, _d, o) => {
      seen?.push(o);
      return simpleOutcome(name, status, `${status.toUpperCase()} ${name}`);
    },
  });

  it('the combined result is the primary; a failing or throwing shadow is never primary failure evidence', async () => {
    const seen: RunOptions[] = [];
    const ex = createShadowExecutor({
      primary: fixed('bubblewrap', 'passed'),
      shadow: fixed('e2b', 'failed', seen),
      shadowTimeoutMs: 1234,
    });
    const out = await ex.run(plan, dir, { timeoutMs: 99 });
    expect(out).toMatchObject({
      executor: 'bubblewrap',
      status: 'passed',
      shadow: { executor: 'e2b', status: 'failed' },
    });
    expect(out.note).toContain(SHADOW_NOT_EVIDENCE);
    expect(seen[0]!.timeoutMs).toBe(1234);

    const throwing: Executor = {
      name: 'e2b',
      run: async () => {
        throw new Error('boom');
      },
    };
    const withThrowing = createShadowExecutor({ primary: fixed('bubblewrap', 'passed'), shadow: throwing });
    expect(await withThrowing.run(plan, dir, opts)).toMatchObject({
      status: 'passed',
      shadow: { status: 'error', evidence: 'ERROR e2b: boom' },
    });
  });

  it('the shadow gets 600000 ms by default; VERDICT_VALIDATION_SHADOW_TIMEOUT_MS overrides it', async () => {
    const seen: RunOptions[] = [];
    const ex = createShadowExecutor({ primary: fixed('a', 'passed'), shadow: fixed('b', 'passed', seen) });
    await ex.run(plan, dir, opts);
    expect(seen[0]!.timeoutMs).toBe(600000);
    expect(DEFAULT_SHADOW_TIMEOUT_MS).toBe(600000);
  });
});

describe('TailBuffer', () => {
  it('keeps only the last cap bytes and counts all of them', () => {
    const t = new TailBuffer(10);
    for (let i = 0; i < 1000; i++) t.push(Buffer.from(`${i % 10}`));
    t.push(Buffer.from('abcdefghijklmnop'));
    t.push(Buffer.from('XY'));
    expect(t.text()).toBe('ijklmnopXY');
    expect(t.total).toBe(1000 + 16 + 2);
    expect(t.truncated).toBe(true);
  });
});
