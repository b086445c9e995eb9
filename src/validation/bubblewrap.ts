/**
 * `bubblewrap` executor: each planned command runs in `bwrap` over a scratch copy of the checkout.
 * Isolation: the system read-only, the scratch copy and a private /tmp the only writable places, no
 * network (`--unshare-net`), its own pid namespace, a cleared environment, rlimits (address space, CPU
 * seconds, file size, optionally processes) through `prlimit`, and a time limit that kills the whole tree.
 * Offline only: there is no dependency-install step, so dependencies must be vendored or already present.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TailBuffer } from './tail-buffer.js';
import type {
  CommandResult,
  Executor,
  PlannedCommand,
  RunOptions,
  ValidationOutcome,
  ValidationPlan,
} from './types.js';
import { outcomeFromPlan, simpleOutcome } from './types.js';

export const BWRAP_UNAVAILABLE = 'SKIPPED bubblewrap: binary unavailable';
export const BWRAP_REFUSED_UNTRUSTED = 'REFUSED bubblewrap: repo-committed config untrusted';
export const OFFLINE_NOTE =
  'offline: no dependency install step ran; dependencies must be vendored or present in the checkout';

export interface BubblewrapLimits {
  /** RLIMIT_AS in bytes (default 4 GiB). */
  addressSpaceBytes: number;
  /** RLIMIT_CPU in seconds (default 600). */
  cpuSeconds: number;
  /** RLIMIT_FSIZE in bytes (default 1 GiB). */
  fileSizeBytes: number;
  /**
   * RLIMIT_NPROC; counted per user across the whole host, so it is off by default (the sandbox runs as the
   * host user, often root with many processes). Set it when Verdict runs as a dedicated user.
   */
  processes?: number;
}

export interface BubblewrapOptions {
  /** Path or name of the bwrap binary (default `bwrap`, looked up on PATH). */
  bwrapPath?: string;
  /** Whether the operator trusts the repository to run its committed executable configuration. */
  trusted?: boolean;
  /** Where scratch copies are made (default os.tmpdir()). */
  scratchRoot?: string;
  /** Bytes of output kept per command (the tail; default 64 KiB). */
  outputCapBytes?: number;
  limits?: Partial<BubblewrapLimits>;
  /** Extra host paths bound read-only (toolchains outside /usr, say). */
  extraReadOnly?: string[];
  /** Extra environment inside the sandbox (the host environment is never passed through). */
  env?: Record<string, string>;
  /** Keep the scratch copy after the run (tests inspect it); default false. */
  keepScratch?: boolean;
  /** Called with the scratch directory once it is made. */
  onScratch?: (dir: string) => void;
}

const DEFAULT_LIMITS: BubblewrapLimits = {
  addressSpaceBytes: 4 * 1024 ** 3,
  cpuSeconds: 600,
  fileSizeBytes: 1024 ** 3,
};

export function findBinary(nameOrPath: string): string | undefined {
  const candidates = nameOrPath.includes('/')
    ? [nameOrPath]
    : (process.env.PATH ?? '').split(':').map((d) => path.join(d || '.', nameOrPath));
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      if (fs.statSync(c).isFile()) return c;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** Mount arguments: system directories read-only (symlinks kept as symlinks), nothing of the host's home. */
function systemMounts(extra: string[]): string[] {
  const args: string[] = [];
  for (const p of ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', ...extra]) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(p), p);
    else args.push('--ro-bind', p, p);
  }
  return args;
}

export const SANDBOX_WORKDIR = '/workspace';

export function bwrapArgs(
  scratch: string,
  cmd: PlannedCommand,
  o: BubblewrapOptions,
  limits: BubblewrapLimits,
): string[] {
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/tmp/home',
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    CI: 'true',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_offline: 'true',
    GOFLAGS: '-mod=mod',
    GOPROXY: 'off',
    ...(o.env ?? {}),
  };
  const prlimit = [
    'prlimit',
    `--as=${limits.addressSpaceBytes}`,
    `--cpu=${limits.cpuSeconds}`,
    `--fsize=${limits.fileSizeBytes}`,
    ...(limits.processes ? [`--nproc=${limits.processes}`] : []),
    '--',
  ];
  return [
    ...systemMounts(o.extraReadOnly ?? []),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--dir',
    '/tmp/home',
    '--bind',
    scratch,
    SANDBOX_WORKDIR,
    '--chdir',
    SANDBOX_WORKDIR,
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    '--',
    ...prlimit,
    ...cmd.argv,
  ];
}

function killTree(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL'); // the bwrap process group; its death takes the pid namespace with it
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** Runs one command in its own process group; at the time limit or on abort the whole group is killed. */
export function runProcess(
  bin: string,
  args: string[],
  cmd: PlannedCommand,
  timeoutMs: number,
  cap: number,
  signal?: AbortSignal,
  cwd?: string,
): Promise<CommandResult> {
  const started = Date.now();
  const tail = new TailBuffer(cap);
  return new Promise((resolve) => {
    const child = spawn(bin, args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(cwd ? { cwd } : {}),
    });
    let timedOut = false;
    const kill = () => killTree(child.pid);
    const timer = setTimeout(
      () => {
        timedOut = true;
        kill();
      },
      Math.max(1, timeoutMs),
    );
    const onAbort = () => kill();
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => tail.push(c));
    child.stderr.on('data', (c: Buffer) => tail.push(c));
    const finish = (exitCode: number | null, sig: string | null, err?: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) tail.push(Buffer.from(`\n[verdict] could not start ${bin}: ${err.message}\n`));
      resolve({
        check: cmd.check,
        command: cmd.argv.join(' '),
        exitCode,
        signal: sig,
        durationMs: Date.now() - started,
        timedOut,
        outputTail: tail.text(),
        outputBytes: tail.total,
        outputTruncated: tail.truncated,
      });
    };
    child.on('error', (err) => finish(null, null, err));
    child.on('close', (code, sig) => finish(code, sig));
  });
}

export function createBubblewrapExecutor(o: BubblewrapOptions = {}): Executor {
  const limits: BubblewrapLimits = { ...DEFAULT_LIMITS, ...(o.limits ?? {}) };
  const cap = o.outputCapBytes ?? 64 * 1024;
  return {
    name: 'bubblewrap',
    async run(plan: ValidationPlan, checkoutDir: string, opts: RunOptions): Promise<ValidationOutcome> {
      const early = outcomeFromPlan('bubblewrap', plan);
      if (early) return early;
      if (plan.kind !== 'run') throw new Error('unreachable');
      const bwrap = findBinary(o.bwrapPath ?? 'bwrap');
      if (!bwrap) return simpleOutcome('bubblewrap', 'skipped', BWRAP_UNAVAILABLE);
      if (plan.source === 'repo-config' && !o.trusted) {
        return simpleOutcome('bubblewrap', 'refused', BWRAP_REFUSED_UNTRUSTED);
      }
      if (!(opts.timeoutMs > 0)) throw new Error('bubblewrap: a positive timeoutMs is required');
      const deadline = Date.now() + opts.timeoutMs;
      const scratchParent = fs.mkdtempSync(path.join(o.scratchRoot ?? os.tmpdir(), 'verdict-bwrap-'));
      const scratch = path.join(scratchParent, 'checkout');
      const results: CommandResult[] = [];
      try {
        await fs.promises.cp(checkoutDir, scratch, { recursive: true, verbatimSymlinks: true, force: true });
        o.onScratch?.(scratch);
        for (const cmd of plan.commands) {
          if (opts.signal?.aborted) break;
          const left = deadline - Date.now();
          if (left <= 0) break;
          const r = await runProcess(bwrap, bwrapArgs(scratch, cmd, o, limits), cmd, left, cap, opts.signal);
          results.push(r);
          if (r.timedOut) break;
        }
      } finally {
        if (!o.keepScratch) await fs.promises.rm(scratchParent, { recursive: true, force: true });
      }
      return summarize(plan, results, opts.signal?.aborted === true);
    },
  };
}

function summarize(
  plan: Extract<ValidationPlan, { kind: 'run' }>,
  results: CommandResult[],
  aborted: boolean,
): ValidationOutcome {
  const artifacts = results.map((r, i) => ({
    id: `bubblewrap-${i + 1}-${r.check}`,
    kind: 'command_output' as const,
    command: r.command,
    content: r.outputTail,
  }));
  const timed = results.find((r) => r.timedOut);
  const failed = results.filter((r) => !r.timedOut && r.exitCode !== 0);
  const notRun = plan.commands.slice(results.length).map((c) => c.argv.join(' '));
  const base = { executor: 'bubblewrap', commands: results, artifacts, note: OFFLINE_NOTE };
  if (aborted) {
    return {
      ...base,
      status: 'not_run',
      evidence: `NOT RUN bubblewrap: cancelled (process tree killed)${notRun.length ? `; not run: ${notRun.join(', ')}` : ''}`,
    };
  }
  if (timed) {
    return {
      ...base,
      status: 'timed_out',
      evidence:
        `TIMED OUT bubblewrap: ${timed.command} (process tree killed at the time limit)` +
        (notRun.length ? `; not run: ${notRun.join(', ')}` : ''),
    };
  }
  if (failed.length > 0) {
    return {
      ...base,
      status: 'failed',
      evidence: `FAILED bubblewrap: ${failed.map((r) => `${r.command} (exit ${r.exitCode ?? r.signal})`).join(', ')}`,
    };
  }
  if (notRun.length > 0) {
    return {
      ...base,
      status: 'not_run',
      evidence: `NOT RUN bubblewrap: cancelled before ${notRun.join(', ')}`,
    };
  }
  return {
    ...base,
    status: 'passed',
    evidence: `PASSED bubblewrap: ${results.map((r) => r.command).join(', ')}`,
  };
}
