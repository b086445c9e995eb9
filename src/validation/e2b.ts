/**
 * `e2b` executor (NAMES.md: executor B): each run creates one remote e2b sandbox (a Firecracker microVM run
 * by e2b), uploads the checkout into it, runs the planned commands there one by one, and kills the sandbox
 * in every case. The npm SDK `e2b` is an optional dependency loaded with a dynamic import: not installed,
 * the run is `SKIPPED e2b: SDK unavailable`; no `E2B_API_KEY`, `SKIPPED e2b: API key unavailable`.
 *
 * Isolation: the commands run on e2b's machines, not this host; nothing of this host is reachable from the
 * sandbox but the uploaded files (no environment of ours is passed in but the few variables below). The
 * sandbox's network is what e2b gives it (outbound internet by default), so commands can download.
 *
 * Cost: e2b bills per second of sandbox time for the allocated vCPUs and memory. After each run the seconds
 * from the create request to the end of the kill request, times the recorded rate (E2B_PRICES), are handed
 * to `recordCost` (the store's executor_costs table); their sum is what the e2b budget gate reads.
 * docs/validation.md ("e2b") has the whole story.
 */
import fs from 'node:fs';
import path from 'node:path';
import { QUIET_NPM_ENV } from './bubblewrap.js';
import { TailBuffer } from './tail-buffer.js';
import type {
  CommandResult,
  Executor,
  PlannedCommand,
  RunOptions,
  ValidationOutcome,
  ValidationPlan,
} from './types.js';
import { commandResult, commandsOutcome, outcomeFromPlan, runInTurn, simpleOutcome } from './types.js';
import { OUTCOMES } from './decide.js';

/**
 * e2b's published compute rates, per second of running sandbox, by allocated resource.
 * Source: https://e2b.dev/docs/faq/calculate-sandbox-price ("Current rates": vCPU $0.000014 per vCPU per
 * second, RAM $0.0000045 per GiB per second; the page names https://e2b.dev/pricing the source of truth),
 * read 2026-11-24. The same page gives the default sandbox as 2 vCPU and 512 MiB: about $0.109 an hour.
 * `VERDICT_E2B_COST_PER_SECOND_USD` overrides the resulting rate (another template, new prices).
 */
export const E2B_PRICES = {
  source: 'https://e2b.dev/docs/faq/calculate-sandbox-price',
  readOn: '2026-11-24',
  vcpuPerSecondUsd: 0.000014,
  ramGibPerSecondUsd: 0.0000045,
} as const;

/** The resources of e2b's default sandbox (template `base`). */
export const E2B_DEFAULT_RESOURCES = { vcpus: 2, memoryMiB: 512 } as const;

/** USD per second of a sandbox with these resources at the recorded rates. */
export function e2bCostPerSecondUsd(
  resources: { vcpus: number; memoryMiB: number } = E2B_DEFAULT_RESOURCES,
): number {
  return (
    resources.vcpus * E2B_PRICES.vcpuPerSecondUsd +
    (resources.memoryMiB / 1024) * E2B_PRICES.ramGibPerSecondUsd
  );
}

/** The sandbox directory the checkout is uploaded to and commands run in. */
export const E2B_WORKDIR = '/home/user/workspace';

// --- The part of the SDK's public API this executor uses (the package is optional, so no import type). ---

interface SdkCommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  error?: string;
}

interface SdkRunOpts {
  cwd?: string;
  envs?: Record<string, string>;
  timeoutMs?: number;
  requestTimeoutMs?: number;
  signal?: AbortSignal;
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
}

export interface E2bSandbox {
  readonly sandboxId: string;
  files: {
    write(
      files: { path: string; data: Blob }[],
      opts?: { requestTimeoutMs?: number; signal?: AbortSignal },
    ): Promise<unknown>;
  };
  commands: { run(cmd: string, opts?: SdkRunOpts): Promise<SdkCommandResult> };
  kill(opts?: { requestTimeoutMs?: number }): Promise<unknown>;
}

export interface E2bSdk {
  Sandbox: {
    create(opts: {
      apiKey: string;
      template?: string;
      timeoutMs?: number;
      requestTimeoutMs?: number;
      metadata?: Record<string, string>;
      signal?: AbortSignal;
    }): Promise<E2bSandbox>;
  };
  /** What `commands.run` throws for a non-zero exit (a failed command, not an executor error). */
  CommandExitError: abstract new (...args: never[]) => Error & { exitCode: number };
  /** What the SDK throws when a request or a command outlives its deadline. */
  TimeoutError?: abstract new (...args: never[]) => Error;
}

/** Imports the SDK, or null when it cannot be loaded (not installed, broken install). */
export async function loadE2bSdk(specifier = 'e2b'): Promise<E2bSdk | null> {
  try {
    const mod = (await import(specifier)) as Partial<E2bSdk>;
    if (typeof mod.Sandbox?.create !== 'function' || typeof mod.CommandExitError !== 'function') return null;
    return mod as E2bSdk;
  } catch {
    return null;
  }
}

export type E2bCostRecord = { executor: 'e2b'; runId: string | null; seconds: number; costUsd: number };

export interface E2bOptions {
  /** `E2B_API_KEY` of this process (blank or missing: `SKIPPED e2b: API key unavailable`). */
  apiKey: string | null | undefined;
  /** Loads the SDK (default: `import('e2b')`); null or a throw is `SKIPPED e2b: SDK unavailable`. */
  loadSdk?: () => Promise<E2bSdk | null>;
  /** Sandbox template (default e2b's `base`, 2 vCPU / 512 MiB). */
  template?: string;
  /** USD per second of sandbox time (default: e2bCostPerSecondUsd() of the default sandbox). */
  costPerSecondUsd?: number;
  /** Where each run's cost goes (the store's executorCosts.record); a failure is noted, never fatal. */
  recordCost?: (cost: E2bCostRecord) => Promise<unknown>;
  /** The review run this validation belongs to, kept with the cost. */
  runId?: string | null;
  /** Largest total of uploaded bytes (default 100 MiB); a bigger checkout is not run. */
  maxUploadBytes?: number;
  /** Most files uploaded (default 20,000); more is not run. */
  maxUploadFiles?: number;
  /** Bytes of output kept per command (the tail; default 64 KiB). */
  outputCapBytes?: number;
  /** Time limit of each SDK request that is not a command (create, upload, kill); default 60 s. */
  requestTimeoutMs?: number;
  /** Extra environment inside the sandbox. */
  env?: Record<string, string>;
  /** The clock (tests); default Date.now. */
  now?: () => number;
}

/** POSIX shell quoting of one word: safe words as they are, others in single quotes. */
export function shellQuote(word: string): string {
  if (word === '') return "''";
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function shellLine(argv: string[]): string {
  return argv.map(shellQuote).join(' ');
}

type UploadFile = { rel: string; abs: string; size: number; executable: boolean };

type Collected = { ok: true; files: UploadFile[]; notes: string[] } | { ok: false; reason: string };

/**
 * The checkout's regular files (`.git` and anything not a regular file or directory left out), capped,
 * and the run's first notes: what was uploaded and what was not.
 */
async function collectFiles(root: string, o: E2bOptions): Promise<Collected> {
  const maxBytes = o.maxUploadBytes ?? 100 * 1024 * 1024;
  const maxFiles = o.maxUploadFiles ?? 20_000;
  const files: UploadFile[] = [];
  const skipped: string[] = [];
  let bytes = 0;
  const walk = async (dir: string): Promise<string | null> => {
    const entries = await fs.promises.readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      const rel = path.relative(root, abs).split(path.sep).join('/');
      if (e.isDirectory()) {
        if (e.name === '.git') continue;
        const stop = await walk(abs);
        if (stop) return stop;
      } else if (e.isFile()) {
        const st = await fs.promises.stat(abs);
        bytes += st.size;
        files.push({ rel, abs, size: st.size, executable: (st.mode & 0o111) !== 0 });
        if (bytes > maxBytes) return `checkout larger than the upload cap of ${formatBytes(maxBytes)}`;
        if (files.length > maxFiles) return `checkout has more than the upload cap of ${maxFiles} files`;
      } else {
        skipped.push(rel); // symlinks, sockets, fifos
      }
    }
    return null;
  };
  const stop = await walk(root);
  if (stop) return { ok: false, reason: stop };
  const notes = [`uploaded ${files.length} files (${formatBytes(bytes)}) without .git`];
  if (skipped.length > 0) {
    notes.push(
      `not uploaded (not regular files): ${skipped.slice(0, 10).join(', ')}${skipped.length > 10 ? ', ...' : ''}`,
    );
  }
  return { ok: true, files, notes };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : `${n} bytes`;
}

/** Upload requests: at most this many bytes or files each. */
const BATCH_BYTES = 8 * 1024 * 1024;
const BATCH_FILES = 500;

/** Uploads the files in batches, then gives the executable ones their mode back. */
async function upload(
  sandbox: E2bSandbox,
  files: UploadFile[],
  requestTimeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  let batch: { path: string; data: Blob }[] = [];
  let held = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await sandbox.files.write(batch, { requestTimeoutMs, ...(signal ? { signal } : {}) });
    batch = [];
    held = 0;
  };
  for (const f of files) {
    if (signal?.aborted) return;
    if (batch.length > 0 && (held + f.size > BATCH_BYTES || batch.length >= BATCH_FILES)) await flush();
    batch.push({ path: `${E2B_WORKDIR}/${f.rel}`, data: new Blob([await fs.promises.readFile(f.abs)]) });
    held += f.size;
  }
  await flush();
  const executables = files.filter((f) => f.executable).map((f) => f.rel);
  if (executables.length > 0 && !signal?.aborted) {
    // Uploads do not carry file modes.
    await sandbox.commands.run(`chmod +x -- ${shellLine(executables)}`, {
      cwd: E2B_WORKDIR,
      requestTimeoutMs,
      timeoutMs: requestTimeoutMs,
      ...(signal ? { signal } : {}),
    });
  }
}

/** The error a failing SDK call gives, in one line. */
function describe(err: unknown): string {
  const e = err as { name?: string; message?: string };
  const msg = (e?.message ?? String(err)).replace(/\s+/g, ' ').trim();
  return `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${msg.length > 300 ? `${msg.slice(0, 300)}...` : msg}`;
}

const SANDBOX_ENV: Record<string, string> = { CI: 'true', LANG: 'C.UTF-8', ...QUIET_NPM_ENV };

/** Runs one command; a non-zero exit is a result, a time limit or abort stops waiting for it. */
async function runCommand(
  sdk: E2bSdk,
  sandbox: E2bSandbox,
  cmd: PlannedCommand,
  leftMs: number,
  cap: number,
  o: E2bOptions,
  signal?: AbortSignal,
): Promise<CommandResult> {
  const started = Date.now();
  const tail = new TailBuffer(cap);
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      stop.abort(new Error('time limit'));
    },
    Math.max(1, leftMs),
  );
  const onAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const stopped = new Promise<'stopped'>((resolve) => {
    if (stop.signal.aborted) resolve('stopped');
    else stop.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
  });
  const push = (data: string) => tail.push(Buffer.from(data, 'utf8'));
  let exitCode: number | null = null;
  try {
    const running = sandbox.commands.run(shellLine(cmd.argv), {
      cwd: E2B_WORKDIR,
      envs: { ...SANDBOX_ENV, ...(o.env ?? {}) },
      // The SDK's own deadline a little after ours, so that ours is the one that speaks.
      timeoutMs: leftMs + 5_000,
      requestTimeoutMs: Math.min(leftMs + 5_000, o.requestTimeoutMs ?? 60_000),
      signal: stop.signal,
      onStdout: push,
      onStderr: push,
    });
    running.catch(() => undefined); // settled below, or abandoned at the time limit
    const res = await Promise.race([running, stopped]);
    if (res !== 'stopped') exitCode = res.exitCode;
  } catch (err) {
    if (err instanceof sdk.CommandExitError) exitCode = err.exitCode;
    else if (sdk.TimeoutError && err instanceof sdk.TimeoutError && !stop.signal.aborted) {
      timedOut = true;
      tail.push(Buffer.from(`\n[verdict] e2b: ${describe(err)}\n`));
    } else if (!stop.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  return commandResult(cmd, started, tail, { exitCode, signal: null, timedOut });
}

export function createE2bExecutor(o: E2bOptions): Executor {
  const cap = o.outputCapBytes ?? 64 * 1024;
  const now = o.now ?? Date.now;
  const requestTimeoutMs = o.requestTimeoutMs ?? 60_000;
  return {
    name: 'e2b',
    async run(plan: ValidationPlan, checkoutDir: string, opts: RunOptions): Promise<ValidationOutcome> {
      if (plan.kind !== 'run') return outcomeFromPlan('e2b', plan);
      const apiKey = o.apiKey?.trim();
      if (!apiKey) return simpleOutcome('e2b', 'skipped', OUTCOMES.e2bKeyUnavailable);
      let sdk: E2bSdk | null = null;
      try {
        sdk = await (o.loadSdk ?? (() => loadE2bSdk()))();
      } catch {
        sdk = null;
      }
      if (!sdk) return simpleOutcome('e2b', 'skipped', OUTCOMES.e2bSdkUnavailable);
      if (!(opts.timeoutMs > 0)) throw new Error('e2b: a positive timeoutMs is required');
      const deadline = Date.now() + opts.timeoutMs;
      const signal = opts.signal;
      const all = plan.commands.map((c) => c.argv.join(' '));
      const cancelled = () =>
        simpleOutcome(
          'e2b',
          'not_run',
          `NOT RUN e2b: cancelled${all.length ? `; not run: ${all.join(', ')}` : ''}`,
        );
      if (signal?.aborted) return cancelled();

      const collected = await collectFiles(checkoutDir, o);
      if (!collected.ok) {
        return simpleOutcome('e2b', 'not_run', `NOT RUN e2b: ${collected.reason}; no sandbox was created`);
      }
      const { files, notes } = collected;

      const createdAt = now();
      // The sandbox ends itself shortly after the run's time limit should this process die first.
      const lifetimeMs = opts.timeoutMs + 60_000;
      let sandbox: E2bSandbox;
      try {
        sandbox = await sdk.Sandbox.create({
          apiKey,
          ...(o.template ? { template: o.template } : {}),
          timeoutMs: lifetimeMs,
          requestTimeoutMs,
          metadata: { purpose: 'verdict-validation', ...(o.runId ? { runId: o.runId } : {}) },
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        if (signal?.aborted) return cancelled();
        return simpleOutcome('e2b', 'error', `ERROR e2b: sandbox not created: ${describe(err)}`);
      }

      const results: CommandResult[] = [];
      let failure: string | null = null;
      try {
        await upload(sandbox, files, requestTimeoutMs, signal);
        await runInTurn(results, plan.commands, deadline, signal, (cmd, left) =>
          runCommand(sdk, sandbox, cmd, left, cap, o, signal),
        );
      } catch (err) {
        if (!signal?.aborted) failure = describe(err);
      } finally {
        await endSandbox(o, sandbox, { createdAt, lifetimeMs }, notes);
      }
      return commandsOutcome({
        executor: 'e2b',
        plan,
        results,
        aborted: signal?.aborted === true,
        killed: 'sandbox',
        stopped: failure !== null ? { status: 'error', evidence: `ERROR e2b: ${failure}` } : null,
        note: notes.join('; '),
      });
    },
  };
}

/** Kills the sandbox and records its cost: one not killed is billed until its lifetime ends. */
async function endSandbox(
  o: E2bOptions,
  sandbox: E2bSandbox,
  { createdAt, lifetimeMs }: { createdAt: number; lifetimeMs: number },
  notes: string[],
): Promise<void> {
  const now = o.now ?? Date.now;
  const requestTimeoutMs = o.requestTimeoutMs ?? 60_000;
  const rate = o.costPerSecondUsd ?? e2bCostPerSecondUsd();
  let killed = true;
  try {
    await sandbox.kill({ requestTimeoutMs });
  } catch (err) {
    killed = false;
    notes.push(`sandbox kill failed (${describe(err)}); e2b ends it at its lifetime, which is charged`);
  }
  const seconds = Math.max(0, (killed ? now() - createdAt : Math.max(now() - createdAt, lifetimeMs)) / 1000);
  const costUsd = seconds * rate;
  notes.push(`sandbox ${sandbox.sandboxId}: ${seconds.toFixed(1)} s, cost $${costUsd.toFixed(6)}`);
  if (o.recordCost) {
    try {
      await o.recordCost({ executor: 'e2b', runId: o.runId ?? null, seconds, costUsd });
    } catch (err) {
      notes.push(`cost not recorded: ${describe(err)}`);
    }
  }
}

/** The store's part in e2b: where costs are recorded and the total the budget gate reads. */
export interface E2bCostStore {
  record(cost: E2bCostRecord): Promise<unknown>;
  totalUsd(executor: string): Promise<number>;
}

/** createExecutor's `deps.e2b`: an e2b executor that records each run's cost in the store. */
export function e2bExecutorFactory(
  o: Omit<E2bOptions, 'recordCost'> & { costs: E2bCostStore },
): () => Executor {
  const { costs, ...rest } = o;
  return () => createE2bExecutor({ ...rest, recordCost: (c) => costs.record(c) });
}
