import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '../clock.js';
import { resolveRepoConfig, type OperatorBranches } from '../repo-config/schema.js';
import type { ReviewConfig } from '../config/index.js';
import { sanitizeStoredPolicy } from '../policy/merge.js';
import { DEFAULT_REVIEW_POLICY, type ReviewPolicy } from '../policy/policy.schema.js';
import type { Store } from '../store/index.js';
import { splitFullName } from '../store/repositories.js';
import type { NewFinding } from '../store/findings.js';
import type { ClaimedJob } from '../store/jobs.js';
import type { RunRecord } from '../store/runs.js';
import type { NewSpan } from '../store/traces.js';
import type { JobContext } from '../worker/runner.js';
import type { ReviewExecution } from '../worker/review-consumer.js';
import { MANUAL_TRIGGERS, admit, prFacts, type BudgetUsage } from './admission.js';
import {
  buildReviewInput,
  classifyFile,
  prioritiseFiles,
  splitChunk,
  type ChangedFile,
  type ReviewChunk,
  type ReviewInput,
} from './context.js';
import { mapConcurrent } from './concurrency.js';
import {
  callTokens,
  cutsLine,
  estimateTokens,
  fitContext,
  inputBudget,
  modelWindow,
  tokenScale,
} from './budget.js';
import {
  mergeFindings,
  parseSynthesis,
  SYNTHESIS_SYSTEM,
  synthesisJsonSchema,
  synthesisPrompt,
} from './synthesis.js';
import { applyConfidenceCap, reviewDispositions } from './dispositions.js';
import { findingFingerprint, normaliseFindingPath } from './fingerprint.js';
import { checkFindingAnchors } from './anchors.js';
import { planReview } from './incremental.js';
import { readInstructions } from './instructions.js';
import { surroundingCode } from './surrounding.js';
import {
  GatherError,
  gatherError,
  GITHUB_MAX_PR_FILES,
  fileReader,
  getPullRequest,
  listChangedFiles,
  type PullRequestFacts,
} from './gather.js';
import type { GitHubClient } from '../github/client.js';
import { fallbackOutput, mergeOutputs, semanticCoverage, type FileCoverage } from './merge.js';
import { defaultCompetitorComparison, reviewOutputJsonSchema, type ReviewOutput } from './output.schema.js';
import { parseReviewOutput, repairFindingsPrompt, repairPrompt } from './parse-output.js';
import { chunkPrompt, systemPrompt, type PromptContext } from './prompt.js';
import {
  ModelCallError,
  type ModelMessage,
  type ModelProvider,
  type ProviderSelection,
} from './providers/index.js';
import { applyStrictness } from './strictness.js';
import { runResultSchema, type PriorFinding, type RunResult } from './run-result.js';
import type { ReviewValidation, ReviewValidator } from '../validation/review.js';
import { validationEvidence, validationFindings } from '../validation/report.js';
import { processEvidence } from '../evidence/artifacts.js';
import type { ArtifactStorage } from '../evidence/storage.js';

export type ReviewEngineDeps = {
  store: Store;
  config: ReviewConfig;
  providers: ProviderSelection;
  /** The installation's Octokit (Probot's `auth(installationId)`). */
  github: (installationId: number) => Promise<GitHubClient>;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** Repo-native validation beside the semantic review; absent or null: off (docs/validation.md). */
  validation?: ReviewValidator | null;
  /** Evidence artifacts (review-engine 2.6, docs/evidence.md); absent or null: off. */
  evidence?: { enabled: boolean; requireArtifacts: boolean; storage: ArtifactStorage | null } | null;
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
 * One review of one run, in the steps its caller (the worker) sequences: `traced` holds the trace open
 * around the whole flow; `admit` reads the pull request and decides admission before anything costs
 * money; `analyse` gathers context, calls the model and stores the analysis, returning it; `step` runs
 * one of the caller's own steps (publication) as a span of the same trace, never throwing for it.
 * `admit` and `analyse` turn their failures into a failed execution (recorded on the run), except when
 * the job's lease is lost or the worker stops: then they throw.
 */
export interface ReviewSession {
  traced(flow: (session: ReviewSession) => Promise<ReviewExecution>): Promise<ReviewExecution>;
  admit(): Promise<Admission>;
  analyse(): Promise<ReviewExecution>;
  /** Runs `fn` as a span named `name` of kind `publish`: resolves with its error message, or null. */
  step(name: string, fn: () => Promise<unknown>): Promise<string | null>;
}

/** How one model pass over all chunks went (primary or shadow). */
type PassResult = {
  outputs: Array<{ chunk: number; output: ReviewOutput; warnings: string[]; unreadable: number }>;
  failed: Map<number, string>;
  /** Whether some failure was one that trying again later can fix (timeout, 5xx, rate limit). */
  retryable: boolean;
  /** Parts split in two because an answer was cut at the output token limit. */
  splits: number;
};

/** What every call of one model pass (primary or shadow) sends and how it is traced. */
type PassSetup = {
  provider: ModelProvider;
  spanName: string;
  promptContext: PromptContext;
  system: string;
  suppliedIds: ReadonlySet<string>;
  timeoutMs: number;
};

/** How one part went: its outputs (two or more when it was split), or its error. */
type PartResult = {
  outputs: Array<{ output: ReviewOutput; warnings: string[]; unreadable: number }>;
  error: string | null;
  retryable: boolean;
  splits: number;
};

/** The strict-compatible review output schema, the same object first in every call (prompt caching). */
const REVIEW_SCHEMA = reviewOutputJsonSchema() as unknown as Record<string, unknown>;
const SYNTHESIS_SCHEMA = synthesisJsonSchema();

/** Changed files given their surrounding code at most, per review. */
const MAX_SURROUNDING_FILES = 50;

/** A reader that reads each path once per run (concurrent callers share the read). */
function cachedReader(read: (path: string) => Promise<string | null>) {
  const cache = new Map<string, Promise<string | null>>();
  return (path: string) => {
    if (!cache.has(path)) cache.set(path, read(path));
    return cache.get(path)!;
  };
}

/** Tokens kept for the diff's framing in a part's prompt (the `## Diff` heading and part notes). */
const DIFF_FRAME_TOKENS = 200;

/** A part is split at most this many times over (a part becomes at most 8 smaller ones). */
const MAX_SPLIT_DEPTH = 3;

const MAX_PRIOR_FINDINGS = 200;

/** The promise's value when it settles within `ms`, else null (it keeps running). */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | null> {
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

function monthStartUtc(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The entries with a value (not absent, null, 0, false or empty). */
function present(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => Boolean(value)));
}

function errorText(error: unknown): string {
  return (error as Error)?.message ?? String(error);
}

/**
 * The review engine: what a worker runs for one review job. In order: the trace starts; the pull request
 * is read through the installation's Octokit; admission (review-engine 7.2) decides before any model call;
 * context is gathered (files of all pages, memory contexts, prior findings and what changed since the last
 * reviewed head) and split into chunks within the token budget; each chunk goes to the model with one
 * repair attempt; outputs are merged, dispositions checked against the current head, the strictness filter
 * applied and repeated findings marked still open; coverage, findings and the result are stored in one
 * transaction. Repo-native validation runs beside all of this when it is on, and its results join the
 * analysis (src/validation/review.ts). Nothing is published here: the worker publishes the analysis.
 */
export function createReviewEngine(deps: ReviewEngineDeps): ReviewEngine {
  return { open: (run, job, ctx) => new ReviewJob(deps, run, job, ctx) };
}

/** What admission read, for the analysis that follows it. */
type Admitted = {
  gh: GitHubClient;
  pr: PullRequestFacts;
  policy: ReviewPolicy;
  standalone: ReturnType<typeof resolveRepoConfig>['config'];
  /** The operator's configuration of the repository (validation reads its `validation` section). */
  operatorConfig: Record<string, unknown> | null;
  files: ChangedFile[] | null;
  gatherStart: number;
  /** Admission's notes (kept in the result). */
  notes: string[];
};

class ReviewJob implements ReviewSession {
  private admitted: Admitted | null = null;

  private readonly traceId: string;
  private readonly rootSpanId: string;
  private readonly startedAt: number;
  private readonly owner: string;
  private readonly repo: string;
  private readonly headSha: string;
  private readonly log: Logger;

  constructor(
    private readonly deps: ReviewEngineDeps,
    private readonly run: RunRecord,
    private readonly job: ClaimedJob,
    private readonly ctx: JobContext,
  ) {
    this.traceId = deps.ids('trc');
    this.rootSpanId = deps.ids('spn');
    this.startedAt = deps.clock.now();
    ({ owner: this.owner, name: this.repo } = splitFullName(run.repo));
    this.headSha = run.headSha!;
    this.log = deps.log.child({ runId: run.id, reviewKey: run.reviewKey });
  }

  private async span(span: Omit<NewSpan, 'traceId' | 'spanId' | 'parentSpanId'> & { spanId?: string }) {
    try {
      await this.deps.store.traces.addSpan({
        ...span,
        traceId: this.traceId,
        spanId: span.spanId ?? this.deps.ids('spn'),
        parentSpanId: this.rootSpanId,
      });
    } catch (error) {
      this.log.warn({ event: 'trace-span-failed', err: errorText(error) }, 'could not record a trace span');
    }
  }

  async traced(flow: (session: ReviewSession) => Promise<ReviewExecution>): Promise<ReviewExecution> {
    const { store } = this.deps;
    await store.traces.start({
      id: this.traceId,
      runId: this.run.id,
      reviewKey: this.run.reviewKey,
      repo: this.run.repo,
      prNumber: this.run.prNumber,
      name: 'review',
      attributes: { trigger: this.run.trigger, headSha: this.headSha, attempt: this.job.attempts },
      startedAt: this.startedAt,
    });
    // An earlier attempt whose worker was killed left its trace running: it is ended as abandoned.
    await store.traces
      .abandonRunning(this.run.id, this.traceId)
      .catch((error) =>
        this.log.warn(
          { event: 'trace-abandon-failed', err: errorText(error) },
          'could not end an abandoned trace',
        ),
      );
    let outcome: ReviewExecution;
    try {
      outcome = await flow(this);
    } catch (error) {
      if (this.ctx.signal.aborted) {
        await this.finishTrace('error', { error: 'aborted: the job lease was lost or the worker stopped' });
        throw error;
      }
      outcome = await this.failure(error);
    }
    await this.finishTrace(outcome.status === 'failed' ? 'error' : 'ok', {
      outcome: outcome.status,
      ...(outcome.status === 'skipped' ? { reason: outcome.reason } : {}),
      ...(outcome.status === 'failed' ? { error: outcome.error } : {}),
    });
    return outcome;
  }

  private async finishTrace(status: 'ok' | 'error', attributes: Record<string, unknown>) {
    const { store, clock } = this.deps;
    await this.span({
      spanId: this.rootSpanId,
      kind: 'stage',
      name: 'review',
      status,
      startedAt: this.startedAt,
      endedAt: clock.now(),
      attributes,
    }).catch(() => undefined);
    await store.traces.finish(this.traceId, status, attributes).catch(() => undefined);
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

  private async policy(): Promise<ReviewPolicy> {
    const stored = await this.deps.store.policy.get();
    return stored ? sanitizeStoredPolicy(stored.settings).policy : DEFAULT_REVIEW_POLICY;
  }

  private async budget(): Promise<BudgetUsage> {
    const now = this.deps.clock.now();
    try {
      const report = await this.deps.store.reads.usage(monthStartUtc(now), now + 1);
      if (!report.model.complete || report.model.costUsd === null) {
        const why =
          report.model.runsWithoutTelemetry > 0
            ? `${report.model.runsWithoutTelemetry} analysed run(s) this month recorded no model telemetry`
            : `${report.model.unreported.costUsd} model call(s) this month have no known cost`;
        return { known: false, why };
      }
      return { known: true, costUsd: report.model.costUsd };
    } catch (error) {
      return { known: false, why: `usage could not be read (${errorText(error)})` };
    }
  }

  private async admission(): Promise<Admission> {
    const { store, clock } = this.deps;
    const run = this.run;
    if (run.installationId === null) {
      const error = `run ${run.reviewKey} has no installation id: the pull request cannot be read`;
      await this.recordFailure(error);
      return { admitted: false, execution: { status: 'failed', error, retry: false } };
    }
    // 1. Read the pull request and decide admission before anything costs money.
    const gatherStart = clock.now();
    let gh: GitHubClient;
    try {
      gh = await this.deps.github(run.installationId);
    } catch (error) {
      throw gatherError(`authenticating as installation ${run.installationId}`, error);
    }
    const pr = await getPullRequest(gh, this.owner, this.repo, run.prNumber);
    const refuse = async (reason: string, detail: string, hint?: string): Promise<Admission> => ({
      admitted: false,
      execution: await this.refuse(reason, detail),
      ...(NOTICE_REASONS.has(reason)
        ? { notice: { gh, headSha: this.headSha, reason, detail, hint: hint ?? null } }
        : {}),
    });
    if (pr.state !== 'open') return refuse('pull_request_closed', `the pull request is ${pr.state}`);
    if (pr.headSha !== this.headSha) {
      return refuse(
        'head_moved',
        `the pull request head moved to ${pr.headSha.slice(0, 12)}; that head gets its own review`,
      );
    }
    await store.pullRequests.upsert({
      repo: run.repo,
      number: run.prNumber,
      title: pr.title,
      body: pr.body,
      author: pr.author,
      draft: pr.draft,
      labels: pr.labels,
      baseRef: pr.baseRef,
      headRef: pr.headRef,
      state: pr.state,
      changedFiles: pr.changedFiles,
    });
    const policy = await this.policy();
    const repoRecord = await store.repositories.get(run.repo);
    const operatorEnabled =
      typeof repoRecord?.config?.enabled === 'boolean' ? (repoRecord.config.enabled as boolean) : null;
    const standalone = resolveRepoConfig(repoRecord?.standaloneConfig ?? {}).config;
    // Files are listed before admission (path filters need them), unless admission refuses on the count.
    const listFirst = MANUAL_TRIGGERS.has(run.trigger) || pr.changedFiles <= policy.fileChangeLimit;
    const files = listFirst
      ? await listChangedFiles(gh, this.owner, this.repo, run.prNumber, pr.changedFiles)
      : null;
    const decision = await admit({
      trigger: run.trigger,
      pr: { ...pr, paths: files ? files.map((f) => f.filename) : null },
      repo: {
        fullName: run.repo,
        operatorEnabled,
        operatorBranches: repoRecord?.config?.branches as OperatorBranches,
        standalone,
        hasPriorReview: await store.runs.repoHasAnalysis(run.repo),
      },
      policy,
      budget: () => this.budget(),
    });
    if (!decision.admitted) return refuse(decision.reason, decision.detail, decision.hint);
    this.admitted = {
      gh,
      pr,
      policy,
      standalone,
      operatorConfig: repoRecord?.config ?? null,
      files,
      gatherStart,
      notes: decision.notes,
    };
    return { admitted: true, gh, headSha: this.headSha };
  }

  private async analysis(admitted: Admitted, validationSignal: AbortSignal): Promise<ReviewExecution> {
    const { store, clock, config } = this.deps;
    const run = this.run;
    const { gh, pr, policy, standalone, files, gatherStart, notes } = admitted;
    const changed =
      files ?? (await listChangedFiles(gh, this.owner, this.repo, run.prNumber, pr.changedFiles));
    // Validation runs beside the semantic review, from here until its own time limit.
    const validating = this.validate(admitted, changed, validationSignal);

    // 2. Context: prior findings, full or incremental review, memory contexts, chunks.
    const previous = await store.runs.previousAnalysed(run.repo, run.prNumber, run.id);
    const prior = previous ? await this.priorFindings(previous) : [];
    const plan = await planReview({
      gh,
      owner: this.owner,
      repo: this.repo,
      headSha: this.headSha,
      baseRef: pr.baseRef,
      incrementalEnabled: standalone.review.incremental,
      previous: previous ? this.earlier(previous) : null,
      latest: await this.latestFinished(),
      prFiles: changed,
    });
    const paths = changed.map((f) => f.filename);
    const instructions = await readInstructions(gh, this.owner, this.repo, pr.baseRef, paths);
    // Files at the head are read once per run: for the surrounding code and for the evidence of dispositions.
    const atHead = cachedReader(fileReader(gh, this.owner, this.repo, this.headSha));
    const shown = await this.withSurroundingCode(
      plan.kind === 'incremental' ? plan.files : changed,
      atHead,
      config.chunkTokens * config.maxChunks,
    );
    const memory = await store.memory.forReview(run.repo, paths);
    const competitors = await store.competitors.listForPr(run.repo, run.prNumber);
    // The model waits a while for the validation results, to have them as evidence.
    const early = await settledWithin(validating, this.deps.validation?.evidenceWaitMs ?? 0);
    const fullContext: PromptContext = {
      repo: run.repo,
      number: run.prNumber,
      title: pr.title,
      body: pr.body,
      author: pr.author,
      baseRef: pr.baseRef,
      headRef: pr.headRef,
      headSha: this.headSha,
      labels: pr.labels,
      customInstructions: policy.customInstructions,
      memory: memory.map((m) => ({ id: m.id, title: m.title, body: m.body })),
      prior,
      incremental: plan.kind === 'incremental' ? { sinceSha: plan.sinceSha, files: plan.files.length } : null,
      fullReviewNote:
        plan.kind === 'full' && plan.sinceSha
          ? `This pull request was reviewed before, at ${plan.sinceSha.slice(0, 12)}; this is a full review because ${plan.reason}.`
          : null,
      allPaths: paths,
      instructions: instructions.files,
      competitors: competitors.map((c) => ({ login: c.login, kind: c.kind, state: c.state, body: c.body })),
      validation: early ? validationEvidence(early.report) : null,
    };
    // The whole prompt in budget: system prompt, schema and context first; the diff gets what is left.
    const system = systemPrompt(policy.customInstructions);
    const budget = this.promptBudget(system, fullContext);
    const promptContext = budget.ctx;
    const input = buildReviewInput(shown.files, {
      chunkTokens: budget.chunkTokens,
      fileTokens: Math.min(config.fileTokens, budget.chunkTokens),
      maxChunks: config.maxChunks,
    });
    if (budget.cutLine) input.missingValidations.push(budget.cutLine);
    await this.span({
      kind: 'stage',
      name: 'gather',
      status: 'ok',
      startedAt: gatherStart,
      endedAt: clock.now(),
      attributes: {
        files: changed.length,
        changedFilesReported: pr.changedFiles,
        chunks: input.chunks.length,
        notReviewed: input.notReviewed.length,
        clipped: input.clipped.length,
        priorFindings: prior.length,
        memoryContexts: memory.length,
        competitorReviews: competitors.length,
        instructionFiles: promptContext.instructions?.length ?? 0,
        surroundingFiles: shown.withContext,
        review: plan.kind,
        reviewReason: plan.reason,
        sinceSha: plan.sinceSha,
        contextWindow: budget.window.contextTokens,
        contextWindowSource: budget.window.source,
        inputBudget: budget.inputBudget,
        contextTokens: budget.contextTokens,
        chunkTokens: budget.chunkTokens,
      },
    });

    // 3. The model, chunk by chunk.
    const setup = { promptContext, system, suppliedIds: new Set(promptContext.memory.map((m) => m.id)) };
    const { primary: primaryProvider, shadow: shadowProvider } = this.deps.providers;
    const primary = await this.pass(
      { ...setup, provider: primaryProvider, spanName: 'model', timeoutMs: config.timeoutMs },
      input,
    );
    const shadow = shadowProvider
      ? await this.shadowPass(
          { ...setup, provider: shadowProvider, spanName: 'shadow-model', timeoutMs: config.shadowTimeoutMs },
          input,
        )
      : undefined;

    // The validation's results (it is bounded by its own time limit and the job's lease).
    const validated = await validating;

    // 4. Post-processing and records.
    const postStart = clock.now();
    const usable = primary.outputs.length > 0;
    const lastAttempt = this.job.attempts >= this.job.maxAttempts;
    if (!usable && (!config.publishOnRunnerFailure || (primary.retryable && !lastAttempt))) {
      const errors = [...primary.failed.values()];
      const error = `semantic analysis failed: ${errors[0] ?? 'no output'}${errors.length > 1 ? ` (and ${errors.length - 1} more part(s))` : ''}`;
      await this.record({
        analysisStatus: 'failed',
        verdict: null,
        confidence: null,
        result: { headSha: this.headSha, chunks: this.chunkSummary(input, primary), degraded: false },
        ...(shadow !== undefined ? { shadowReview: shadow } : {}),
        error,
      });
      return { status: 'failed', error, retry: primary.retryable };
    }
    const warnings = [
      ...instructions.notes.map((n) => `repository instructions: ${n}`),
      ...shown.notes.map((n) => `surrounding code: ${n}`),
      ...primary.outputs.flatMap((o) =>
        o.warnings.map((w) => (input.chunks.length > 1 ? `part ${o.chunk + 1}: ${w}` : w)),
      ),
    ];
    // Dispositions count only from a part that holds the prior finding's file, quoting that file.
    const partOutputs = primary.outputs.map((o) =>
      this.dispositionsFromOwnFiles(o.output, input.chunks[o.chunk] ?? null, prior, warnings, o.chunk),
    );
    const combined = usable
      ? await this.combineParts(partOutputs, pr)
      : { output: fallbackOutput([...primary.failed.values()][0] ?? 'no output'), synthesis: null };
    let output = combined.output;
    // A comparison needs something to compare with: without a competitor review it is the default object.
    if (competitors.length === 0 && output.competitorComparison.available) {
      output = { ...output, competitorComparison: defaultCompetitorComparison() };
      warnings.push('replaced `competitorComparison`: no competitor review was supplied');
    }
    const coverage = semanticCoverage(
      this.headSha,
      changed,
      input,
      primary.failed,
      pr.changedFiles,
      plan.kind === 'incremental' ? this.carriedCoverage(previous, plan.sinceSha) : undefined,
    );
    if (combined.synthesis) {
      coverage.partsCombinedBy =
        combined.synthesis.status === 'synthesised' ? 'synthesis' : 'deterministic merge';
    }
    const missing = [
      ...output.missingValidations,
      ...input.missingValidations,
      ...(validated?.report.notRun ?? []),
    ];
    if (validated) {
      const v = validated.report;
      coverage.validation = {
        status: v.status,
        executor: v.executor,
        ran: v.commands.length,
        passed: v.commands.filter((c) => c.passed).length,
        failed: v.commands.filter((c) => !c.passed).length,
        notRun: v.notRun.length,
      };
      if (!early && v.commands.length > 0) {
        v.notes.push(
          'the results arrived after the model call: they are reported here, but the model did not see them',
        );
      }
    }
    if (combined.synthesis?.status === 'failed') {
      missing.push(
        `The ${partOutputs.length} parts could not be combined by the model (${combined.synthesis.error}): the overview is part 1's and the rest is joined part by part.`,
      );
    }
    if (coverage.truncatedByGitHub) {
      missing.push(
        `GitHub lists at most ${GITHUB_MAX_PR_FILES} files of a pull request: ${pr.changedFiles - changed.length} changed file(s) were not seen.`,
      );
    }
    const unreadable = primary.outputs.reduce((n, o) => n + o.unreadable, 0);
    if (unreadable > 0) {
      missing.push(
        `${unreadable} finding${unreadable === 1 ? '' : 's'} from the model could not be read (no path or no title)`,
      );
    }
    for (const [chunk, error] of primary.failed) {
      const count = input.chunks[chunk]?.files.length ?? 0;
      missing.push(`Part ${chunk + 1} (${count} file(s)) could not be analysed: ${error}`);
    }
    // Dispositions of prior findings hold only with evidence quoted from the current head.
    const disposition = await reviewDispositions(output.priorFindingDispositions, {
      headSha: this.headSha,
      priorFingerprints: new Set(prior.map((p) => p.fingerprint)),
      fileAtHead: atHead,
    });
    missing.push(...disposition.missingValidations);
    output = {
      ...output,
      priorFindingDispositions: disposition.accepted,
      missingValidations: [...new Set(missing)],
      confidenceScore: applyConfidenceCap(output.confidenceScore, disposition.confidenceCap),
    };
    const strict = applyStrictness(output.findings, policy.strictness);
    // Anchors are checked against the pull request's diff at this head; a failed one is removed.
    // A failing check the pull request introduced is a finding of its own, with the output as evidence.
    const fromValidation = validated ? validationFindings(validated.report, paths) : [];
    const anchors = checkFindingAnchors(
      [...strict.kept, ...fromValidation.map(({ validationCommand: _c, ...f }) => f)],
      changed,
    );
    output = { ...output, findings: anchors.findings.map(({ lineText: _text, ...f }) => f) };
    const evidence = await this.evidence(output.findings, fromValidation, validated, warnings);
    const earlier = new Set(
      (await store.findings.listForPr(run.repo, run.prNumber))
        .filter((f) => f.runId !== run.id)
        .map((f) => f.fingerprint),
    );
    const changedPaths = new Set(paths.map(normaliseFindingPath));
    const findings: NewFinding[] = anchors.findings.map((f) => {
      const fingerprint = findingFingerprint(f);
      return {
        severity: f.severity,
        category: f.category,
        path: f.path.trim() === '' ? null : f.path,
        line: f.line,
        endLine: f.endLine,
        suggestion: f.suggestion,
        lineText: f.lineText,
        title: f.title,
        body: f.body,
        fingerprint,
        outsideDiff: !changedPaths.has(normaliseFindingPath(f.path)),
        stillOpen: earlier.has(fingerprint),
      };
    });
    const resolved = new Set(disposition.accepted.map((d) => d.fingerprint));
    const raised = new Set(findings.map((f) => f.fingerprint));
    const degraded = primary.failed.size > 0 || !usable;
    const built: RunResult = {
      headSha: this.headSha,
      provider: this.deps.providers.primary.name,
      model: this.deps.providers.primary.model,
      output,
      coverage,
      warnings,
      admission: { notes },
      priorFindings: {
        supplied: prior.length,
        resolved: disposition.accepted.map((d) => {
          const was = prior.find((p) => p.fingerprint === d.fingerprint);
          return {
            fingerprint: d.fingerprint,
            disposition: d.disposition,
            explanation: d.explanation,
            title: was?.title ?? null,
            path: was?.path ?? null,
          };
        }),
        rejected: disposition.rejected.map((r) => ({
          fingerprint: r.disposition.fingerprint,
          reason: r.reason,
        })),
        carriedOpen: prior.filter((p) => !resolved.has(p.fingerprint) && !raised.has(p.fingerprint)),
      },
      strictness: { level: policy.strictness, dropped: strict.dropped.length },
      unreadableFindings: unreadable,
      chunks: this.chunkSummary(input, primary),
      synthesis: combined.synthesis,
      instructions: { files: (promptContext.instructions ?? []).map((i) => i.path) },
      review: {
        kind: plan.kind,
        reason: plan.reason,
        sinceSha: plan.sinceSha,
        files: plan.kind === 'incremental' ? plan.files.length : changed.length,
      },
      baseRef: pr.baseRef,
      anchors: {
        kept: anchors.kept,
        removed: anchors.removed.length,
        suggestionsDropped: anchors.suggestionsDropped,
        problems: anchors.removed
          .slice(0, 50)
          .map((r) => ({ path: r.path, title: r.title, reason: r.reason })),
      },
      degraded,
      ...(validated ? { validation: { ...validated.report, seenByModel: early !== null } } : {}),
      ...(evidence ? { evidence } : {}),
    };
    // What is stored and handed back is checked against its schema (a defect here fails the run loudly).
    const result = runResultSchema.parse(built);
    await this.record(
      {
        analysisStatus: degraded ? 'degraded' : 'analysed',
        verdict: output.verdict,
        confidence: output.confidenceScore,
        result,
        ...(shadow !== undefined ? { shadowReview: shadow } : {}),
        error: usable ? null : `semantic analysis failed: ${[...primary.failed.values()][0] ?? ''}`,
      },
      findings,
    );
    await this.span({
      kind: 'stage',
      name: 'post-process',
      status: 'ok',
      startedAt: postStart,
      endedAt: clock.now(),
      attributes: {
        findings: findings.length,
        stillOpen: findings.filter((f) => f.stillOpen).length,
        droppedByStrictness: strict.dropped.length,
        unreadableFindings: unreadable,
        anchorsKept: anchors.kept,
        anchorsRemoved: anchors.removed.length,
        suggestionsDropped: anchors.suggestionsDropped,
        dispositionsAccepted: disposition.accepted.length,
        dispositionsRejected: disposition.rejected.length,
        coverageComplete: coverage.complete,
        degraded,
      },
    });
    this.log.info(
      {
        event: 'review-analysed',
        verdict: output.verdict,
        findings: findings.length,
        degraded,
        coverageComplete: coverage.complete,
      },
      `review ${run.reviewKey} analysed: ${output.verdict}, ${findings.length} finding(s)${degraded ? ' (degraded)' : ''}`,
    );
    return { status: 'completed', analysis: result };
  }

  /**
   * Evidence artifacts (review-engine 2.6): the validation's command outputs are stored and attached to the
   * findings that claim something was run, by fingerprint; null when the step is off. It never throws:
   * a failure is `evidence_artifacts_failed` in the warnings and the findings are kept as they were.
   */
  private async evidence(
    findings: ReviewOutput['findings'],
    fromValidation: Array<{ title: string; validationCommand: string }>,
    validated: ReviewValidation | null,
    warnings: string[],
  ): Promise<RunResult['evidence'] | null> {
    const settings = this.deps.evidence;
    if (!settings?.enabled) return null;
    const commands = new Map(fromValidation.map((f) => [f.title, f.validationCommand]));
    const processed = await processEvidence({
      ...settings,
      runId: this.run.id,
      outcome: validated?.outcome ?? null,
      findings: findings.map((f) => {
        const command = commands.get(f.title);
        return { ...f, ...(command !== undefined ? { validationCommand: command } : {}) };
      }),
      log: this.log,
    });
    if (processed.failed !== null) warnings.push(`evidence_artifacts_failed: ${processed.failed}`);
    return {
      artifacts: processed.artifacts,
      failed: processed.failed,
      findings: processed.findings.flatMap((f) =>
        f.evidenceArtifacts || f.evidenceStatus
          ? [
              {
                fingerprint: findingFingerprint(f),
                artifacts: f.evidenceArtifacts ?? [],
                status: f.evidenceStatus ?? null,
                downgradedReason: f.downgradedReason ?? null,
              },
            ]
          : [],
      ),
    };
  }

  /** Starts the validation of this head (null when validation is off); never rejects. */
  private async validate(
    admitted: Admitted,
    changed: ChangedFile[],
    signal: AbortSignal,
  ): Promise<ReviewValidation | null> {
    const validator = this.deps.validation;
    if (!validator) return null;
    const { pr, policy, standalone, gh, operatorConfig } = admitted;
    const startedAt = this.deps.clock.now();
    const paths = changed.map((f) => f.filename);
    let result: ReviewValidation;
    try {
      result = await validator.run(
        gh,
        { owner: this.owner, repo: this.repo },
        {
          repo: this.run.repo,
          headSha: this.headSha,
          baseSha: pr.baseSha,
          changedPaths: paths,
          execution: policy.execution,
          operatorConfig,
          repoCommands: standalone.validation?.commands ?? [],
          pr: prFacts({ ...pr, paths }, this.run.repo),
          signal,
        },
      );
    } catch (error) {
      const line = `ERROR validation: ${errorText(error)}`;
      result = {
        outcome: null,
        report: {
          status: 'error',
          executor: null,
          evidence: line,
          commands: [],
          notRun: [line],
          notes: [],
          shadow: null,
          durationMs: this.deps.clock.now() - startedAt,
        },
      };
    }
    const { report } = result;
    await this.span({
      kind: 'stage',
      name: 'validate',
      status: report.status === 'error' ? 'error' : 'ok',
      startedAt,
      endedAt: this.deps.clock.now(),
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
    await this.span({
      kind: 'publish',
      name,
      status: error === null ? 'ok' : 'error',
      startedAt,
      endedAt: this.deps.clock.now(),
      ...(error !== null && { attributes: { error } }),
    });
    return error;
  }

  private chunkSummary(input: ReviewInput, pass: PassResult): RunResult['chunks'] {
    return {
      total: Math.max(1, input.chunks.length),
      failed: pass.failed.size,
      errors: [...pass.failed].map(([chunk, error]) => ({ chunk, error })),
      splits: pass.splits,
    };
  }

  /** Records the run's analysis and its findings, while the job's lease holds. */
  private async record(
    analysis: Parameters<Store['runs']['recordAnalysis']>[1],
    findings: NewFinding[] = [],
  ): Promise<void> {
    await this.ctx.assertLease();
    const { id: runId, reviewKey, repo, prNumber } = this.run;
    const owner = { runId, reviewKey, repo, prNumber, headSha: this.headSha };
    await this.deps.store.runs.recordAnalysis(owner, analysis, findings, this.deps.store.findings);
  }

  /** An admission refusal (or a head that is no longer the PR's): stored on the run with its reason. */
  private async refuse(reason: string, detail: string): Promise<ReviewExecution> {
    await this.record({
      analysisStatus: 'refused',
      verdict: null,
      confidence: null,
      result: { headSha: this.headSha, admission: { reason, detail } },
    });
    this.log.info(
      { event: 'review-refused', reason, detail },
      `review ${this.run.reviewKey} not run: ${reason}`,
    );
    return { status: 'skipped', reason };
  }

  /**
   * A disposition of a prior finding counts only from a part that holds that finding's file, with its
   * evidence quoted from that file (the other parts never saw the code). The rest are dropped, said.
   */
  private dispositionsFromOwnFiles(
    output: ReviewOutput,
    chunk: ReviewChunk | null,
    prior: PriorFinding[],
    warnings: string[],
    index: number,
  ): ReviewOutput {
    if (chunk === null || output.priorFindingDispositions.length === 0) return output;
    const held = new Set(chunk.files.map((f) => normaliseFindingPath(f.path)));
    const pathOf = new Map(prior.map((p) => [p.fingerprint, p.path ? normaliseFindingPath(p.path) : null]));
    const kept = output.priorFindingDispositions.filter((d) => {
      const path = pathOf.get(d.fingerprint);
      if (path === undefined || path === null) return true;
      const ok = held.has(path) && d.evidence.every((e) => normaliseFindingPath(e.path) === path);
      if (!ok) {
        warnings.push(
          `part ${index + 1}: dropped the disposition of ${d.fingerprint}: that part does not hold ${path} or quotes another file`,
        );
      }
      return ok;
    });
    return kept.length === output.priorFindingDispositions.length
      ? output
      : { ...output, priorFindingDispositions: kept };
  }

  /**
   * One part: its output. Several: a synthesis call over the parts' summaries and finding titles writes
   * the overview, summary, verdict, merge verdict and confidence and names duplicate findings (merged);
   * when it fails, the deterministic merge, and the result says so.
   */
  private async combineParts(
    outputs: ReviewOutput[],
    pr: PullRequestFacts,
  ): Promise<{ output: ReviewOutput; synthesis: RunResult['synthesis'] }> {
    if (outputs.length === 1) return { output: outputs[0]!, synthesis: null };
    const merged = mergeOutputs(outputs);
    const called = await this.call(
      this.deps.providers.primary,
      'synthesis',
      SYNTHESIS_SYSTEM,
      [
        {
          role: 'user',
          content: synthesisPrompt(
            { repo: this.run.repo, number: this.run.prNumber, title: pr.title },
            outputs,
          ),
        },
      ],
      this.deps.config.timeoutMs,
      { parts: outputs.length },
      SYNTHESIS_SCHEMA,
    );
    const parsed = called.ok
      ? called.truncated
        ? ({ ok: false, error: 'the answer was cut at the output token limit' } as const)
        : parseSynthesis(called.text)
      : ({ ok: false, error: called.error } as const);
    if (!parsed.ok) {
      return { output: merged, synthesis: { status: 'failed', merged: 0, error: parsed.error } };
    }
    const s = parsed.synthesis;
    const findings = mergeFindings(outputs, s.duplicates);
    return {
      output: {
        ...merged,
        overview: s.overview,
        summary: s.summary,
        verdict: s.verdict,
        confidenceScore: s.confidenceScore,
        bulletHighlights: s.bulletHighlights,
        reasoning: s.reasoning,
        mergeVerdict: s.mergeVerdict,
        findings: findings.findings,
      },
      synthesis: { status: 'synthesised', merged: findings.merged, error: null },
    };
  }

  /**
   * The budget of the primary model's calls: its window less the answer's room; the system prompt, the
   * schema and the context sections (at most 40% of what is left, cut with a marker when over) first, and
   * the diff of each part in the rest.
   */
  private promptBudget(system: string, ctx: PromptContext) {
    const provider = this.deps.providers.primary;
    const window = modelWindow(provider.model, this.deps.config.contextTokens);
    const budget = inputBudget(window, provider.maxTokens ?? null);
    const fixed = callTokens(provider.name, system, REVIEW_SCHEMA, []);
    // A context section as a part carries it: the part heading lists every other changed path.
    const measure = (c: PromptContext) =>
      estimateTokens(provider.name, chunkPrompt(c, { index: 0, files: [], tokens: 0 }, 2));
    const fitted = fitContext(ctx, Math.floor((budget - fixed) * 0.4), measure);
    const contextTokens = measure(fitted.ctx);
    // Diff tokens are counted with o200k when chunks are built: scale the room for a larger tokenizer.
    const room = Math.floor((budget - fixed - contextTokens - DIFF_FRAME_TOKENS) / tokenScale(provider.name));
    return {
      ctx: fitted.ctx,
      window,
      inputBudget: budget,
      contextTokens,
      chunkTokens: Math.max(500, Math.min(this.deps.config.chunkTokens, room)),
      cutLine: cutsLine(fitted.cuts, window, provider.model),
    };
  }

  /**
   * Adds to each file that will be reviewed the enclosing code of its hunks at the head (surrounding.ts):
   * source files that changed (not new, removed, generated, vendored or lock files), in review order,
   * while their diffs fit the review's budget, at most 50 files, read 8 at a time. A file that cannot be
   * read gets none, and the warnings say so.
   */
  private async withSurroundingCode(
    files: readonly ChangedFile[],
    read: (path: string) => Promise<string | null>,
    budgetTokens: number,
  ): Promise<{ files: ChangedFile[]; withContext: number; notes: string[] }> {
    const notes: string[] = [];
    const wanted: ChangedFile[] = [];
    let chars = 0;
    for (const f of prioritiseFiles(files)) {
      if (wanted.length >= MAX_SURROUNDING_FILES || chars > budgetTokens * 4) break;
      chars += f.patch?.length ?? 0;
      if (!f.patch || f.status === 'added' || f.status === 'removed' || classifyFile(f.filename) !== 'source')
        continue;
      wanted.push(f);
    }
    const context = new Map<string, string>();
    await mapConcurrent(wanted, 8, async (f) => {
      if (this.ctx.signal.aborted) return;
      try {
        const source = await read(f.filename);
        if (source === null) return;
        const code = await surroundingCode(f.filename, f.patch!, source);
        if (code !== '') context.set(f.filename, code);
      } catch (error) {
        notes.push(`${f.filename} could not be read at the head: ${errorText(error)}`);
      }
    });
    return {
      files: files.map((f) => (context.has(f.filename) ? { ...f, context: context.get(f.filename)! } : f)),
      withContext: context.size,
      notes,
    };
  }

  /** What the incremental rule reads of an earlier run. */
  private earlier(r: RunRecord) {
    const baseRef = (r.result as Partial<RunResult> | null)?.baseRef;
    return { headSha: r.headSha, analysisStatus: r.analysisStatus, baseRef: baseRef ?? null };
  }

  /** The latest run of the PR before this one whose analysis finished (analysed, degraded or failed). */
  private async latestFinished() {
    const runs = await this.deps.store.runs.listForPr(this.run.repo, this.run.prNumber);
    const latest = runs.find(
      (r) =>
        r.id !== this.run.id &&
        r.createdAt <= this.run.createdAt &&
        ['analysed', 'degraded', 'failed'].includes(r.analysisStatus),
    );
    return latest ? this.earlier(latest) : null;
  }

  /** The coverage of files an incremental review does not show: what the run that reviewed them found. */
  private carriedCoverage(previous: RunRecord | null, sinceSha: string): Map<string, FileCoverage> {
    const files = (previous?.result as Partial<RunResult> | null)?.coverage?.files ?? [];
    const reviewedThen = `unchanged since ${sinceSha.slice(0, 7)}, reviewed then`;
    return new Map(
      files.map((f) => [
        f.path,
        { ...f, reason: f.status === 'analysed' && !f.partial ? reviewedThen : f.reason },
      ]),
    );
  }

  /** Open findings of the previous analysed run of the PR: its own findings and those it carried open. */
  private async priorFindings(previous: RunRecord): Promise<PriorFinding[]> {
    const own = await this.deps.store.findings.listForRun(previous.id);
    const carried =
      ((previous.result as Partial<RunResult> | null)?.priorFindings?.carriedOpen as
        PriorFinding[] | undefined) ?? [];
    const byFingerprint = new Map<string, PriorFinding>();
    for (const f of own) {
      byFingerprint.set(f.fingerprint, {
        priorReviewKey: f.reviewKey,
        fingerprint: f.fingerprint,
        severity: f.severity,
        category: f.category,
        path: f.path,
        line: f.line,
        title: f.title,
        headSha: f.headSha,
      });
    }
    for (const p of carried) if (!byFingerprint.has(p.fingerprint)) byFingerprint.set(p.fingerprint, p);
    return [...byFingerprint.values()].slice(0, MAX_PRIOR_FINDINGS);
  }

  /**
   * One model pass over every part: the parts run concurrently (`VERDICT_REVIEW_CONCURRENCY`), each call
   * under its timeout, with one repair attempt each. Outputs are kept in part order.
   */
  private async pass(setup: PassSetup, input: ReviewInput): Promise<PassResult> {
    const result: PassResult = { outputs: [], failed: new Map(), retryable: false, splits: 0 };
    const chunks: Array<ReviewChunk | null> = input.chunks.length > 0 ? input.chunks : [null];
    const run = { ...setup, total: chunks.length };
    const parts = await mapConcurrent(chunks, this.deps.config.concurrency, async (chunk, index) => {
      if (this.ctx.signal.aborted) throw new Error('aborted');
      return this.reviewPart(run, chunk, index, 0);
    });
    for (const [index, part] of parts.entries()) {
      for (const output of part.outputs) result.outputs.push({ chunk: index, ...output });
      if (part.error !== null) result.failed.set(index, part.error);
      if (part.retryable) result.retryable = true;
      result.splits += part.splits;
    }
    return result;
  }

  /**
   * One part: a call, the repair attempt when the answer cannot be used, and, when the answer was cut at
   * the output token limit, no repair: the part is split in two and both halves are reviewed.
   */
  private async reviewPart(
    run: PassSetup & { total: number },
    chunk: ReviewChunk | null,
    index: number,
    depth: number,
  ): Promise<PartResult> {
    const messages: ModelMessage[] = [
      { role: 'user', content: chunkPrompt(run.promptContext, chunk, run.total) },
    ];
    let error: string | null = null;
    let retryable = false;
    // A usable answer with unreadable findings is kept while the repair attempt tries to do better.
    let kept: { output: ReviewOutput; warnings: string[]; unreadable: number } | null = null;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const called = await this.call(run.provider, run.spanName, run.system, messages, run.timeoutMs, {
        chunk: index,
        attempt,
        ...(depth > 0 ? { split: depth } : {}),
        files: chunk?.files.length ?? 0,
        diffTokens: chunk?.tokens ?? 0,
      });
      if (!called.ok) {
        if (kept) break;
        error = called.error;
        retryable = called.retryable;
        break;
      }
      if (called.truncated) {
        const halves = chunk ? splitChunk(chunk) : null;
        if (halves && depth < MAX_SPLIT_DEPTH) {
          const [a, b] = await Promise.all(
            halves.map((half) => this.reviewPart(run, half, index, depth + 1)),
          );
          const warning = `the answer was cut at the output token limit: the part was split in two and both halves reviewed`;
          return {
            outputs: [...a!.outputs, ...b!.outputs].map((o, i) =>
              i === 0 ? { ...o, warnings: [warning, ...o.warnings] } : o,
            ),
            error: a!.error ?? b!.error,
            retryable: a!.retryable || b!.retryable,
            splits: 1 + a!.splits + b!.splits,
          };
        }
        if (kept) break;
        error = 'the answer was cut at the output token limit and the part cannot be split further';
        break;
      }
      const parsed = parseReviewOutput(called.text, { suppliedContextIds: run.suppliedIds });
      if (parsed.ok) {
        const candidate = {
          output: parsed.output,
          warnings: parsed.warnings,
          unreadable: parsed.unreadable.length,
        };
        if (!kept || candidate.unreadable <= kept.unreadable) kept = candidate;
        error = null;
        if (parsed.unreadable.length === 0 || attempt === 2) break;
        messages.push(
          { role: 'assistant', content: called.text },
          { role: 'user', content: repairFindingsPrompt(parsed.unreadable) },
        );
        continue;
      }
      if (kept) break;
      error = `the model call succeeded but returned no usable review JSON payload (${parsed.error})`;
      messages.push(
        { role: 'assistant', content: called.text },
        { role: 'user', content: repairPrompt(parsed.error) },
      );
    }
    return { outputs: kept ? [kept] : [], error: kept ? null : error, retryable, splits: 0 };
  }

  private async call(
    provider: ModelProvider,
    spanName: string,
    system: string,
    messages: ModelMessage[],
    timeoutMs: number,
    attributes: Record<string, unknown>,
    jsonSchema: Record<string, unknown> = REVIEW_SCHEMA,
  ): Promise<
    { ok: true; text: string; truncated: boolean } | { ok: false; error: string; retryable: boolean }
  > {
    const startedAt = this.deps.clock.now();
    // No call is sent over the model's window: the budget is checked on what the call really sends.
    const promptTokens = callTokens(provider.name, system, jsonSchema, messages);
    const limit = inputBudget(
      modelWindow(provider.model, this.deps.config.contextTokens),
      provider.maxTokens ?? null,
    );
    if (promptTokens > limit) {
      const error = `the prompt is ${promptTokens} tokens, over the input budget of ${limit} tokens of ${provider.model}; not sent`;
      await this.failedCallSpan(provider, spanName, startedAt, {
        ...attributes,
        promptTokens,
        inputBudget: limit,
        error,
        code: 'over_budget',
      });
      return { ok: false, error, retryable: false };
    }
    try {
      const response = await provider.complete({
        system,
        messages,
        jsonSchema,
        timeoutMs,
        signal: this.ctx.signal,
      });
      const { cachedInputTokens, cacheWriteTokens } = response.usage;
      const { structuredOutput, structuredOutputFallback, truncated } = response;
      const extras = {
        cachedInputTokens,
        cacheWriteTokens,
        structuredOutput,
        structuredOutputFallback,
        truncated,
      };
      await this.span({
        kind: 'model',
        name: spanName,
        status: 'ok',
        provider: response.provider,
        model: response.model,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        costUsd: response.costUsd,
        startedAt,
        endedAt: this.deps.clock.now(),
        attributes: { ...attributes, promptTokens, ...present(extras) },
      });
      return { ok: true, text: response.text, truncated: response.truncated === true };
    } catch (error) {
      if (this.ctx.signal.aborted) throw error;
      const message = errorText(error);
      const retryable = error instanceof ModelCallError ? error.retryable : true;
      await this.failedCallSpan(provider, spanName, startedAt, {
        ...attributes,
        error: message,
        code: (error as ModelCallError)?.code ?? null,
      });
      return { ok: false, error: message, retryable };
    }
  }

  /** The model span of a call that failed or was not sent: no usage, no cost. */
  private async failedCallSpan(
    provider: ModelProvider,
    name: string,
    startedAt: number,
    attributes: Record<string, unknown>,
  ) {
    await this.span({
      kind: 'model',
      name,
      status: 'error',
      provider: provider.name,
      model: provider.model,
      inputTokens: null,
      outputTokens: null,
      costUsd: null,
      startedAt,
      endedAt: this.deps.clock.now(),
      attributes,
    });
  }

  /** The shadow model's pass: stored as `shadowReview`, never published, never failing the run. */
  private async shadowPass(setup: PassSetup, input: ReviewInput): Promise<unknown> {
    const who = { provider: setup.provider.name, model: setup.provider.model };
    try {
      const pass = await this.pass(setup, input);
      return {
        ...who,
        status: pass.outputs.length === 0 ? 'failed' : pass.failed.size > 0 ? 'degraded' : 'analysed',
        output: pass.outputs.length > 0 ? mergeOutputs(pass.outputs.map((o) => o.output)) : null,
        errors: [...pass.failed].map(([chunk, error]) => ({ chunk, error })),
      };
    } catch (error) {
      if (this.ctx.signal.aborted) throw error;
      return {
        ...who,
        status: 'failed',
        output: null,
        errors: [{ chunk: null, error: errorText(error) }],
      };
    }
  }
}
