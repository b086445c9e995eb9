/**
 * The bubblewrap executor against the fixture repositories under fixtures/validation/: each gives its
 * outcome, and the sandbox holds (no network, no writes outside the scratch copy, the process tree gone at
 * the time limit, bounded output).
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  BWRAP_REFUSED_UNTRUSTED,
  createBubblewrapExecutor,
  findBinary,
  type BubblewrapOptions,
} from '../../src/validation/bubblewrap.js';
import { planValidation } from '../../src/validation/plan.js';
import type { ValidationOutcome } from '../../src/validation/types.js';

const FIXTURES = path.resolve('fixtures/validation');
const haveBwrap = findBinary('bwrap') !== undefined;
// Outside CI a machine without bwrap skips these; in CI (.ci/run installs it) they always run.
const maybe = haveBwrap || process.env.CI ? describe : describe.skip;

let work: string;
beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-val-it-'));
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

/** A copy of a fixture (the "real checkout" the executor must leave alone). */
function checkout(name: string): string {
  const dir = path.join(work, name);
  fs.cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

async function runFixture(dir: string, timeoutMs = 20000, extra = {}): Promise<ValidationOutcome> {
  const plan = planValidation({ dir }, ['index.js']);
  return createBubblewrapExecutor(extra).run(plan, dir, { timeoutMs });
}

/** Runs repository-committed commands (`argvs`, checks test, lint, build in turn) on a copy of `passing`. */
function runCommitted(argvs: string[][], extra: BubblewrapOptions = { trusted: true }, timeoutMs = 20000) {
  const dir = checkout('passing');
  const checks = ['test', 'lint', 'build'] as const;
  const repoCommands = argvs.map((argv, i) => ({ check: checks[i]!, argv }));
  const plan = planValidation({ dir }, ['sum.js'], { repoCommands });
  return { dir, outcome: createBubblewrapExecutor(extra).run(plan, dir, { timeoutMs }) };
}

function treeSnapshot(dir: string): string {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .map(
      (e) =>
        path.join(e.parentPath ?? e.path, e.name) +
        (e.isFile() ? `:${fs.readFileSync(path.join(e.parentPath ?? e.path, e.name), 'utf8')}` : ''),
    )
    .sort()
    .join('\n');
}

function processesWith(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker) && !l.includes('ps -eo'));
}

async function until(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return pred();
}

maybe('bubblewrap executor on the fixture repositories', () => {
  it('passing: `npm run test` passes inside the sandbox', async () => {
    const out = await runFixture(checkout('passing'));
    expect(out.status).toBe('passed');
    expect(out.evidence).toBe('PASSED bubblewrap: npm run test');
    expect(out.commands).toHaveLength(1);
    expect(out.commands[0]).toMatchObject({ check: 'test', exitCode: 0, timedOut: false });
    expect(out.commands[0]!.outputTail).toMatch(/# pass 1/);
    expect(out.artifacts[0]).toMatchObject({ kind: 'command_output', command: 'npm run test' });
  });

  it('failing: the base passes and the PR head fails, with the failing command and its output tail', async () => {
    const before = await runFixture(checkout('failing-before'));
    const after = await runFixture(checkout('failing-after'));
    expect(before.status).toBe('passed');
    expect(after.status).toBe('failed');
    expect(after.evidence).toBe('FAILED bubblewrap: npm run test (exit 1)');
    expect(after.commands[0]!.exitCode).toBe(1);
    expect(after.commands[0]!.outputTail).toMatch(/# fail 1/);
    expect(after.commands[0]!.outputTail).toMatch(/6 !== 5|expected/);
  });

  it('network: the test cannot reach a service on the host nor the internet', async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const dir = checkout('network');
      fs.writeFileSync(path.join(dir, 'target.json'), JSON.stringify({ host: '127.0.0.1', port }));
      // Control: outside the sandbox the same test does reach the host service.
      await new Promise<void>((resolve) =>
        execFile(
          process.execPath,
          ['--test', '--test-name-pattern=host service', 'test/network.test.js'],
          { cwd: dir, env: { PATH: process.env.PATH } },
          () => resolve(),
        ),
      );
      expect(connections).toBe(1);
      connections = 0;
      const out = await runFixture(dir);
      expect(out.status).toBe('failed');
      expect(out.commands[0]!.outputTail).toMatch(/# fail 2/);
      expect(out.commands[0]!.outputTail).toMatch(/ECONNREFUSED|ENETUNREACH/);
      expect(connections).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('write-outside: writes to the real checkout, the host temp dir, $HOME, /etc and /usr change nothing', async () => {
    const dir = checkout('write-outside');
    const hostDir = fs.mkdtempSync(path.join(work, 'host-'));
    const targets = [path.join(dir, 'escaped.txt'), path.join(hostDir, 'escaped.txt')];
    fs.writeFileSync(path.join(dir, 'target.json'), JSON.stringify({ paths: targets }));
    const before = treeSnapshot(dir);
    let scratch = '';
    const out = await runFixture(dir, 20000, { keepScratch: true, onScratch: (s: string) => (scratch = s) });
    try {
      expect(out.status).toBe('passed');
      const log = out.commands[0]!.outputTail;
      expect(log).toMatch(/BLOCKED \/etc\/verdict-escape\.txt EROFS/);
      expect(log).toMatch(/BLOCKED \/usr\/verdict-escape\.txt EROFS/);
      // Nothing changed on the host.
      expect(treeSnapshot(dir)).toBe(before);
      for (const p of [
        ...targets,
        path.join(os.homedir(), 'verdict-escape.txt'),
        '/etc/verdict-escape.txt',
        '/usr/verdict-escape.txt',
        path.join(os.tmpdir(), 'verdict-escape.txt'),
      ]) {
        expect(fs.existsSync(p)).toBe(false);
      }
      // The scratch copy was the writable place.
      expect(fs.readFileSync(path.join(scratch, 'inside.txt'), 'utf8')).toBe('escaped\n');
    } finally {
      fs.rmSync(path.dirname(scratch), { recursive: true, force: true });
    }
  });

  it('never-ends: killed at the time limit and no process of its tree survives', async () => {
    const marker = 'verdict-never-ends-fixture-marker';
    expect(processesWith(marker)).toEqual([]);
    const started = Date.now();
    const running = runFixture(checkout('never-ends'), 6000);
    const sawChildren = await until(() => processesWith(marker).length >= 3, 6000);
    const out = await running;
    expect(sawChildren).toBe(true);
    expect(out.status).toBe('timed_out');
    expect(out.evidence).toBe('TIMED OUT bubblewrap: npm run test (process tree killed at the time limit)');
    expect(out.commands[0]!.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(25000); // generous upper bound
    expect(await until(() => processesWith(marker).length === 0, 5000)).toBe(true);
  });

  it('huge-output: 200 MB of output is capped to the tail and memory stays bounded', async () => {
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    try {
      const out = await runFixture(checkout('huge-output'), 25000, { outputCapBytes: 64 * 1024 });
      expect(out.status).toBe('passed');
      const r = out.commands[0]!;
      expect(r.outputBytes).toBeGreaterThanOrEqual(200 * 1024 * 1024);
      expect(r.outputTruncated).toBe(true);
      expect(Buffer.byteLength(r.outputTail)).toBeLessThanOrEqual(64 * 1024);
      expect(r.outputTail).toMatch(/END OF HUGE OUTPUT\n$/);
    } finally {
      clearInterval(sampler);
    }
    expect(peak - rssBefore).toBeLessThan(150 * 1024 * 1024);
  }, 60000);

  it('repo-committed commands: refused when untrusted, run in the sandbox when trusted', async () => {
    const refused = await runCommitted([['node', '--test']], {}).outcome;
    expect(refused).toMatchObject({ status: 'refused', evidence: BWRAP_REFUSED_UNTRUSTED, commands: [] });
    const trusted = await runCommitted([['node', '--test']]).outcome;
    expect(trusted.status).toBe('passed');
    expect(trusted.evidence).toBe('PASSED bubblewrap: node --test');
  });

  it('limits: memory, CPU seconds and file size stop a command (it fails, not the host)', async () => {
    const node = (code: string) => ['node', '-e', code];
    const run = runCommitted(
      [
        node('Buffer.alloc(1.5 * 1024 ** 3); console.log("allocated")'),
        node('for (;;) {}'),
        ['sh', '-c', 'head -c 4000000 /dev/zero > big.bin'],
      ],
      { trusted: true, limits: { dataBytes: 1024 ** 3, cpuSeconds: 1, fileSizeBytes: 1024 ** 2 } },
      25000,
    );
    const out = await run.outcome;
    expect(out.status).toBe('failed');
    expect(out.commands).toHaveLength(3);
    for (const r of out.commands) {
      expect(r.timedOut).toBe(false);
      expect(r.exitCode === 0 && r.signal === null).toBe(false);
    }
    expect(out.commands[0]!.outputTail).toMatch(/allocation failed|out of memory/i);
    expect(out.commands[0]!.outputTail).not.toMatch(/allocated/);
    // bwrap reports a child killed by a signal as 128 + the signal: SIGXCPU (24) or SIGKILL at the hard
    // CPU limit, SIGXFSZ (25) for the file size.
    expect([128 + 9, 128 + 24]).toContain(out.commands[1]!.exitCode);
    expect(out.commands[2]!.exitCode).toBe(128 + 25);
    expect(fs.existsSync(path.join(run.dir, 'big.bin'))).toBe(false);
  }, 40000);

  it("the memory limit leaves WebAssembly (and so Node's fetch) working", async () => {
    const wasm = 'new WebAssembly.Memory({ initial: 1 }); console.log(typeof fetch, "wasm ok")';
    const out = await runCommitted([['node', '-e', wasm]]).outcome;
    expect(out.commands[0]!.outputTail).toContain('function wasm ok');
    expect(out.status).toBe('passed');
  }, 30000);

  it('abort: the signal kills the running command and the outcome says cancelled', async () => {
    const marker = 'verdict-never-ends-fixture-marker';
    const dir = checkout('never-ends');
    const ctl = new AbortController();
    const running = createBubblewrapExecutor().run(planValidation({ dir }, ['x.js']), dir, {
      timeoutMs: 60000,
      signal: ctl.signal,
    });
    expect(await until(() => processesWith(marker).length >= 3, 15000)).toBe(true);
    ctl.abort();
    const out = await running;
    expect(out.status).toBe('not_run');
    expect(out.evidence).toBe('NOT RUN bubblewrap: cancelled (process tree killed)');
    expect(await until(() => processesWith(marker).length === 0, 5000)).toBe(true);
  });
});
