/**
 * Validation: plans (which standard checks a repository has) and executors (where they run).
 * Outcome wording follows review-engine 7.4; executor names follow NAMES.md ("Validation executors").
 */

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

export function outcomeFromPlan(executor: string, plan: ValidationPlan): ValidationOutcome | undefined {
  if (plan.kind === 'run') return undefined;
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
