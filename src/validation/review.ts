/**
 * The validation of one review (issue 26 item 4): decide (policy, filters, executor, e2b gate), check out
 * the head, plan, run the primary executor (with the shadow beside it), and, for a failed check, run that
 * check again at the base commit to tell a failure the pull request introduced from one it found. Never
 * throws: every problem is an outcome of the report. The caller runs it beside the semantic review.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GitHubClient } from '../github/client.js';
import type { PrFacts } from '../policy/matcher.js';
import type { ReviewPolicy } from '../policy/policy.schema.js';
import { selectValidation, storedValidation, type ExecutorName, type ValidationPlanDeps } from './decide.js';
import { downloadCheckout } from './checkout.js';
import { planValidation, SKIPPED_DOCS_ONLY } from './plan.js';
import { STORED_TAIL_CHARS, tail, type ValidationCommand, type ValidationReport } from './report.js';
import { createShadowExecutor, safeRun, SHADOW_NOT_EVIDENCE } from './shadow.js';
import type { CheckName, CommandResult, Executor, ValidationOutcome, ValidationPlan } from './types.js';
import { simpleOutcome } from './types.js';

/** review-engine 7.4: the selected executor has no binding in this process. */
export const NO_SANDBOX_BINDING = 'no sandbox binding available';

export type ReviewValidationDeps = ValidationPlanDeps & {
  /** Builds an executor; `trusted`: the operator trusts the repository's committed commands. */
  executor(name: ExecutorName, opts: { trusted: boolean }): Executor;
  /** Writes the repository at `ref` into `dir` (GitHub's tarball in production). */
  checkout(ref: string, dir: string, signal: AbortSignal): Promise<void>;
  /** Time limit of the whole validation (every command, the base re-run included). */
  timeoutMs: number;
  shadowTimeoutMs: number;
  /** VERDICT_VALIDATION_CODE_CHANGES_ONLY as written. */
  codeChangesOnly: string;
  trustedRepos: string[];
  scratchRoot?: string;
  now(): number;
};

export type ReviewValidationInput = {
  repo: string;
  headSha: string;
  baseSha: string | null;
  changedPaths: string[];
  execution: ReviewPolicy['execution'];
  /** The operator's repository configuration (`validation.provider`, `validation.codeChangesOnly`). */
  operatorConfig: Record<string, unknown> | null;
  /** The repository's committed `validation.commands`. */
  repoCommands: Array<{ check: CheckName; run: string[] }>;
  pr: PrFacts;
  signal: AbortSignal;
};

export type ReviewValidation = {
  report: ValidationReport;
  /** The executor's full outcome (the output tails up to the executor's cap), for evidence artifacts. */
  outcome: ValidationOutcome | null;
};

function toCommand(r: CommandResult): ValidationCommand {
  return {
    check: r.check,
    command: r.command,
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    passed: !r.timedOut && r.exitCode === 0,
    outputTail: tail(r.outputTail, STORED_TAIL_CHARS),
    outputBytes: r.outputBytes,
    introduced: null,
    baseNote: null,
  };
}

const withDetail = (o: { outcome: string; detail?: string }) =>
  o.detail ? `${o.outcome} (${o.detail})` : o.outcome;

export async function validateReview(
  deps: ReviewValidationDeps,
  input: ReviewValidationInput,
): Promise<ReviewValidation> {
  const started = deps.now();
  const report = (r: Omit<ValidationReport, 'durationMs'>, outcome: ValidationOutcome | null = null) => ({
    report: { ...r, durationMs: deps.now() - started },
    outcome,
  });
  const notes: string[] = [];
  /** A validation that ran no command. */
  const ranNothing = (
    status: ValidationReport['status'],
    executor: string | null,
    evidence: string,
    notRun: string[],
  ) => report({ status, executor, evidence, commands: [], notRun, notes, shadow: null });
  const ops = storedValidation(input.operatorConfig);
  const selection = await selectValidation(
    { execution: input.execution, provider: ops.provider, pr: input.pr },
    deps,
  );
  if (!selection.run) return ranNothing('not_run', null, selection.outcome, [withDetail(selection)]);
  notes.push(...selection.notes);
  const withheld = selection.outcomes.map(withDetail);
  if (selection.primary === null) {
    const first = selection.outcomes[0];
    return ranNothing('not_run', first?.executor ?? null, first?.outcome ?? 'no executor', withheld);
  }
  // A shadow withheld (budget) or skipped (no key) is a note: the primary still validates.
  notes.push(...withheld);
  const trusted = deps.trustedRepos.includes(input.repo.toLowerCase());
  let primary: Executor;
  let executor: Executor;
  try {
    primary = deps.executor(selection.primary, { trusted });
    executor = selection.shadow
      ? createShadowExecutor({
          primary,
          shadow: deps.executor(selection.shadow, { trusted }),
          shadowTimeoutMs: deps.shadowTimeoutMs,
        })
      : primary;
  } catch (error) {
    // The selected executor is not wired into this process (review-engine 7.4).
    const line = `${NO_SANDBOX_BINDING} for ${selection.primary} (${(error as Error).message})`;
    return ranNothing('not_run', selection.primary, NO_SANDBOX_BINDING, [line]);
  }
  const scratch = await fs.promises.mkdtemp(path.join(deps.scratchRoot ?? os.tmpdir(), 'verdict-validate-'));
  try {
    const head = path.join(scratch, 'head');
    try {
      await deps.checkout(input.headSha, head, input.signal);
    } catch (error) {
      const line = `ERROR validation: the head could not be checked out (${(error as Error).message})`;
      return ranNothing('error', selection.primary, line, [line]);
    }
    const gate = ops.codeChangesOnly;
    const plan = planValidation({ dir: head }, input.changedPaths, {
      codeChangesOnly: typeof gate === 'boolean' ? String(gate) : deps.codeChangesOnly,
      repoCommands: input.repoCommands.map((c) => ({ check: c.check, argv: c.run })),
    });
    if (plan.kind !== 'run') {
      const skipped = plan.reason === SKIPPED_DOCS_ONLY;
      const status = skipped ? 'skipped' : 'not_run';
      return ranNothing(status, selection.primary, plan.reason, skipped ? [] : [plan.reason]);
    }
    const deadline = started + deps.timeoutMs;
    const outcome = await runSafely(executor, plan, head, deadline - deps.now(), input.signal);
    const ranWith = ranReport(outcome, plan, selection.primary, notes);
    const failed = ranWith.commands.filter((c) => !c.passed && !c.timedOut);
    if (failed.length > 0 && !input.signal.aborted) {
      // The primary alone, again: executors keep no state between runs.
      await checkAtBase(deps, input, primary, plan, failed, scratch, deadline);
    }
    return report(ranWith, outcome);
  } finally {
    await fs.promises.rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** What a run reports: its commands, the planned ones it did not run, the shadow's verdict, the notes. */
function ranReport(
  outcome: ValidationOutcome,
  plan: Extract<ValidationPlan, { kind: 'run' }>,
  primary: ExecutorName,
  notes: string[],
): Omit<ValidationReport, 'durationMs'> {
  const ran = new Set(outcome.commands.map((c) => c.command));
  const notRun = plan.commands
    .map((c) => c.argv.join(' '))
    .filter((c) => !ran.has(c))
    .map((c) => `${c}: not run (${outcome.evidence})`);
  if (outcome.commands.length === 0 && notRun.length === 0) notRun.push(outcome.evidence);
  const { shadow } = outcome;
  const outcomeNotes = (outcome.note ?? '').split('; ').filter((n) => n !== '' && n !== SHADOW_NOT_EVIDENCE);
  return {
    status: outcome.status,
    executor: outcome.executor === 'shadow' ? primary : outcome.executor,
    evidence: outcome.evidence,
    commands: outcome.commands.map(toCommand),
    notRun,
    notes: [...notes, ...outcomeNotes],
    shadow: shadow ? { executor: shadow.executor, status: shadow.status, evidence: shadow.evidence } : null,
  };
}

async function runSafely(
  executor: Executor,
  plan: ValidationPlan,
  dir: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ValidationOutcome> {
  if (timeoutMs <= 0) {
    const evidence = `TIMED OUT ${executor.name}: no time left of the validation time limit`;
    return simpleOutcome(executor.name, 'timed_out', evidence);
  }
  return safeRun(executor, plan, dir, { timeoutMs, signal });
}

/** Runs the failed checks again at the base commit and marks each failure introduced or found. */
async function checkAtBase(
  deps: ReviewValidationDeps,
  input: ReviewValidationInput,
  executor: Executor,
  plan: Extract<ValidationPlan, { kind: 'run' }>,
  failed: ValidationCommand[],
  scratch: string,
  deadline: number,
): Promise<void> {
  const mark = (note: string) => {
    for (const c of failed) c.baseNote = note;
  };
  if (input.baseSha === null) return mark('the base commit is not known, so it was not checked');
  const base = path.join(scratch, 'base');
  try {
    await deps.checkout(input.baseSha, base, input.signal);
  } catch (error) {
    return mark(`the base commit could not be checked out (${(error as Error).message})`);
  }
  const wanted = new Set(failed.map((c) => c.command));
  const again: ValidationPlan = {
    ...plan,
    commands: plan.commands.filter((c) => wanted.has(c.argv.join(' '))),
  };
  const outcome = await runSafely(executor, again, base, deadline - deps.now(), input.signal);
  const byCommand = new Map(outcome.commands.map((c) => [c.command, c]));
  for (const c of failed) {
    const atBase = byCommand.get(c.command);
    if (!atBase) {
      c.baseNote = `it could not be run at the base commit ${input.baseSha.slice(0, 12)} (${outcome.evidence})`;
    } else if (atBase.timedOut) {
      c.baseNote = `at the base commit ${input.baseSha.slice(0, 12)} it did not finish in time`;
    } else {
      c.introduced = atBase.exitCode === 0;
      c.baseNote = `at the base commit ${input.baseSha.slice(0, 12)} it ${c.introduced ? 'passes' : `fails too (exit ${atBase.exitCode ?? atBase.signal})`}`;
    }
  }
}

/** Validation as the review engine uses it: the installation's client gives the checkout. */
export type ReviewValidator = {
  /** How long the model call waits for the results to use them as evidence. */
  evidenceWaitMs: number;
  run(
    gh: GitHubClient,
    where: { owner: string; repo: string },
    input: ReviewValidationInput,
  ): Promise<ReviewValidation>;
};

export function createReviewValidator(
  deps: Omit<ReviewValidationDeps, 'checkout'> & { evidenceWaitMs: number },
): ReviewValidator {
  return {
    evidenceWaitMs: deps.evidenceWaitMs,
    run: (gh, where, input) =>
      validateReview(
        {
          ...deps,
          checkout: async (ref, dir, signal) => {
            await downloadCheckout(gh, { ...where, ref }, dir, { signal });
          },
        },
        input,
      ),
  };
}
