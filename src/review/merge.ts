import type { ChangedFile, ReviewInput } from './context.js';
import { findingFingerprint } from './fingerprint.js';
import { defaultCompetitorComparison, type ReviewOutput } from './output.schema.js';
import type { FileCoverage, SemanticCoverage } from './run-result.js';

/** The items in order, each key once (the first wins). */
function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Non-blank strings, each once (compared trimmed). */
function unique(items: string[]): string[] {
  return uniqueBy(
    items.filter((item) => item.trim() !== ''),
    (item) => item.trim(),
  );
}

/**
 * Merges the outputs of the chunks of one review into one review output. One output is returned as is.
 * Several: texts joined part by part, `needs-attention` when any part says so, the lowest confidence,
 * findings and dispositions de-duplicated by fingerprint (the first wins), lists de-duplicated, the first
 * non-empty sequence diagram and the first available competitor comparison.
 */
export function mergeOutputs(outputs: ReviewOutput[]): ReviewOutput {
  if (outputs.length === 0) throw new Error('mergeOutputs needs at least one output');
  if (outputs.length === 1) return outputs[0]!;
  const n = outputs.length;
  const part = (text: string, i: number) => `Part ${i + 1} of ${n}: ${text.trim()}`;
  const attention = outputs.filter((o) => o.verdict === 'needs-attention');
  return {
    overview: outputs[0]!.overview,
    summary: outputs.map((o, i) => part(o.summary, i)).join('\n\n'),
    verdict: attention.length > 0 ? 'needs-attention' : 'clear',
    confidenceScore: Math.min(...outputs.map((o) => o.confidenceScore)),
    bulletHighlights: unique(outputs.flatMap((o) => o.bulletHighlights)),
    reasoning: outputs
      .map((o, i) => (o.reasoning.trim() === '' ? '' : part(o.reasoning, i)))
      .filter(Boolean)
      .join('\n\n'),
    mergeVerdict: (attention[0] ?? outputs[0]!).mergeVerdict,
    importantFiles: uniqueBy(
      outputs.flatMap((o) => o.importantFiles),
      (f) => f.path,
    ),
    findings: uniqueBy(
      outputs.flatMap((o) => o.findings),
      findingFingerprint,
    ),
    priorFindingDispositions: uniqueBy(
      outputs.flatMap((o) => o.priorFindingDispositions),
      (d) => d.fingerprint,
    ),
    missingValidations: unique(outputs.flatMap((o) => o.missingValidations)),
    crossRepoImpact: unique(outputs.flatMap((o) => o.crossRepoImpact)),
    sequenceDiagram: outputs.find((o) => o.sequenceDiagram.trim() !== '')?.sequenceDiagram ?? '',
    competitorComparison:
      outputs.find((o) => o.competitorComparison.available)?.competitorComparison ??
      outputs[0]!.competitorComparison,
  };
}

/**
 * The degraded result of `VERDICT_PUBLISH_ON_RUNNER_FAILURE=1` when no model answer could be used: it says
 * so plainly, claims nothing about the code, and carries the lowest confidence.
 */
export function fallbackOutput(error: string): ReviewOutput {
  return {
    overview: 'Verdict could not analyse this pull request: the model gave no usable review.',
    summary: 'The semantic analysis failed, so nothing is known about the correctness of this change.',
    verdict: 'needs-attention',
    confidenceScore: 1,
    bulletHighlights: [],
    reasoning: error,
    mergeVerdict: 'Review it by hand: the automated analysis did not complete.',
    importantFiles: [],
    findings: [],
    priorFindingDispositions: [],
    missingValidations: [`Semantic analysis failed: ${error}`],
    crossRepoImpact: [],
    sequenceDiagram: '',
    competitorComparison: defaultCompetitorComparison(),
  };
}

/**
 * Coverage from the review input and which chunks failed. A file in a failed chunk is `failed`; a file
 * the budget left out (or that has no textual diff) is `skipped`; every other listed file is `analysed`.
 */
export function semanticCoverage(
  headSha: string,
  files: readonly ChangedFile[],
  input: ReviewInput,
  failedChunks: ReadonlyMap<number, string>,
  changedFilesReported: number,
  /** An incremental review: the coverage of the files it does not show, from the review that did. */
  carried?: ReadonlyMap<string, FileCoverage>,
): SemanticCoverage {
  const byPath = new Map<string, FileCoverage>();
  for (const chunk of input.chunks) {
    const failure = failedChunks.get(chunk.index);
    for (const f of chunk.files) {
      byPath.set(f.path, {
        path: f.path,
        status: failure === undefined ? 'analysed' : 'failed',
        reason:
          failure !== undefined
            ? failure
            : f.clipped
              ? `diff clipped: ${f.omittedLines} line(s) not shown to the model`
              : null,
        partial: failure === undefined && f.clipped,
      });
    }
  }
  for (const s of input.notReviewed) {
    byPath.set(s.path, { path: s.path, status: 'skipped', reason: s.reason, partial: false });
  }
  const out: FileCoverage[] = files.map(
    (f) =>
      byPath.get(f.filename) ??
      carried?.get(f.filename) ?? {
        path: f.filename,
        status: 'skipped',
        reason: carried ? 'not reviewed at an earlier head' : 'not placed in any review part',
        partial: false,
      },
  );
  const count = (s: FileCoverage['status']) => out.filter((f) => f.status === s).length;
  const partial = out.filter((f) => f.partial).length;
  const truncatedByGitHub = changedFilesReported > files.length;
  const skipped = count('skipped');
  const failed = count('failed');
  return {
    headSha,
    complete: skipped === 0 && failed === 0 && partial === 0 && !truncatedByGitHub,
    totalFiles: Math.max(files.length, changedFilesReported),
    analysed: count('analysed'),
    partial,
    skipped,
    failed,
    truncatedByGitHub,
    files: out,
  };
}
