/**
 * `bubblewrap` executor: each planned command runs in `bwrap` over a scratch copy of the checkout.
 * Isolation: the system read-only, the scratch copy and a private /tmp the only writable places, no
 * network (`--unshare-net`), its own pid namespace, a cleared environment, rlimits (address space, CPU
 * seconds, file size, optionally processes) through `prlimit`, and a time limit that kills the whole tree.
 * Dependencies: offline by default (vendored or present in the checkout). With `install: { mode: 'registry' }`
 * an npm project is first installed with `npm ci --ignore-scripts` in the same sandbox but with the network
 * shared, after a lockfile check that every download comes from the registry (install.ts); the commands
 * then run with the network unshared as always.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  decideInstall,
  DEFAULT_INSTALL_TIMEOUT_MS,
  type InstallDecision,
  type InstallSettings,
} from './install.js';
import { TailBuffer } from './tail-buffer.js';
import type {
  CommandResult,
  Executor,
  InstallRecord,
  PlannedCommand,
  RunOptions,
  OutcomeStatus,
  ValidationArtifact,
  ValidationOutcome,
  ValidationPlan,
} from './types.js';
import { commandResult, commandsOutcome, outcomeFromPlan, runInTurn, simpleOutcome } from './types.js';

export const BWRAP_UNAVAILABLE = 'SKIPPED bubblewrap: binary unavailable';
export const BWRAP_REFUSED_UNTRUSTED = 'REFUSED bubblewrap: repo-committed config untrusted';
export const OFFLINE_NOTE =
  'offline: no dependency install step ran; dependencies must be vendored or present in the checkout';
export const INSTALL_ARTIFACT_ID = 'bubblewrap-install';

export interface BubblewrapLimits {
  /**
   * RLIMIT_DATA in bytes (default 4 GiB): the process's writable private memory (heap, anonymous maps).
   * Not RLIMIT_AS: V8 reserves about 10 GiB of address space for each WebAssembly memory, so an
   * address-space limit breaks WebAssembly, and with it Node's `fetch`, without limiting real use.
   */
  dataBytes: number;
  /** RLIMIT_AS in bytes; off by default (see `dataBytes`). */
  addressSpaceBytes?: number;
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
  /** The dependency install step (`Config.validation.install`/`.registry`); absent or `off`: offline only. */
  install?: InstallSettings;
}

const DEFAULT_LIMITS: BubblewrapLimits = {
  dataBytes: 4 * 1024 ** 3,
  cpuSeconds: 600,
  fileSizeBytes: 1024 ** 3,
};

/** The executable file a name resolves to on `searchPath` (default: this process's PATH), or a path as is. */
export function findBinary(nameOrPath: string, searchPath = process.env.PATH): string | undefined {
  const candidates = nameOrPath.includes('/')
    ? [nameOrPath]
    : (searchPath ?? '').split(':').map((d) => path.join(d || '.', nameOrPath));
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
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

const BASE_ENV: Record<string, string> = {
  PATH: SANDBOX_PATH,
  HOME: '/tmp/home',
  TMPDIR: '/tmp',
  LANG: 'C.UTF-8',
  CI: 'true',
};

/** npm without its update, funding and audit requests and messages (bubblewrap and e2b alike). */
export const QUIET_NPM_ENV = {
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};

/** The environment of the planned commands: offline package managers, then the operator's additions. */
function commandEnv(o: BubblewrapOptions): Record<string, string> {
  return {
    ...BASE_ENV,
    ...QUIET_NPM_ENV,
    npm_config_offline: 'true',
    GOFLAGS: '-mod=mod',
    GOPROXY: 'off',
    ...(o.env ?? {}),
  };
}

/**
 * The install's environment: the operator's additions first, then npm isolated from every config file of
 * the host (the user npmrc is /dev/null and the global one a missing file, so no host token or
 * registry setting leaks in), its cache
 * in the sandbox's private /tmp, scripts off and the registry fixed.
 */
export function installEnv(o: BubblewrapOptions, registry: string): Record<string, string> {
  return {
    ...BASE_ENV,
    ...(o.env ?? {}),
    npm_config_userconfig: '/dev/null',
    // npm refuses one file as both user and global config; nothing creates this one in the private /tmp.
    npm_config_globalconfig: '/tmp/no-global-npmrc',
    npm_config_cache: '/tmp/npm-cache',
    npm_config_registry: registry,
    npm_config_ignore_scripts: 'true',
    npm_config_offline: 'false',
    ...QUIET_NPM_ENV,
  };
}

/** When /etc/resolv.conf links outside /etc (systemd-resolved), the install needs its target for DNS. */
function resolverMounts(): string[] {
  try {
    const real = fs.realpathSync('/etc/resolv.conf');
    if (real.startsWith('/etc/') || real.startsWith('/usr/')) return [];
    return ['--ro-bind', real, real];
  } catch {
    return [];
  }
}

export interface SandboxMode {
  /** Share the host's network (the install step only); default false: `--unshare-net`. */
  network?: boolean;
  /** The whole environment inside (default: the commands' offline environment). */
  env?: Record<string, string>;
}

export function bwrapArgs(
  scratch: string,
  cmd: PlannedCommand,
  o: BubblewrapOptions,
  limits: BubblewrapLimits,
  mode: SandboxMode = {},
): string[] {
  const env = mode.env ?? commandEnv(o);
  const prlimit = [
    'prlimit',
    `--data=${limits.dataBytes}`,
    ...(limits.addressSpaceBytes ? [`--as=${limits.addressSpaceBytes}`] : []),
    `--cpu=${limits.cpuSeconds}`,
    `--fsize=${limits.fileSizeBytes}`,
    ...(limits.processes ? [`--nproc=${limits.processes}`] : []),
    '--',
  ];
  return [
    ...systemMounts(o.extraReadOnly ?? []),
    ...(mode.network ? resolverMounts() : []),
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
    ...(mode.network ? [] : ['--unshare-net']),
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
      resolve(commandResult(cmd, started, tail, { exitCode, signal: sig, timedOut }));
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
      if (plan.kind !== 'run') return outcomeFromPlan('bubblewrap', plan);
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
      let step: InstallStep;
      try {
        await fs.promises.cp(checkoutDir, scratch, { recursive: true, verbatimSymlinks: true, force: true });
        o.onScratch?.(scratch);
        const decision = decideInstall(plan, scratch, o.install, inSandboxPath);
        step = await installStep(decision, {
          bwrap,
          scratch,
          scratchParent,
          o,
          limits,
          cap,
          timeoutMs: Math.min(o.install?.timeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS, deadline - Date.now()),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        await runInTurn(results, step.stopped ? [] : plan.commands, deadline, opts.signal, (cmd, left) =>
          runProcess(bwrap, bwrapArgs(scratch, cmd, o, limits), cmd, left, cap, opts.signal),
        );
      } finally {
        if (!o.keepScratch) await fs.promises.rm(scratchParent, { recursive: true, force: true });
      }
      return commandsOutcome({
        executor: 'bubblewrap',
        plan,
        results,
        aborted: opts.signal?.aborted === true,
        killed: 'process tree',
        stopped: step.stopped,
        artifacts: step.artifact ? [step.artifact] : [],
        note: step.note,
        ...(step.record ? { install: step.record } : {}),
      });
    },
  };
}

/** A binary the sandbox's PATH finds (the system is bound read-only at the same paths). */
function inSandboxPath(name: string): boolean {
  return SANDBOX_PATH.split(':').some((d) => findBinary(path.join(d, name)) !== undefined);
}

interface InstallStep {
  /** The outcome's note: which way the install went. */
  note: string;
  /** When the install ran and did not succeed: the outcome, and the commands are not run. */
  stopped: { status: OutcomeStatus; evidence: string } | null;
  record?: InstallRecord;
  artifact?: ValidationArtifact;
}

const INSTALL_LABEL = 'dependency install (npm ci)';

/**
 * Runs `npm ci` in the sandbox with the network shared: the same read-only system, scratch bind, private
 * /tmp, pid namespace, cleared environment, rlimits and process-group kill as the commands. A committed
 * `.npmrc` is moved out of the scratch copy for the install (it could name a proxy or other settings the
 * command line does not pin) and put back before the commands run.
 */
async function installStep(
  d: InstallDecision,
  c: {
    bwrap: string;
    scratch: string;
    scratchParent: string;
    o: BubblewrapOptions;
    limits: BubblewrapLimits;
    cap: number;
    timeoutMs: number;
    signal?: AbortSignal;
  },
): Promise<InstallStep> {
  if (d.kind === 'off') return { note: OFFLINE_NOTE, stopped: null };
  if (d.kind !== 'install') {
    // not_installed (with its package manager, when known) or refused (with the registry and what is outside).
    const { kind, note, ...rest } = d;
    return { note, stopped: null, record: { result: kind, ...rest } };
  }
  const cmd: PlannedCommand = { check: 'build', ecosystem: 'javascript', argv: d.argv };
  const npmrc = path.join(c.scratch, '.npmrc');
  const hidden = path.join(c.scratchParent, 'npmrc.hidden');
  let moved = false;
  try {
    fs.lstatSync(npmrc);
    fs.renameSync(npmrc, hidden);
    moved = true;
  } catch {
    /* no committed .npmrc */
  }
  let r: CommandResult;
  try {
    const args = bwrapArgs(c.scratch, cmd, c.o, c.limits, {
      network: true,
      env: installEnv(c.o, d.registry),
    });
    r = await runProcess(c.bwrap, args, cmd, c.timeoutMs, c.cap, c.signal);
  } finally {
    if (moved) fs.renameSync(hidden, npmrc);
  }
  const result = r.timedOut ? 'timed_out' : r.exitCode === 0 ? 'installed' : 'failed';
  const exit = r.exitCode ?? r.signal;
  const ended = {
    installed: {
      note: `installed: npm ci from ${d.registry} (lifecycle scripts off); commands ran offline`,
      stopped: null,
    },
    timed_out: {
      note: `install timed out: npm ci from ${d.registry}; commands not run`,
      stopped: {
        status: 'timed_out' as const,
        evidence: `TIMED OUT bubblewrap: ${INSTALL_LABEL} (process tree killed at the time limit)`,
      },
    },
    // Not a test failure: the checks never ran.
    failed: {
      note: `install failed: npm ci from ${d.registry} exit ${exit}; commands not run`,
      stopped: { status: 'error' as const, evidence: `FAILED bubblewrap: ${INSTALL_LABEL} exit ${exit}` },
    },
  }[result];
  return {
    ...ended,
    record: {
      result,
      packageManager: 'npm',
      registry: d.registry,
      command: r.command,
      exitCode: r.exitCode,
      signal: r.signal,
      durationMs: r.durationMs,
    },
    artifact: { id: INSTALL_ARTIFACT_ID, kind: 'command_output', command: r.command, content: r.outputTail },
  };
}
