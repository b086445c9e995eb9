import type { SemanticCoverage } from '../../src/review/run-result.js';
import { defaultCompetitorComparison, type ReviewOutput } from '../../src/review/output.schema.js';

/** A review output: a clear verdict at confidence 5, no findings, nothing missing; `over` sets the rest. */
export function reviewOutput(over: Partial<ReviewOutput> = {}): ReviewOutput {
  return {
    overview: 'o',
    summary: 's',
    verdict: 'clear',
    confidenceScore: 5,
    bulletHighlights: [],
    reasoning: '',
    mergeVerdict: 'Safe.',
    importantFiles: [],
    findings: [],
    priorFindingDispositions: [],
    missingValidations: [],
    crossRepoImpact: [],
    sequenceDiagram: '',
    competitorComparison: defaultCompetitorComparison(),
    ...over,
  };
}

/** Complete semantic coverage of one analysed file, `src/a.ts`, at head `a…a`. */
export function fullCoverage(over: Partial<SemanticCoverage> = {}): SemanticCoverage {
  return {
    headSha: 'a'.repeat(40),
    complete: true,
    totalFiles: 1,
    analysed: 1,
    partial: 0,
    skipped: 0,
    failed: 0,
    truncatedByGitHub: false,
    files: [{ path: 'src/a.ts', status: 'analysed', reason: null, partial: false }],
    ...over,
  };
}
