import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '../clock.js';
import type { ReviewConfig } from '../config/index.js';
import type { GitHubClient } from '../github/client.js';
import type { Store } from '../store/index.js';
import { splitFullName } from '../store/repositories.js';
import type { ClaimedJob } from '../queue/types.js';
import type { RunRecord } from '../store/runs.js';
import type { ReviewValidation, ReviewValidator } from '../validation/review.js';
import { validationEvidence as evidenceOf } from '../validation/report.js';
import type { JobContext } from '../worker/runner.js';
import type { ReviewExecution } from '../worker/review-consumer.js';
import { admitRun, type Admitted } from './admit-run.js';
import { anchorStage } from './anchor.stage.js';
import { budgetStage } from './budget.stage.js';
import { callStage, type Called } from './call.stage.js';
import type { ChangedFile } from './context.js';
import { filterStage } from './filter.stage.js';
import { gatherStage } from './gather.stage.js';
import { GatherError } from './gather.js';
import { mergeStage } from './merge.stage.js';
import type { ModelCallEnv } from './model-call.js';
import { parseStage, type Parsed } from './parse.stage.js';
import { planStage } from './plan.stage.js';
import { promptStage } from './prompt.stage.js';
import type { AlertDeps } from '../alerts/raise.js';
import { recallStage } from './recall.stage.js';
import type { ProviderSelection } from './providers/index.js';
import { repoModelOf, type RepoModel } from './providers/repo-model.js';
import {
  recordFailedAnalysis,
  recordRefusal,
  recordStage,
  type EvidenceSettings,
  type RecordTarget,
  type Recorded,
} from './record.stage.js';
import { RunTrace, type StageTap } from './run-trace.js';
import { errorText, type RunScope } from './stage.js';
import { gatherSpan, postProcessSpan } from './summary-spans.js';
import { joinValidation, settledWithin, startValidation } from './validate.js';
import { verificationSettings } from './verification.js';
import { verifyStage } from './verify.stage.js';

export type ReviewEngineDeps = {
  store: Store;
  config: ReviewConfig;
  providers: ProviderSelection;
  /** The installation's Octokit (Probot's `auth(installationId)`). */
  github: (installationId: number) => Promise<GitHubClient>;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** Where the moment alerts go (`budget_reached` at admission); absent: none. */
  alerts?: AlertDeps;
  /** Repo-native validation beside the semantic review; absent or null: off (docs/validation.md). */
  validation?: ReviewValidator | null;
  /**
   * The providers of a repository whose operator configuration sets `model` (providers/repo-model.ts);
   * absent: `providers` review every repository.
   */
  providersFor?: (repoModel: RepoModel) => ProviderSelection;
  /** With no validator: why the server runs none, stated in every review (absent: no validation section). */
  validationSwitch?: 'off' | 'auto';
  /** Evidence artifacts (review-engine 2.6, docs/evidence.md); absent or null: off. */
  evidence?: EvidenceSettings | null;
  /** A test's hook on stage outputs (run-trace.ts); absent in production. */
  tap?: StageTap;
};

/** The review engine: opens the review of one run (see ReviewSession). */
export type ReviewEngine = { open(run: RunRecord, job: ClaimedJob, ctx: JobContext): ReviewSession };

/**
 * A refusal the pull request's author should see on GitHub (NAMES.md: a review refused
 * `repository_disabled` says in its check run how to enable the repository), with what publishing it needs.
 */
export type AdmissionNotice = {
  gh: GitHubClient;
  headSha: string;
  reason: string;
  detail: string;
  /** What would let it be reviewed (admission's hint), when there is one. */
  hint: string | null;
};

/** Refusals that complete a neutral check run saying why and what to change (publish/notice.ts). */
const NOTICE_REASONS = new Set(['repository_disabled', 'auto_review_disabled']);

/** Admission decided: admitted (with the installation's client), or the run's final execution. */
export type Admission =
  | { admitted: true; gh: GitHubClient; headSha: string }
  | { admitted: false; execution: ReviewExecution; notice?: AdmissionNotice };

/**
 * One review of one run, in the steps its caller (the worker) sequences: `traced` holds the trace open around
 * the whole flow; `admit` reads the pull request and decides admission before anything costs money; `analyse`
 * gathers context, calls the model and stores the analysis, returning it; `step` runs one of the caller's own
 * steps (publication) as a span of the same trace, never throwing for it. `admit` and `analyse` turn their
 * failures into a failed execution (recorded on the run), except when the lease is lost or the worker stops.
 */
export interface ReviewSession {
  traced(flow: (session: ReviewSession) => Promise<ReviewExecution>): Promise<ReviewExecution>;
  admit(): Promise<Admission>;
  analyse(): Promise<ReviewExecution>;
  /** Runs `fn` as a span named `name` of kind `publish`: resolves with its error message, or null. */
  step(name: string, fn: () => Promise<unknown>): Promise<string | null>;
}

/**
 * The review engine: what a worker runs for one review job. The trace starts; admission (admit-run.ts)
 * reads the pull request through the installation's Octokit and decides before any model call; then the
 * analysis runs the review's stages in order, each a module `*.stage.ts` with typed input and output and
 * a `stage:<name>` span (the list is in `analysis` below). Repo-native validation runs beside them
 * (validate.ts) and its results join the analysis. Nothing is published here: the worker publishes the
 * analysis.
 */
export function createReviewEngine(deps: ReviewEngineDeps): ReviewEngine {
  return { open: (run, job, ctx) => new ReviewJob(deps, run, job, ctx) };
}

class ReviewJob implements ReviewSession {
  private admitted: Admitted | null = null;
  private providers: ProviderSelection | null = null;
  private readonly trace: RunTrace;
  private readonly scope: RunScope;
  private readonly log: Logger;

  constructor(
    private readonly deps: ReviewEngineDeps,
    private readonly run: RunRecord,
    private readonly job: ClaimedJob,
    private readonly ctx: JobContext,
  ) {
    this.log = deps.log.child({ runId: run.id, reviewKey: run.reviewKey });
    this.trace = new RunTrace({ ...deps, log: this.log }, run);
    const { owner, name } = splitFullName(run.repo);
    const { id: runId, reviewKey, repo, prNumber, createdAt } = run;
    this.scope = { runId, reviewKey, repo, owner, name, prNumber, headSha: run.headSha!, createdAt };
  }

  private get records(): RecordTarget {
    return { store: this.deps.store, run: this.scope, assertLease: () => this.ctx.assertLease() };
  }

  async traced(flow: (session: ReviewSession) => Promise<ReviewExecution>): Promise<ReviewExecution> {
    const { trigger } = this.run;
    await this.trace.start({ trigger, headSha: this.scope.headSha, attempt: this.job.attempts });
    let outcome: ReviewExecution;
    try {
      outcome = await flow(this);
    } catch (error) {
      if (this.ctx.signal.aborted) {
        await this.trace.finish('error', { error: 'aborted: the job lease was lost or the worker stopped' });
        throw error;
      }
      outcome = await this.failure(error);
    }
    await this.trace.finish(outcome.status === 'failed' ? 'error' : 'ok', {
      outcome: outcome.status,
      ...(outcome.status === 'skipped' ? { reason: outcome.reason } : {}),
      ...(outcome.status === 'failed' ? { error: outcome.error } : {}),
    });
    return outcome;
  }

  /** A failure of a step as the run's failed execution (retried unless it cannot succeed later). */
  private async failure(error: unknown): Promise<ReviewExecution> {
    const retry = error instanceof GatherError ? error.retryable : true;
    const outcome = { status: 'failed' as const, error: errorText(error), retry };
    await this.recordFailure(outcome.error);
    return outcome;
  }

  /** Runs a step; an error other than an abort becomes the run's failed execution. */
  private async guarded<T>(step: () => Promise<T>, failed: (e: ReviewExecution) => T): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (this.ctx.signal.aborted) throw error;
      return failed(await this.failure(error));
    }
  }

  admit(): Promise<Admission> {
    return this.guarded(
      () => this.admission(),
      (execution) => ({ admitted: false, execution }),
    );
  }

  analyse(): Promise<ReviewExecution> {
    const admitted = this.admitted;
    if (!admitted) throw new Error('analyse() before a successful admit()');
    // An analysis that ends early (an error while gathering) stops its validation with it.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    this.ctx.signal.addEventListener('abort', onAbort, { once: true });
    return this.guarded(
      () => this.analysis(admitted, stop.signal),
      (execution) => execution,
    ).finally(() => {
      this.ctx.signal.removeEventListener('abort', onAbort);
      stop.abort();
    });
  }

  private async recordFailure(error: string) {
    if (this.ctx.signal.aborted) return;
    await this.ctx.assertLease();
    await this.deps.store.runs.update(this.run.id, { analysisStatus: 'failed', error });
  }

  private async admission(): Promise<Admission> {
    const run = this.run;
    if (run.installationId === null) {
      const error = `run ${run.reviewKey} has no installation id: the pull request cannot be read`;
      await this.recordFailure(error);
      return { admitted: false, execution: { status: 'failed', error, retry: false } };
    }
    const decided = await admitRun(this.deps, { ...run, installationId: run.installationId }, this.scope);
    if (decided.kind === 'refused') {
      const { gh, reason, detail, hint } = decided;
      const execution = await this.refuse(reason, detail);
      const notice = { gh, headSha: this.scope.headSha, reason, detail, hint };
      return { admitted: false, execution, ...(NOTICE_REASONS.has(reason) ? { notice } : {}) };
    }
    this.admitted = decided.admitted;
    return { admitted: true, gh: decided.admitted.gh, headSha: this.scope.headSha };
  }

  /** An admission refusal (or a head that is no longer the PR's): stored on the run with its reason. */
  private async refuse(reason: string, detail: string): Promise<ReviewExecution> {
    await recordRefusal(this.records, reason, detail);
    this.log.info(
      { event: 'review-refused', reason, detail },
      `review ${this.run.reviewKey} not run: ${reason}`,
    );
    return { status: 'skipped', reason };
  }

  /**
   * The analysis: the review's stages, in order. Each reads what it needs of the run and of the earlier
   * stages' outputs (its input type names it) and runs as a `stage:<name>` span; `gather` and
   * `post-process` are summary spans over several stages. `verify` checks the candidates against the
   * code they cite before they are merged; the ones it withholds are recorded, never posted.
   */
  private async analysis(a: Admitted, validationSignal: AbortSignal): Promise<ReviewExecution> {
    const { deps, trace } = this;
    const { clock } = deps;
    const s = this.shared(a);
    // Validation runs beside the semantic review, from the moment the changed files are known.
    let validating: Promise<ReviewValidation | null> = Promise.resolve(null);
    const onFiles = (changed: ChangedFile[]) => {
      validating = startValidation({
        ...s,
        validator: deps.validation,
        ...(deps.validationSwitch && { serverSwitch: deps.validationSwitch }),
        admitted: a,
        changed,
        signal: validationSignal,
      });
    };

    const gathered = await trace.stage(gatherStage, { ...s, files: a.files, onFiles });
    const plan = await trace.stage(planStage, {
      ...s,
      gathered,
      incrementalEnabled: a.standalone.review.incremental,
    });
    // The model waits a while for the validation results, to have them as evidence.
    const early = await settledWithin(validating, deps.validation?.evidenceWaitMs ?? 0);
    const validationEvidence = early ? evidenceOf(early.report) : null;
    const prompt = await trace.stage(promptStage, { ...s, gathered, plan, validationEvidence });
    const budgeted = await trace.stage(budgetStage, { ...s, plan, prompt });
    await trace.span(gatherSpan(a, { gathered, plan, budgeted }, clock.now()));
    const samples = a.standalone.review.samples;
    const called = await trace.stage(callStage, { ...s, prompt, budgeted, samples, gathered });
    // The validation's results (it is bounded by its own time limit and the job's lease).
    const validated = await validating;
    const postStart = clock.now();
    const parsed = await trace.stage(parseStage, { called, budgeted });
    const failed = this.unusable(parsed, called);
    if (failed !== null) return this.failedAnalysis(failed, called, budgeted.input);
    const validation = validated ? joinValidation(validated, early !== null) : null;
    const settings = verificationSettings(
      deps.config.verification,
      a.standalone.review.verification,
      s.providers.primary.name,
    );
    const verified = await trace.stage(verifyStage, { ...s, gathered, parsed, settings });
    const candidates = { ...parsed, outputs: verified.outputs };
    const merged = await trace.stage(mergeStage, {
      ...{ ...s, gathered, plan, budgeted, validation },
      parsed: candidates,
    });
    const filtered = await trace.stage(filterStage, { ...s, gathered, merged });
    const anchoredNow = await trace.stage(anchorStage, { gathered, filtered, validation });
    // Prior findings reworded keep their identity; findings like dismissed ones are withheld.
    const recalled = await trace.stage(recallStage, { ...s, gathered, plan, anchored: anchoredNow });
    const { anchored } = recalled;
    const recorded = await trace.stage(recordStage, {
      ...s,
      ...{ gathered, plan, budgeted, called, parsed, verified, merged, filtered, anchored, validation },
      recalled,
      ...{ ...this.records, notes: a.notes, evidence: deps.evidence, log: this.log },
    });
    await trace.span(
      postProcessSpan({ parsed, merged, filtered, anchored, recorded }, postStart, clock.now()),
    );
    this.analysed(recorded, merged.coverage.complete);
    return { status: 'completed', analysis: recorded.result };
  }

  /** What every stage may read: the run, the pull request, the policy, the configuration, the model env. */
  private shared(a: Admitted) {
    const { store, config, clock } = this.deps;
    this.providers ??= this.providersOf(a);
    const providers = this.providers;
    const { signal } = this.ctx;
    const span = this.trace.span;
    const env: ModelCallEnv = { clock, signal, span, contextTokens: config.contextTokens };
    return {
      run: this.scope,
      gh: a.gh,
      pr: a.pr,
      policy: a.policy,
      store,
      config,
      providers,
      clock,
      signal,
      span,
      env,
    };
  }

  /** The server's providers, or the repository's own when its operator configuration sets `model`. */
  private providersOf(a: Admitted): ProviderSelection {
    const repoModel = repoModelOf(a.operatorConfig);
    return repoModel && this.deps.providersFor ? this.deps.providersFor(repoModel) : this.deps.providers;
  }

  /**
   * No usable part: the run fails (retried when the cause can pass), unless
   * `VERDICT_PUBLISH_ON_RUNNER_FAILURE` publishes the fallback output, on the last attempt for a
   * retryable cause. The error to record, or null when the analysis goes on.
   */
  private unusable(parsed: Parsed, called: Called): string | null {
    if (parsed.outputs.length > 0) return null;
    const lastAttempt = this.job.attempts >= this.job.maxAttempts;
    const { primary } = called;
    if (this.deps.config.publishOnRunnerFailure && (!primary.retryable || lastAttempt)) return null;
    const errors = [...primary.failed.values()];
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more part(s))` : '';
    return `semantic analysis failed: ${errors[0] ?? 'no output'}${more}`;
  }

  private async failedAnalysis(
    error: string,
    called: Called,
    input: Parameters<typeof recordFailedAnalysis>[2],
  ) {
    await recordFailedAnalysis(this.records, called, input, error);
    return { status: 'failed' as const, error, retry: called.primary.retryable };
  }

  private analysed({ result, findings: stored, degraded }: Recorded, coverageComplete: boolean) {
    const verdict = result.output.verdict;
    const findings = stored.filter((f) => (f.status ?? 'published') === 'published').length;
    this.log.info(
      { event: 'review-analysed', verdict, findings, degraded, coverageComplete },
      `review ${this.run.reviewKey} analysed: ${verdict}, ${findings} finding(s)${degraded ? ' (degraded)' : ''}`,
    );
  }

  async step(name: string, fn: () => Promise<unknown>): Promise<string | null> {
    const startedAt = this.deps.clock.now();
    let error: string | null = null;
    try {
      await fn();
    } catch (thrown) {
      if (this.ctx.signal.aborted) throw thrown;
      error = errorText(thrown);
      this.log.warn(
        { event: 'publish-step-failed', step: name, err: error },
        `publication step ${name} failed`,
      );
    }
    await this.trace.span({
      kind: 'publish',
      name,
      status: error === null ? 'ok' : 'error',
      startedAt,
      endedAt: this.deps.clock.now(),
      ...(error !== null && { attributes: { error } }),
    });
    return error;
  }
}
