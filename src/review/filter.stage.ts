import {
  applyConfidenceCap,
  reviewDispositions,
  type DispositionReview,
  type FileAtHead,
} from './dispositions.js';
import type { Finding, ReviewOutput } from './output.schema.js';
import type { PriorFinding } from './run-result.js';
import type { Merged } from './merge.stage.js';
import type { RunScope, Stage } from './stage.js';
import { applyStrictness, type Strictness } from './strictness.js';

/**
 * Stage `filter`: what the review keeps of the merged output. Dispositions of prior findings hold only
 * with evidence quoted from the current head (dispositions.ts); a claim that does not hold leaves the
 * concern open, says so in the missing validations and caps the confidence at 3. Then the strictness
 * filter of the policy (strictness.ts). The missing validations are de-duplicated here, in order.
 */

export type FilterInput = {
  run: Pick<RunScope, 'headSha'>;
  /** The merged output and the missing validations so far, in order. */
  merged: Pick<Merged, 'output' | 'missing'>;
  gathered: { prior: PriorFinding[]; fileAtHead: FileAtHead };
  policy: { strictness: Strictness };
};

export type Filtered = {
  /** The output with its accepted dispositions, missing validations and capped confidence; its findings the kept ones. */
  output: ReviewOutput;
  /** Findings the strictness filter dropped. */
  dropped: Finding[];
  dispositions: DispositionReview;
};

async function filter(input: FilterInput): Promise<Filtered> {
  const { output, missing } = input.merged;
  const { prior, fileAtHead } = input.gathered;
  // Dispositions of prior findings hold only with evidence quoted from the current head.
  const dispositions = await reviewDispositions(output.priorFindingDispositions, {
    headSha: input.run.headSha,
    priorFingerprints: new Set(prior.map((p) => p.fingerprint)),
    fileAtHead,
  });
  const strict = applyStrictness(output.findings, input.policy.strictness);
  return {
    output: {
      ...output,
      findings: strict.kept,
      priorFindingDispositions: dispositions.accepted,
      missingValidations: [...new Set([...missing, ...dispositions.missingValidations])],
      confidenceScore: applyConfidenceCap(output.confidenceScore, dispositions.confidenceCap),
    },
    dropped: strict.dropped,
    dispositions,
  };
}

export const filterStage: Stage<FilterInput, Filtered> = {
  name: 'filter',
  run: filter,
  counts: (f, input) => ({
    strictness: input.policy.strictness,
    kept: f.output.findings.length,
    droppedByStrictness: f.dropped.length,
    dispositionsAccepted: f.dispositions.accepted.length,
    dispositionsRejected: f.dispositions.rejected.length,
    confidenceCapped: f.dispositions.confidenceCap !== null,
  }),
};
