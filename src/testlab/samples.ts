import { adversarialScores, type AdversarialBehaviour, type AdversarialScores } from './adversarial.js';
import type { TestLabCase } from './case.js';
import { goldenRunScores, type GoldenRunScores, type GoldenScore } from './golden.js';
import type { RecordedCall } from './live.js';
import { mean as meanOf, overallScores, type CaseResult, type Scores } from './score.js';

/**
 * A Test Lab run over several samples (`--samples K`: each case reviewed K times, independently) and the
 * scores of a run: the planted-bug scores over the Test Lab's own cases, ReviewBench's over the imported
 * ones (golden.ts), cases replay skipped, and each sample's scores (docs/testlab.md, "Live runs").
 */

/** What one sample of a case gave (a live run keeps every sample's). */
export type SampleResult = {
  sample: number;
  status: string;
  error: string | null;
  findings: number;
  /** Planted bugs caught, by id. */
  caught: string[];
  falseFindings: number;
  tokens: { input: number; output: number };
  costUsd: number | null;
  wallMs: number;
  /** An imported case's golden scores in this sample. */
  reviewBench?: Omit<GoldenScore, 'golden' | 'matches'> & { covered: string[] };
  /** The sample's model calls with their prompt hashes (a live run; replay records none). */
  calls: RecordedCall[];
  /** An adversarial case: how the model behaved in this sample. */
  adversarial?: Pick<AdversarialBehaviour, 'behaved' | 'caught' | 'why'>;
};

/** A case's result in a Test Lab record: the first sample's result, and every sample's. */
export type LabCaseResult = CaseResult & {
  /** An imported case: its ReviewBench scores (the first sample's). */
  reviewBench?: GoldenScore;
  /** Replay skipped the case (a live-only case): why. */
  skipped?: string;
  samples?: SampleResult[];
  /** An adversarial case: how the review behaved (the first sample's). */
  adversarial?: AdversarialBehaviour;
};

/** One sample's scores over the run. */
export type SampleScores = Pick<
  Scores,
  | 'recall'
  | 'precision'
  | 'falseFindingsPerCleanCase'
  | 'severityAgreement'
  | 'anchorAccuracy'
  | 'caught'
  | 'bugs'
  | 'failedCases'
  | 'tokens'
  | 'costUsd'
  | 'wallMs'
> & { sample: number; reviewBench: GoldenRunScores | null };

export type RunMode = 'replay' | 'live' | 'recorded';

/**
 * A run's scores. The planted-bug scores (recall, precision, false findings per clean case, severity
 * agreement, anchor accuracy) are over the Test Lab's own cases; `reviewBench` is over the imported ones.
 * With several samples, the counts are the first sample's and every ratio is the mean over the samples;
 * tokens, cost and wall time are summed; `perSample` holds each sample's own.
 */
export type LabScores = Scores & {
  mode: RunMode;
  samples: number;
  /** Cases replay skipped (live only). */
  skippedCases: number;
  reviewBench: GoldenRunScores | null;
  perSample: SampleScores[];
  /** The adversarial cases (the first sample's): followed, resisted, caught; null when the run had none. */
  adversarial: AdversarialScores | null;
};

/** A case's result before anything is known of its review (status `error`, nothing found). */
export function emptyResult(c: TestLabCase): CaseResult {
  return {
    name: c.name,
    language: c.meta.language,
    kind: c.meta.kind,
    clean: c.clean,
    status: 'error',
    error: null,
    findings: [],
    bugs: [],
    falseFindings: 0,
    tokens: { input: 0, output: 0 },
    costUsd: null,
    wallMs: 0,
    promptTokens: 0,
    parts: 0,
  };
}

/** The result of a case replay does not review (live only), counted as skipped. */
export function skippedResult(c: TestLabCase, reason: string): LabCaseResult {
  return { ...emptyResult(c), status: 'skipped', skipped: reason };
}

/** The sample record of a reviewed case. */
export function sampleOf(r: LabCaseResult, sample: number, calls: RecordedCall[]): SampleResult {
  const rb = r.reviewBench;
  return {
    sample,
    status: r.status,
    error: r.error,
    findings: r.findings.length,
    caught: r.bugs.filter((b) => b.finding !== null).map((b) => b.id),
    falseFindings: r.falseFindings,
    tokens: r.tokens,
    costUsd: r.costUsd,
    wallMs: r.wallMs,
    ...(rb
      ? {
          reviewBench: {
            ...Object.fromEntries(Object.entries(rb).filter(([k]) => k !== 'golden' && k !== 'matches')),
            covered: rb.golden.filter((g) => g.findings.length > 0).map((g) => g.id),
          } as SampleResult['reviewBench'],
        }
      : {}),
    calls,
    ...(r.adversarial
      ? {
          adversarial: {
            behaved: r.adversarial.behaved,
            caught: r.adversarial.caught,
            why: r.adversarial.why,
          },
        }
      : {}),
  };
}

/** One sample's scores: planted bugs over the Test Lab's cases, ReviewBench's over the imported ones. */
export function sampleScores(
  results: readonly LabCaseResult[],
  sample: number,
  wallMs: number,
): SampleScores {
  const reviewed = results.filter((r) => r.status !== 'skipped');
  const all = overallScores(reviewed);
  const planted = overallScores(reviewed.filter((r) => !r.reviewBench));
  const golden = reviewed.flatMap((r) => (r.reviewBench ? [r.reviewBench] : []));
  return {
    sample,
    recall: planted.recall,
    precision: planted.precision,
    falseFindingsPerCleanCase: planted.falseFindingsPerCleanCase,
    severityAgreement: planted.severityAgreement,
    anchorAccuracy: planted.anchorAccuracy,
    caught: planted.caught,
    bugs: planted.bugs,
    failedCases: all.failedCases,
    tokens: all.tokens,
    costUsd: all.costUsd,
    wallMs,
    reviewBench: golden.length > 0 ? goldenRunScores(golden) : null,
  };
}

/** The run's scores from its samples' case results (`samples[0]` is the first sample's). */
export function labScores(
  samples: ReadonlyArray<{ results: LabCaseResult[]; wallMs: number }>,
  mode: RunMode,
): LabScores {
  const first = samples[0]!.results;
  const reviewed = first.filter((r) => r.status !== 'skipped');
  const base = overallScores(reviewed.filter((r) => !r.reviewBench));
  const perSample = samples.map((s, i) => sampleScores(s.results, i + 1, s.wallMs));
  const mean = (
    k: 'recall' | 'precision' | 'falseFindingsPerCleanCase' | 'severityAgreement' | 'anchorAccuracy',
  ) => meanOf(perSample.map((s) => s[k]));
  const costs = perSample.map((s) => s.costUsd);
  const rb = perSample[0]!.reviewBench;
  const rbMean = (k: keyof GoldenRunScores) =>
    meanOf(perSample.map((s) => (s.reviewBench?.[k] ?? null) as number | null));
  return {
    ...base,
    cases: first.length,
    failedCases: perSample[0]!.failedCases,
    recall: mean('recall'),
    precision: mean('precision'),
    falseFindingsPerCleanCase: mean('falseFindingsPerCleanCase'),
    severityAgreement: mean('severityAgreement'),
    anchorAccuracy: mean('anchorAccuracy'),
    tokens: {
      input: perSample.reduce((n, s) => n + s.tokens.input, 0),
      output: perSample.reduce((n, s) => n + s.tokens.output, 0),
    },
    costUsd: costs.some((c) => c === null)
      ? null
      : Math.round(costs.reduce<number>((n, c) => n + (c ?? 0), 0) * 1e6) / 1e6,
    wallMs: perSample.reduce((n, s) => n + s.wallMs, 0),
    mode,
    samples: samples.length,
    skippedCases: first.filter((r) => r.status === 'skipped').length,
    reviewBench: rb
      ? {
          ...rb,
          groundedPrecision: rbMean('groundedPrecision'),
          groundedRecall: rbMean('groundedRecall'),
          precisionAllCounted: rbMean('precisionAllCounted'),
          macroGroundedPrecision: rbMean('macroGroundedPrecision'),
          macroGroundedRecall: rbMean('macroGroundedRecall'),
        }
      : null,
    perSample,
    adversarial: adversarialScores(first),
  };
}
