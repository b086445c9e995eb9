import type { Admitted } from './admit-run.js';
import type { Anchored } from './anchor.stage.js';
import type { Budgeted } from './budget.stage.js';
import type { Filtered } from './filter.stage.js';
import type { Gathered } from './gather.stage.js';
import type { Merged } from './merge.stage.js';
import type { Parsed } from './parse.stage.js';
import type { Plan } from './plan.stage.js';
import type { Recorded } from './record.stage.js';
import type { SpanInput } from './stage.js';

/**
 * The two summary spans of a review, older than the stage spans and kept beside them (docs, dashboards
 * and tests read their attributes): `gather`, from reading the pull request to the parts, and
 * `post-process`, from the merge to the record.
 */

/** The `gather` span: what the review read, what it shows, and the budget it packed into parts. */
export function gatherSpan(
  admitted: Pick<Admitted, 'pr' | 'gatherStart'>,
  stages: { gathered: Gathered; plan: Plan; budgeted: Budgeted },
  endedAt: number,
): SpanInput {
  const { gathered, plan, budgeted } = stages;
  const { input, window } = budgeted;
  return {
    kind: 'stage',
    name: 'gather',
    status: 'ok',
    startedAt: admitted.gatherStart,
    endedAt,
    attributes: {
      files: gathered.changed.length,
      changedFilesReported: admitted.pr.changedFiles,
      chunks: input.chunks.length,
      notReviewed: input.notReviewed.length,
      clipped: input.clipped.length,
      priorFindings: gathered.prior.length,
      memoryItems: budgeted.context.memory.length,
      linkedIssues: budgeted.context.linkedIssues?.length ?? 0,
      competitorReviews: gathered.competitors.length,
      instructionFiles: budgeted.context.instructions?.length ?? 0,
      surroundingFiles: plan.withContext,
      review: plan.review.kind,
      reviewReason: plan.review.reason,
      sinceSha: plan.review.sinceSha,
      contextWindow: window.contextTokens,
      contextWindowSource: window.source,
      inputBudget: budgeted.inputBudget,
      contextTokens: budgeted.contextTokens,
      chunkTokens: budgeted.chunkTokens,
    },
  };
}

/** The `post-process` span: what the review kept, dropped, anchored and recorded. */
export function postProcessSpan(
  stages: { parsed: Parsed; merged: Merged; filtered: Filtered; anchored: Anchored; recorded: Recorded },
  startedAt: number,
  endedAt: number,
): SpanInput {
  const { parsed, merged, filtered, anchored, recorded } = stages;
  return {
    kind: 'stage',
    name: 'post-process',
    status: 'ok',
    startedAt,
    endedAt,
    attributes: {
      findings: recorded.findings.length,
      stillOpen: recorded.findings.filter((f) => f.stillOpen).length,
      droppedByStrictness: filtered.dropped.length,
      unreadableFindings: parsed.unreadable,
      anchorsKept: anchored.report.kept,
      anchorsRemoved: anchored.report.removed.length,
      suggestionsDropped: anchored.report.suggestionsDropped,
      dispositionsAccepted: filtered.dispositions.accepted.length,
      dispositionsRejected: filtered.dispositions.rejected.length,
      coverageComplete: merged.coverage.complete,
      degraded: recorded.degraded,
    },
  };
}
