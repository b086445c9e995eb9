import type { ReviewConfig } from '../config/index.js';
import type { ReviewChunk, ReviewInput } from './context.js';
import { normaliseFindingPath } from './fingerprint.js';
import { GITHUB_MAX_PR_FILES, type PullRequestFacts } from './gather.js';
import type { Gathered } from './gather.stage.js';
import { fallbackOutput, mergeOutputs, semanticCoverage } from './merge.js';
import { callModel, type ModelCallEnv } from './model-call.js';
import { defaultCompetitorComparison, type ReviewOutput } from './output.schema.js';
import type { Parsed } from './parse.stage.js';
import type { Plan } from './plan.stage.js';
import type { ModelProvider } from './providers/index.js';
import type { PriorFinding, RunResult, SemanticCoverage } from './run-result.js';
import type { RunScope, Stage } from './stage.js';
import {
  mergeFindings,
  parseSynthesis,
  SYNTHESIS_SYSTEM,
  synthesisJsonSchema,
  synthesisPrompt,
} from './synthesis.js';
import type { JoinedValidation } from './validate.js';

/**
 * Stage `merge`: the parts' candidates combined into one review output. A disposition of a prior finding
 * counts only from a part that holds that finding's file; one part's output is used as it is; several
 * are combined by one synthesis call (synthesis.ts), which also names the findings that are the same
 * issue seen twice, or, when it fails, by the deterministic merge (merge.ts), and the result says so.
 * No usable part (with `VERDICT_PUBLISH_ON_RUNNER_FAILURE`): the fallback output that says the analysis
 * failed. It also computes the coverage of the changed files and collects the review's missing
 * validations in the order the body lists them.
 */

export type MergeInput = {
  run: RunScope;
  pr: Pick<PullRequestFacts, 'title' | 'changedFiles'>;
  parsed: Pick<Parsed, 'outputs' | 'failed' | 'missing'>;
  /** The parts, the files not reviewed and clipped, and their missing-validation lines. */
  budgeted: { input: ReviewInput };
  gathered: Pick<Gathered, 'changed' | 'prior' | 'competitors'>;
  /** An incremental review: the coverage of the files it does not show. */
  plan: Pick<Plan, 'carried'>;
  validation: JoinedValidation | null;
  /** The synthesis call: the primary model, its timeout and the trace. */
  providers: { primary: ModelProvider };
  config: Pick<ReviewConfig, 'timeoutMs'>;
  env: ModelCallEnv;
};

export type Merged = {
  output: ReviewOutput;
  synthesis: RunResult['synthesis'];
  coverage: SemanticCoverage;
  /** Dispositions dropped for coming from a part without their file; a comparison without competitor. */
  warnings: string[];
  /** The missing validations so far: the output's, the budget's, the validation's, the parts'. */
  missing: string[];
};

const SYNTHESIS_SCHEMA = synthesisJsonSchema();

async function merge(input: MergeInput): Promise<Merged> {
  const { parsed, run, pr, gathered } = input;
  const parts = input.budgeted.input;
  const warnings: string[] = [];
  // Dispositions count only from a part that holds the prior finding's file, quoting that file.
  const partOutputs = parsed.outputs.map((o) =>
    dispositionsFromOwnFiles(o.output, parts.chunks[o.chunk] ?? null, gathered.prior, warnings, o.chunk),
  );
  const combined =
    partOutputs.length > 0
      ? await combineParts(input, partOutputs)
      : { output: fallbackOutput([...parsed.failed.values()][0] ?? 'no output'), synthesis: null };
  let output = combined.output;
  // A comparison needs something to compare with: without a competitor review it is the default object.
  if (gathered.competitors.length === 0 && output.competitorComparison.available) {
    output = { ...output, competitorComparison: defaultCompetitorComparison() };
    warnings.push('replaced `competitorComparison`: no competitor review was supplied');
  }
  const coverage = semanticCoverage(
    run.headSha,
    gathered.changed,
    parts,
    parsed.failed,
    pr.changedFiles,
    input.plan.carried,
  );
  if (combined.synthesis) {
    coverage.partsCombinedBy =
      combined.synthesis.status === 'synthesised' ? 'synthesis' : 'deterministic merge';
  }
  if (input.validation) coverage.validation = input.validation.coverage;
  const missing = [
    ...output.missingValidations,
    ...parts.missingValidations,
    ...(input.validation?.report.notRun ?? []),
  ];
  if (combined.synthesis?.status === 'failed') {
    missing.push(
      `The ${partOutputs.length} parts could not be combined by the model (${combined.synthesis.error}): the overview is part 1's and the rest is joined part by part.`,
    );
  }
  if (coverage.truncatedByGitHub) {
    missing.push(
      `GitHub lists at most ${GITHUB_MAX_PR_FILES} files of a pull request: ${pr.changedFiles - gathered.changed.length} changed file(s) were not seen.`,
    );
  }
  missing.push(...parsed.missing);
  return { output, synthesis: combined.synthesis, coverage, warnings, missing };
}

/**
 * A disposition of a prior finding counts only from a part that holds that finding's file, with its
 * evidence quoted from that file (the other parts never saw the code). The rest are dropped, said.
 */
export function dispositionsFromOwnFiles(
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
async function combineParts(
  input: Pick<MergeInput, 'run' | 'pr' | 'providers' | 'config' | 'env'>,
  outputs: ReviewOutput[],
): Promise<{ output: ReviewOutput; synthesis: RunResult['synthesis'] }> {
  if (outputs.length === 1) return { output: outputs[0]!, synthesis: null };
  const merged = mergeOutputs(outputs);
  const { env } = input;
  const facts = { repo: input.run.repo, number: input.run.prNumber, title: input.pr.title };
  const called = await callModel(env, {
    provider: input.providers.primary,
    spanName: 'synthesis',
    system: SYNTHESIS_SYSTEM,
    messages: [{ role: 'user', content: synthesisPrompt(facts, outputs) }],
    timeoutMs: input.config.timeoutMs,
    attributes: { parts: outputs.length },
    jsonSchema: SYNTHESIS_SCHEMA,
    schemaName: 'synthesis',
  });
  const parsed = called.ok
    ? called.truncated
      ? ({ ok: false, error: 'the answer was cut at the output token limit' } as const)
      : parseSynthesis(called.text)
    : ({ ok: false, error: called.error } as const);
  if (!parsed.ok) return { output: merged, synthesis: { status: 'failed', merged: 0, error: parsed.error } };
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

export const mergeStage: Stage<MergeInput, Merged> = {
  name: 'merge',
  run: merge,
  counts: (m, input) => ({
    parts: input.parsed.outputs.length,
    findings: m.output.findings.length,
    combinedBy: m.synthesis === null ? null : m.coverage.partsCombinedBy,
    mergedDuplicates: m.synthesis?.merged ?? 0,
    dispositions: m.output.priorFindingDispositions.length,
    coverageComplete: m.coverage.complete,
  }),
};
