import { FallbackProvider } from './providers/repo-model.js';
import type { Logger } from 'pino';
import { processEvidence } from '../evidence/artifacts.js';
import type { ArtifactStorage } from '../evidence/storage.js';
import type { Store } from '../store/index.js';
import type { NewFinding } from '../store/findings.js';
import type { Anchored } from './anchor.stage.js';
import type { Budgeted } from './budget.stage.js';
import type { Called, ShadowReview } from './call.stage.js';
import type { PassResult } from './pass.js';
import type { ReviewInput } from './context.js';
import type { Filtered } from './filter.stage.js';
import { findingFingerprint, normaliseFindingPath } from './fingerprint.js';
import type { Gathered } from './gather.stage.js';
import { memoryReport } from './memory.js';
import type { Merged } from './merge.stage.js';
import type { ReviewOutput } from './output.schema.js';
import type { Parsed } from './parse.stage.js';
import type { Plan } from './plan.stage.js';
import type { Recalled } from './recall.stage.js';
import type { Verified } from './verify.stage.js';
import { checkFindingAnchors, type AnchoredFinding } from './anchors.js';
import { withheldReason } from './verification.js';
import { runResultSchema, type RunResult } from './run-result.js';
import type { RunScope, Stage } from './stage.js';
import type { Strictness } from './strictness.js';
import type { JoinedValidation } from './validate.js';

/**
 * Stage `record`: the analysis as it is stored and handed back. Evidence artifacts attach the
 * validation's command outputs to the findings that claim something was run (review-engine 2.6); each
 * finding gets its fingerprint (path, category and normalised title) and is marked still open when an
 * earlier run of the PR recorded the same one; the result is checked against its schema (a defect here
 * fails the run loudly); the run's analysis, shadow review and findings are stored in one transaction,
 * while the job's lease holds. The other records of a run (a refusal, a failed analysis) are here too.
 */

/** Evidence artifacts (review-engine 2.6, docs/evidence.md); absent or null: off. */
export type EvidenceSettings = {
  enabled: boolean;
  requireArtifacts: boolean;
  storage: ArtifactStorage | null;
};

/** Where and how a run's records are written. */
export type RecordTarget = {
  store: Pick<Store, 'runs' | 'findings'>;
  run: RunScope;
  /** Throws when the job's lease is lost: nothing is recorded then. */
  assertLease: () => Promise<void>;
};

export type RecordInput = RecordTarget & {
  evidence: EvidenceSettings | null | undefined;
  log: Logger;
  providers: { primary: { name: string; model: string } };
  /** Admission's notes. */
  notes: string[];
  pr: { baseRef: string };
  policy: { strictness: Strictness };
  gathered: Pick<Gathered, 'changed' | 'prior' | 'instructions' | 'memory'>;
  plan: Pick<Plan, 'review' | 'notes'>;
  budgeted: Pick<Budgeted, 'context' | 'input'>;
  called: Called;
  parsed: Pick<Parsed, 'unreadable' | 'warnings' | 'removedContextIds'>;
  /** Verification: its report, and the candidates it withheld (stored, never posted). */
  verified: Pick<Verified, 'withheld' | 'report'>;
  merged: Pick<Merged, 'coverage' | 'synthesis' | 'warnings'>;
  filtered: Filtered;
  anchored: Anchored;
  /** What the recall stage withheld as `suppressed` (stored, never posted), continued, and found dismissed. */
  recalled: Pick<Recalled, 'suppressed' | 'recall' | 'dismissed'>;
  validation: JoinedValidation | null;
};

export type Recorded = { result: RunResult; findings: NewFinding[]; degraded: boolean };

type Analysis = Parameters<Store['runs']['recordAnalysis']>[1];

/** Records the run's analysis and its findings in one transaction, while the job's lease holds. */
export async function recordAnalysis(target: RecordTarget, analysis: Analysis, findings: NewFinding[] = []) {
  await target.assertLease();
  const { runId, reviewKey, repo, prNumber, headSha } = target.run;
  const owner = { runId, reviewKey, repo, prNumber, headSha };
  await target.store.runs.recordAnalysis(owner, analysis, findings, target.store.findings);
}

/** An admission refusal (or a head that is no longer the PR's): stored on the run with its reason. */
export async function recordRefusal(target: RecordTarget, reason: string, detail: string): Promise<void> {
  await recordAnalysis(target, {
    analysisStatus: 'refused',
    verdict: null,
    confidence: null,
    result: { headSha: target.run.headSha, admission: { reason, detail } },
  });
}

/** An analysis without a usable part that is not published as degraded: stored as failed, with the error. */
export async function recordFailedAnalysis(
  target: RecordTarget,
  called: Called,
  input: ReviewInput,
  error: string,
): Promise<void> {
  await recordAnalysis(target, {
    analysisStatus: 'failed',
    verdict: null,
    confidence: null,
    result: { headSha: target.run.headSha, chunks: chunkSummary(input, called.primary), degraded: false },
    ...(called.shadow !== undefined ? { shadowReview: called.shadow } : {}),
    error,
  });
}

export function chunkSummary(input: ReviewInput, pass: PassResult): RunResult['chunks'] {
  return {
    total: Math.max(1, input.chunks.length),
    failed: pass.failed.size,
    errors: [...pass.failed].map(([chunk, error]) => ({ chunk, error })),
    splits: pass.splits,
  };
}

async function record(input: RecordInput): Promise<Recorded> {
  const { called, anchored } = input;
  const primary = called.primary;
  const output: ReviewOutput = { ...input.filtered.output, findings: anchored.findings };
  const warnings = warningsOf(input);
  const evidence = await evidenceOf(input, output.findings, warnings);
  const findings = await storedFindings(input);
  const usable = primary.outputs.length > 0;
  const degraded = primary.failed.size > 0 || !usable;
  // What is stored and handed back is checked against its schema (a defect here fails the run loudly).
  const result = runResultSchema.parse(resultOf(input, { output, warnings, findings, degraded, evidence }));
  await recordAnalysis(
    input,
    {
      analysisStatus: degraded ? 'degraded' : 'analysed',
      verdict: output.verdict,
      confidence: output.confidenceScore,
      result,
      ...(called.shadow !== undefined ? { shadowReview: called.shadow satisfies ShadowReview } : {}),
      error: usable ? null : `semantic analysis failed: ${[...primary.failed.values()][0] ?? ''}`,
    },
    findings,
  );
  return { result, findings, degraded };
}

/** The run's warnings: what gathering, planning, reading the answers and merging noted. */
function warningsOf({ gathered, plan, parsed, merged, providers }: RecordInput): string[] {
  const unread = gathered.memory.skippedIssues.filter((i) => i.reason.startsWith('could not be read'));
  const primary = providers.primary;
  const fellBack =
    primary instanceof FallbackProvider && primary.fellBack > 0
      ? [
          `model fallback: ${primary.fellBack} call(s) answered by ${primary.fallback.name}/${primary.fallback.model} after ${primary.primary.name}/${primary.primary.model} failed (the repository configuration's model.fallbackProvider)`,
        ]
      : [];
  return [
    ...gathered.instructions.notes.map((n) => `repository instructions: ${n}`),
    ...unread.map((i) => `linked issues: #${i.number} ${i.reason}`),
    ...plan.notes.map((n) => `surrounding code: ${n}`),
    ...parsed.warnings,
    ...merged.warnings,
    ...fellBack,
  ];
}

/** What a stored row is made of: an anchored finding of any stage. */
type StorableFinding = Parameters<typeof findingFingerprint>[0] & AnchoredFinding;

/** The findings as stored: fingerprinted, outside the diff or not, still open when an earlier run had them. */
async function storedFindings(input: RecordInput): Promise<NewFinding[]> {
  const { store, run } = input;
  const earlier = new Set(
    (await store.findings.listForPr(run.repo, run.prNumber))
      .filter((f) => f.runId !== run.runId)
      .map((f) => f.fingerprint),
  );
  const changedPaths = new Set(input.gathered.changed.map((f) => normaliseFindingPath(f.filename)));
  /** A finding as a row: its anchor, its fingerprint, whether it is outside the diff, and still open. */
  const row = (f: StorableFinding): NewFinding => {
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
  };
  const published = input.anchored.report.findings.map(row);
  // Withheld after verification: stored with the verifier's reason (their anchors checked as any), never posted.
  const { withheld } = input.verified;
  const checked = checkFindingAnchors(
    withheld.map((w) => w.finding),
    input.gathered.changed,
  ).findings;
  const held = checked.map((f, i): NewFinding => ({
    ...row(f),
    stillOpen: false,
    status: 'withheld',
    statusReason: withheldReason(withheld[i]!),
  }));
  // Withheld by memory: like findings reviewers dismissed (recall.stage.ts), never posted.
  const suppressed = input.recalled.suppressed.map(({ finding: f, reason }): NewFinding => ({
    ...row(f),
    status: 'suppressed',
    statusReason: reason,
  }));
  return [...published, ...held, ...suppressed];
}

type Built = {
  output: ReviewOutput;
  warnings: string[];
  findings: NewFinding[];
  degraded: boolean;
  evidence: RunResult['evidence'] | null;
};

/** The run's result (docs/review-engine.md, "The run's `result`"). */
function resultOf(input: RecordInput, built: Built): RunResult {
  const { plan, filtered, anchored, validation } = input;
  const { prior, changed } = input.gathered;
  const { accepted, rejected } = filtered.dispositions;
  const resolved = new Set(accepted.map((d) => d.fingerprint));
  const raised = new Set(built.findings.map((f) => f.fingerprint));
  return {
    headSha: input.run.headSha,
    provider: input.providers.primary.name,
    model: input.providers.primary.model,
    output: built.output,
    coverage: input.merged.coverage,
    warnings: built.warnings,
    admission: { notes: input.notes },
    priorFindings: {
      supplied: prior.length,
      resolved: accepted.map((d) => {
        const was = prior.find((p) => p.fingerprint === d.fingerprint);
        const { fingerprint, disposition, explanation } = d;
        return { fingerprint, disposition, explanation, title: was?.title ?? null, path: was?.path ?? null };
      }),
      rejected: rejected.map((r) => ({ fingerprint: r.disposition.fingerprint, reason: r.reason })),
      // Neither closed, nor raised again, nor dismissed on the pull request: the next review is given them.
      carriedOpen: prior.filter(
        (p) =>
          !resolved.has(p.fingerprint) &&
          !raised.has(p.fingerprint) &&
          !input.recalled.dismissed.has(p.fingerprint),
      ),
    },
    strictness: { level: input.policy.strictness, dropped: filtered.dropped.length },
    unreadableFindings: input.parsed.unreadable,
    chunks: chunkSummary(input.budgeted.input, input.called.primary),
    synthesis: input.merged.synthesis,
    instructions: { files: (input.budgeted.context.instructions ?? []).map((i) => i.path) },
    memory: memoryReport(input.gathered.memory, input.budgeted.context, input.parsed.removedContextIds),
    review: {
      kind: plan.review.kind,
      reason: plan.review.reason,
      sinceSha: plan.review.sinceSha,
      files: plan.review.kind === 'incremental' ? plan.review.files.length : changed.length,
    },
    baseRef: input.pr.baseRef,
    anchors: {
      kept: anchored.report.kept,
      removed: anchored.report.removed.length,
      suggestionsDropped: anchored.report.suggestionsDropped,
      problems: anchored.report.removed
        .slice(0, 50)
        .map((r) => ({ path: r.path, title: r.title, reason: r.reason })),
    },
    degraded: built.degraded,
    verification: input.verified.report,
    ...(input.called.samples ? { samples: input.called.samples } : {}),
    ...(recalledAnything(input.recalled.recall) ? { recall: input.recalled.recall } : {}),
    ...(validation ? { validation: { ...validation.report, seenByModel: validation.seenByModel } } : {}),
    ...(built.evidence ? { evidence: built.evidence } : {}),
  };
}

const recalledAnything = (r: Recalled['recall']) => r.continued.length + r.suppressed.length > 0;

/**
 * Evidence artifacts (review-engine 2.6): the validation's command outputs are stored and attached to the
 * findings that claim something was run, by fingerprint; null when the step is off. It never throws:
 * a failure is `evidence_artifacts_failed` in the warnings and the findings are kept as they were.
 */
async function evidenceOf(
  input: RecordInput,
  findings: ReviewOutput['findings'],
  warnings: string[],
): Promise<RunResult['evidence'] | null> {
  const settings = input.evidence;
  if (!settings?.enabled) return null;
  const commands = new Map(input.anchored.fromValidation.map((f) => [f.title, f.validationCommand]));
  const processed = await processEvidence({
    ...settings,
    runId: input.run.runId,
    outcome: input.validation?.outcome ?? null,
    findings: findings.map((f) => {
      const command = commands.get(f.title);
      return { ...f, ...(command !== undefined ? { validationCommand: command } : {}) };
    }),
    log: input.log,
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

export const recordStage: Stage<RecordInput, Recorded> = {
  name: 'record',
  run: record,
  counts: ({ result, findings, degraded }) => ({
    findings: findings.filter((f) => (f.status ?? 'published') === 'published').length,
    withheld: findings.filter((f) => f.status === 'withheld').length,
    suppressed: findings.filter((f) => f.status === 'suppressed').length,
    stillOpen: findings.filter((f) => f.stillOpen).length,
    verdict: result.output.verdict,
    coverageComplete: result.coverage.complete,
    degraded,
  }),
};
