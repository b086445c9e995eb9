import type { Clock } from '../clock.js';
import type { GitHubClient } from '../github/client.js';
import { BWRAP_UNAVAILABLE } from '../validation/bubblewrap.js';
import { serverOffOutcome, storedValidation } from '../validation/decide.js';
import { LOCAL_NOT_ALLOWED } from '../validation/local.js';
import type { ReviewValidation, ReviewValidator } from '../validation/review.js';
import { prFacts } from './admission.js';
import type { Admitted } from './admit-run.js';
import type { ChangedFile } from './context.js';
import type { SemanticCoverage } from './run-result.js';
import { errorText, type RecordSpan, type RunScope } from './stage.js';

/**
 * Repo-native validation beside the semantic review (docs/validation.md; src/validation/review.ts runs
 * it). It starts once the changed files are known and runs until its own time limit while the pipeline
 * goes on; the model waits a while for its results to have them as evidence, and they join the analysis
 * after the model calls. Its span is `validate`. Nothing here throws.
 */

export type ValidationStart = {
  validator: ReviewValidator | null | undefined;
  /**
   * Without a validator: why the server runs none (`off`: the operator's switch; `auto`: no executor is
   * available). The review still states the outcome; absent, there is no validation section at all.
   */
  serverSwitch?: 'off' | 'auto';
  gh: GitHubClient;
  run: RunScope;
  admitted: Pick<Admitted, 'pr' | 'policy' | 'standalone' | 'operatorConfig'>;
  changed: ChangedFile[];
  signal: AbortSignal;
  clock: Clock;
  span: RecordSpan;
};

/** Starts the validation of this head (null when validation is off); never rejects. */
export async function startValidation(input: ValidationStart): Promise<ReviewValidation | null> {
  const { validator, admitted, run, clock } = input;
  const { pr, policy, standalone, operatorConfig } = admitted;
  const startedAt = clock.now();
  const paths = input.changed.map((f) => f.filename);
  if (!validator) {
    if (!input.serverSwitch) return null;
    const { status, line } = serverOffOutcome(
      input.serverSwitch,
      {
        execution: policy.execution,
        provider: storedValidation(operatorConfig).provider,
        pr: prFacts({ ...pr, paths }, run.repo),
      },
      { bwrap: BWRAP_UNAVAILABLE, local: LOCAL_NOT_ALLOWED },
    );
    return ranNothing(status, line, clock.now() - startedAt);
  }
  let result: ReviewValidation;
  try {
    result = await validator.run(
      input.gh,
      { owner: run.owner, repo: run.name },
      {
        repo: run.repo,
        headSha: run.headSha,
        baseSha: pr.baseSha,
        changedPaths: paths,
        execution: policy.execution,
        operatorConfig,
        repoCommands: standalone.validation?.commands ?? [],
        pr: prFacts({ ...pr, paths }, run.repo),
        signal: input.signal,
      },
    );
  } catch (error) {
    result = ranNothing('error', `ERROR validation: ${errorText(error)}`, clock.now() - startedAt);
  }
  const { report } = result;
  await input.span({
    kind: 'stage',
    name: 'validate',
    status: report.status === 'error' ? 'error' : 'ok',
    startedAt,
    endedAt: clock.now(),
    attributes: {
      status: report.status,
      executor: report.executor,
      evidence: report.evidence,
      commands: report.commands.length,
      failed: report.commands.filter((c) => !c.passed).length,
    },
  });
  return result;
}

/**
 * A validation that ran no command: not run (a missing validation, and why: review-engine 7.4), skipped
 * (stated, not missing), or failed before running any.
 */
function ranNothing(
  status: 'not_run' | 'skipped' | 'error',
  line: string,
  durationMs: number,
): ReviewValidation {
  return {
    outcome: null,
    report: {
      status,
      executor: null,
      evidence: line,
      commands: [],
      notRun: status === 'skipped' ? [] : [line],
      notes: [],
      shadow: null,
      durationMs,
    },
  };
}

/** The promise's value when it settles within `ms`, else null (it keeps running). */
export async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), Math.max(0, ms));
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The validation's results as they join the analysis: its report, its coverage counts, whether the model saw it. */
export type JoinedValidation = {
  report: ReviewValidation['report'];
  /** The executor's full outcome, for evidence artifacts. */
  outcome: ReviewValidation['outcome'];
  coverage: NonNullable<SemanticCoverage['validation']>;
  seenByModel: boolean;
};

/**
 * The validation's results joined to the analysis: the coverage's counts, and a note in the report when
 * the results arrived after the model call (reported, but not the model's evidence).
 */
export function joinValidation(validated: ReviewValidation, seenByModel: boolean): JoinedValidation {
  const v = validated.report;
  const late = !seenByModel && v.commands.length > 0;
  const report = late
    ? {
        ...v,
        notes: [
          ...v.notes,
          'the results arrived after the model call: they are reported here, but the model did not see them',
        ],
      }
    : v;
  return {
    report,
    outcome: validated.outcome,
    coverage: {
      status: v.status,
      executor: v.executor,
      ran: v.commands.length,
      passed: v.commands.filter((c) => c.passed).length,
      failed: v.commands.filter((c) => !c.passed).length,
      notRun: v.notRun.length,
    },
    seenByModel,
  };
}
