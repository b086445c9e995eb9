import type { FindingStatus } from './params.js';
import type { ClaimEvidence, ResolutionClaim } from '../store/report-source.js';

/**
 * The status of one finding (operator-api 2.7, 3 "Report finding status values"), from the analysed
 * reviews of its pull request in order. A finding is identified across reviews by its fingerprint.
 *
 * - `open`: the latest analysed review of the pull request raised it (again).
 * - `addressed`: a review after the last one that raised it recorded an accepted closure claim for it
 *   (`resolved`, `false_positive`, `no_longer_applicable`) together with evidence quoted from that
 *   review's head. The engine accepts a claim only when its quote occurs in the file at the head
 *   (`src/review/dispositions.ts`); a claim recorded without evidence does not count.
 * - `not_reobserved`: a later analysed review did not raise it and recorded no such claim. Disappearing
 *   is not a fix: the code may be unchanged, the file may not have been analysed, the model may have
 *   missed it.
 * - `unknown`: the data cannot tell: the finding has no fingerprint to follow, or the run that raised it
 *   is not on record as an analysed review.
 */

/** What the status rules need of one run of the pull request. */
export type StatusRun = {
  id: string;
  createdAt: number;
  analysed: boolean;
  claims: ResolutionClaim[] | null;
};

export type Resolution = {
  runId: string;
  at: number;
  disposition: string;
  explanation: string | null;
  evidence: ClaimEvidence[];
};

export type StatusReason =
  | 'raised_by_latest_review'
  | 'closure_claim_with_evidence'
  | 'absent_from_later_review'
  | 'no_fingerprint'
  | 'raising_run_not_analysed';

export type StatusVerdict = { status: FindingStatus; reason: StatusReason; resolution: Resolution | null };

/**
 * @param runs every run of the pull request, oldest first (ties broken by id)
 * @param raisedBy the ids of the runs whose findings carry this fingerprint
 */
export function findingStatus(
  fingerprint: string,
  runs: readonly StatusRun[],
  raisedBy: Pick<ReadonlySet<string>, 'has'>,
): StatusVerdict {
  if (fingerprint.trim() === '') return NO_FINGERPRINT;
  const analysed = runs.every((r) => r.analysed) ? runs : runs.filter((r) => r.analysed);
  let lastRaise = -1;
  for (let i = 0; i < analysed.length; i++) if (raisedBy.has(analysed[i]!.id)) lastRaise = i;
  if (lastRaise < 0) return NOT_ANALYSED;
  if (lastRaise === analysed.length - 1) return OPEN;
  for (let i = lastRaise + 1; i < analysed.length; i++) {
    const run = analysed[i]!;
    const claim = run.claims?.find((c) => c.fingerprint === fingerprint && c.evidence.length > 0);
    if (claim) {
      return {
        status: 'addressed',
        reason: 'closure_claim_with_evidence',
        resolution: {
          runId: run.id,
          at: run.createdAt,
          disposition: claim.disposition,
          explanation: claim.explanation,
          evidence: claim.evidence,
        },
      };
    }
  }
  return NOT_REOBSERVED;
}

// The verdicts without a resolution are shared (a report computes tens of thousands of them).
const verdict = (status: FindingStatus, reason: StatusReason): StatusVerdict =>
  Object.freeze({ status, reason, resolution: null });
const NO_FINGERPRINT = verdict('unknown', 'no_fingerprint');
const NOT_ANALYSED = verdict('unknown', 'raising_run_not_analysed');
const OPEN = verdict('open', 'raised_by_latest_review');
const NOT_REOBSERVED = verdict('not_reobserved', 'absent_from_later_review');
