/**
 * Validation: plans (which standard checks a repository has) and executors (where they run).
 * Outcome wording follows review-engine 7.4; executor names follow NAMES.md ("Validation executors").
 */
import type { TailBuffer } from './tail-buffer.js';

export type CheckName = 'test' | 'typecheck' | 'lint' | 'build';
export type Ecosystem = 'javascript' | 'python' | 'go' | 'custom';
export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

export interface PlannedCommand {
  check: CheckName;
  ecosystem: Ecosystem;
  /** argv, run without a shell. */
  argv: string[];
}

export type ValidationPlan =
  | {
      kind: 'run';
      /** `standard`: detected scripts; `repo-config`: commands the repository's committed config asks for. */
      source: 'standard' | 'repo-config';
      packageManager?: PackageManager;
      commands: PlannedCommand[];
    }
  /** Nothing to run; `reason` is the outcome text. */
  | { kind: 'none' | 'skipped'; reason: string; commands: [] };

export interface CommandResult {
  check: CheckName;
  command: string;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  timedOut: boolean;
  /** The last bytes of merged stdout and stderr (at most the executor's cap). */
  outputTail: string;
  outputBytes: number;
  outputTruncated: boolean;
}

export interface ValidationArtifact {
  id: string;
  kind: 'command_output';
  command: string;
  /** The output tail as text; an artifact store (issue 26 item 5) persists it. */
  content: string;
}

export type OutcomeStatus = 'passed' | 'failed' | 'timed_out' | 'skipped' | 'refused' | 'not_run' | 'error';

/** What the bubblewrap executor's dependency install step did (absent when the step is off). */
export interface InstallRecord {
  /**
   * `installed`: it ran and succeeded; `failed`/`timed_out`: it ran and did not (the commands were not run);
   * `refused`: the lockfile reaches outside the registry; `not_installed`: nothing to install or no way to.
   */
  result: 'installed' | 'failed' | 'timed_out' | 'refused' | 'not_installed';
  packageManager?: PackageManager;
  registry?: string;
  /** The install command, when it ran. */
  command?: string;
  exitCode?: number | null;
  signal?: string | null;
  durationMs?: number;
  /** Lockfile entries outside the registry (`refused`): `name: resolved`. */
  outside?: string[];
}

export interface ValidationOutcome {
  executor: string;
  status: OutcomeStatus;
  /** The evidence line (review-engine 7.4 wording where it gives one). */
  evidence: string;
  commands: CommandResult[];
  artifacts: ValidationArtifact[];
  /** Only on the shadow executor's combined result. */
  shadow?: ValidationOutcome;
  note?: string;
  /** bubblewrap: the dependency install step, when it is on. */
  install?: InstallRecord;
}

export interface RunOptions {
  /** Time limit for the whole run (every command); always required. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface Executor {
  readonly name: string;
  run(plan: ValidationPlan, checkoutDir: string, opts: RunOptions): Promise<ValidationOutcome>;
}

/** The outcome of a plan with nothing to run. */
export function outcomeFromPlan(
  executor: string,
  plan: Exclude<ValidationPlan, { kind: 'run' }>,
): ValidationOutcome {
  return {
    executor,
    status: plan.kind === 'skipped' ? 'skipped' : 'not_run',
    evidence: plan.reason,
    commands: [],
    artifacts: [],
  };
}

export function simpleOutcome(
  executor: string,
  status: OutcomeStatus,
  evidence: string,
  note?: string,
): ValidationOutcome {
  return { executor, status, evidence, commands: [], artifacts: [], ...(note ? { note } : {}) };
}

/** A command's result from its kept output tail and how it ended. */
export function commandResult(
  cmd: PlannedCommand,
  started: number,
  tail: TailBuffer,
  end: Pick<CommandResult, 'exitCode' | 'signal' | 'timedOut'>,
): CommandResult {
  return {
    check: cmd.check,
    command: cmd.argv.join(' '),
    ...end,
    durationMs: Date.now() - started,
    outputTail: tail.text(),
    outputBytes: tail.total,
    outputTruncated: tail.truncated,
  };
}

/**
 * Runs the commands one after another, each with the time left before `deadline`, into `results` (so that
 * a throw keeps the results before it); stops after a command that timed out, on cancellation, or when no
 * time is left.
 */
export async function runInTurn(
  results: CommandResult[],
  commands: PlannedCommand[],
  deadline: number,
  signal: AbortSignal | undefined,
  run: (cmd: PlannedCommand, leftMs: number) => Promise<CommandResult>,
): Promise<CommandResult[]> {
  for (const cmd of commands) {
    const left = deadline - Date.now();
    if (left <= 0 || signal?.aborted) break;
    const r = await run(cmd, left);
    results.push(r);
    if (r.timedOut) break;
  }
  return results;
}

/** Each command's output tail as an artifact `<executor>-<n>-<check>`. */
export function commandArtifacts(executor: string, results: CommandResult[]): ValidationArtifact[] {
  return results.map((r, i) => ({
    id: `${executor}-${i + 1}-${r.check}`,
    kind: 'command_output',
    command: r.command,
    content: r.outputTail,
  }));
}

/**
 * The outcome of an executor that ran a plan's commands one after another (bubblewrap, e2b), in this
 * order: cancelled; a stop of the executor's own before the commands' results (a failed install, an
 * executor error); a command at the time limit; failed commands; commands never reached; passed. Each
 * command's output tail is an artifact `<executor>-<n>-<check>`, after the executor's own `artifacts`.
 */
export function commandsOutcome(a: {
  executor: string;
  plan: Extract<ValidationPlan, { kind: 'run' }>;
  results: CommandResult[];
  aborted: boolean;
  /** What a cancellation or the time limit kills: `process tree` (bubblewrap), `sandbox` (e2b). */
  killed: string;
  stopped?: { status: OutcomeStatus; evidence: string } | null;
  artifacts?: ValidationArtifact[];
  note?: string;
  install?: InstallRecord;
}): ValidationOutcome {
  const { executor, results } = a;
  const artifacts = [...(a.artifacts ?? []), ...commandArtifacts(executor, results)];
  const timed = results.find((r) => r.timedOut);
  const failed = results.filter((r) => !r.timedOut && r.exitCode !== 0);
  const notRun = a.plan.commands.slice(results.length).map((c) => c.argv.join(' '));
  const notRunTail = notRun.length ? `; not run: ${notRun.join(', ')}` : '';
  const base = {
    executor,
    commands: results,
    artifacts,
    ...(a.note !== undefined ? { note: a.note } : {}),
    ...(a.install ? { install: a.install } : {}),
  };
  const outcome = (status: OutcomeStatus, evidence: string): ValidationOutcome => ({
    ...base,
    status,
    evidence,
  });
  if (a.aborted)
    return outcome('not_run', `NOT RUN ${executor}: cancelled (${a.killed} killed)${notRunTail}`);
  if (a.stopped) return outcome(a.stopped.status, `${a.stopped.evidence}${notRunTail}`);
  if (timed) {
    return outcome(
      'timed_out',
      `TIMED OUT ${executor}: ${timed.command} (${a.killed} killed at the time limit)${notRunTail}`,
    );
  }
  if (failed.length > 0) {
    const list = failed.map((r) => `${r.command} (exit ${r.exitCode ?? r.signal})`).join(', ');
    return outcome('failed', `FAILED ${executor}: ${list}`);
  }
  if (notRun.length > 0)
    return outcome('not_run', `NOT RUN ${executor}: cancelled before ${notRun.join(', ')}`);
  return outcome('passed', `PASSED ${executor}: ${results.map((r) => r.command).join(', ')}`);
}
