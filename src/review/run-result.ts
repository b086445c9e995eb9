import { z } from 'zod';
import { validationReportSchema } from '../validation/report.js';
import { reviewOutputSchema } from './output.schema.js';
import { isPlainObject } from './parse-json.js';

/**
 * What the engine returns and stores as a run's `result` (review-engine 2.8): the analysis. It is a zod
 * schema so that the engine checks what it hands over and publication reads a stored result through the
 * same definition (a result that does not parse is not an analysis).
 */

const evidenceArtifactSchema = z.object({
  id: z.string(),
  key: z.string(),
  url: z.string().nullable(),
  kind: z.enum(['command_output']),
});

export const fileCoverageSchema = z.object({
  path: z.string(),
  status: z.enum(['analysed', 'skipped', 'failed']),
  /** Why a file was skipped or failed; for an analysed file, set when its diff was clipped. */
  reason: z.string().nullable(),
  /** Analysed in part: its diff was clipped to fit the budget. */
  partial: z.boolean(),
});

/** Semantic coverage of one run: what was analysed at which head. */
export const semanticCoverageSchema = z.object({
  headSha: z.string(),
  /** Every changed file analysed in full: none skipped, failed or clipped. */
  complete: z.boolean(),
  totalFiles: z.number().int(),
  analysed: z.number().int(),
  partial: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
  /** GitHub lists at most 3,000 files: true when the PR has more than were listed. */
  truncatedByGitHub: z.boolean(),
  /**
   * A review in several parts: how they were combined, by the synthesis call or, when it failed, by the
   * deterministic merge (the overview is then part 1's). Absent with one part.
   */
  partsCombinedBy: z.enum(['synthesis', 'deterministic merge']).optional(),
  files: z.array(fileCoverageSchema),
  /** Repo-native validation beside the semantic review (absent: validation is off). */
  validation: z
    .object({
      status: z.string(),
      executor: z.string().nullable(),
      ran: z.number().int(),
      passed: z.number().int(),
      failed: z.number().int(),
      notRun: z.number().int(),
    })
    .optional(),
});

/** A finding of an earlier review of the same pull request, as the next review is given it. */
export const priorFindingSchema = z.object({
  priorReviewKey: z.string(),
  fingerprint: z.string(),
  severity: z.string(),
  category: z.string(),
  path: z.string().nullable(),
  /** Its anchor when it had one (runs recorded before anchors existed have none). */
  line: z.number().int().nullable().optional(),
  title: z.string(),
  headSha: z.string().nullable(),
});

/** Verification of the findings (NAMES.md; verify.stage.ts): what it did, and each candidate's fate. */
export const verificationReportSchema = z.object({
  status: z.enum(['off', 'none', 'verified', 'partial', 'failed']),
  reason: z.string().nullable(),
  provider: z.string(),
  model: z.string(),
  threshold: z.number().int(),
  candidates: z.number().int(),
  published: z.number().int(),
  withheld: z.number().int(),
  unverified: z.number().int(),
  calls: z.number().int(),
  failedCalls: z.number().int(),
  errors: z.array(z.string()),
  results: z.array(
    z.object({
      id: z.string(),
      severity: z.string(),
      path: z.string(),
      /** The candidate's anchor where it holds on the diff, else null. */
      line: z.number().int().nullable(),
      title: z.string(),
      outcome: z.enum(['published', 'withheld', 'unverified']),
      verdict: z.enum(['confirmed', 'refuted', 'uncertain']).nullable(),
      score: z.number().int().nullable(),
      reason: z.string(),
    }),
  ),
});

/** Agreement across samples (`review.samples`; samples.ts): how many passes, and what they agreed on. */
export const samplesReportSchema = z.object({
  /** Independent review passes asked for. */
  count: z.number().int(),
  /** Passes a finding had to recur in (half of those that answered its part, rounded up). */
  required: z.number().int(),
  /** Distinct findings over all passes, kept (recurring often enough) and dropped. */
  candidates: z.number().int(),
  kept: z.number().int(),
  dropped: z.number().int(),
  /** The kept findings, each with the number of passes that raised it. */
  agreement: z.array(z.object({ path: z.string(), title: z.string(), samples: z.number().int() })),
});

/** What the review recalled of earlier reviews and feedback (recall.stage.ts). */
export const recallReportSchema = z.object({
  continued: z.array(
    z.object({
      /** The prior finding's fingerprint, which the new finding took. */
      fingerprint: z.string(),
      /** The model's title this time. */
      title: z.string(),
      priorTitle: z.string(),
      score: z.number(),
    }),
  ),
  suppressed: z.array(
    z.object({
      fingerprint: z.string(),
      severity: z.string(),
      title: z.string(),
      path: z.string().nullable(),
      line: z.number().int().nullable(),
      /** `cluster`: like a suppressing cluster; `dismissed`: like a finding dismissed on the PR. */
      reason: z.enum(['cluster', 'dismissed']),
      clusterId: z.string().nullable(),
      /** The title of the cluster's exemplar or of the dismissed finding. */
      like: z.string(),
    }),
  ),
});

/**
 * The memory a review was given (src/review/memory.ts; docs/memory.md "What a review is given"): the
 * contexts by id, the knowledge documents by path and the linked issues by number, as the model got them;
 * what matched but was left out by the caps and budgets, per kind; how many were cut short; the numbers
 * the body references that were not given (pull requests, missing issues, failed reads); and the cited
 * ids removed from findings because they were not given.
 */
export const memoryReportSchema = z.object({
  contexts: z.array(z.string()),
  knowledge: z.array(z.string()),
  linkedIssues: z.array(z.number().int()),
  leftOut: z.object({
    contexts: z.number().int(),
    knowledge: z.number().int(),
    linkedIssues: z.number().int(),
  }),
  clipped: z.number().int(),
  skippedIssues: z.array(z.object({ number: z.number().int(), reason: z.string() })),
  removedIds: z.number().int(),
});

export const runResultSchema = z.object({
  headSha: z.string(),
  provider: z.string(),
  model: z.string(),
  output: reviewOutputSchema,
  coverage: semanticCoverageSchema,
  warnings: z.array(z.string()),
  admission: z.object({ notes: z.array(z.string()) }),
  priorFindings: z.object({
    supplied: z.number().int(),
    resolved: z.array(
      z.object({
        fingerprint: z.string(),
        disposition: z.string(),
        explanation: z.string(),
        title: z.string().nullable().optional(),
        path: z.string().nullable().optional(),
      }),
    ),
    rejected: z.array(z.object({ fingerprint: z.string(), reason: z.string() })),
    /** Prior findings neither disposed of with evidence nor raised again: the next review is given them. */
    carriedOpen: z.array(priorFindingSchema),
  }),
  strictness: z.object({ level: z.string(), dropped: z.number().int() }),
  /** Findings the model gave that could not be read even after the repair attempt (counted, said). */
  unreadableFindings: z.number().int(),
  chunks: z.object({
    total: z.number().int(),
    failed: z.number().int(),
    errors: z.array(z.object({ chunk: z.number().int(), error: z.string() })),
    /** Parts split in two because an answer was cut at the output token limit. */
    splits: z.number().int().optional(),
  }),
  /**
   * A review in several parts: how they were combined (the synthesis call, or the deterministic merge
   * when it failed), and how many findings were the same issue seen twice. Null with one part.
   */
  synthesis: z
    .object({
      status: z.enum(['synthesised', 'failed']),
      merged: z.number().int(),
      error: z.string().nullable(),
    })
    .nullable(),
  /** The repository instruction files the prompt quoted (from the base branch). */
  instructions: z.object({ files: z.array(z.string()) }).optional(),
  /** The memory the model was given; absent on runs recorded before it existed. */
  memory: memoryReportSchema.optional(),
  /** Full or incremental (NAMES.md), why, and since which reviewed head. */
  review: z.object({
    kind: z.enum(['full', 'incremental']),
    reason: z.string(),
    sinceSha: z.string().nullable(),
    files: z.number().int(),
  }),
  /** The base branch reviewed against (a changed base gives the next run a full review). */
  baseRef: z.string(),
  /** Line anchors checked against the diff: kept, removed (the findings stay), suggestions dropped. */
  anchors: z.object({
    kept: z.number().int(),
    removed: z.number().int(),
    suggestionsDropped: z.number().int(),
    problems: z.array(z.object({ path: z.string(), title: z.string(), reason: z.string() })),
  }),
  degraded: z.boolean(),
  /** Verification of the findings; absent on runs recorded before it existed. */
  verification: verificationReportSchema.optional(),
  /** Agreement across samples; absent with one sample (the default). */
  samples: samplesReportSchema.optional(),
  /**
   * What the review recalled (recall.stage.ts; docs/memory.md): findings that continue a prior finding in
   * other words (they took its title, category and fingerprint), and findings withheld as `suppressed`
   * because reviewers dismissed similar ones. Absent on runs recorded before it existed.
   */
  recall: recallReportSchema.optional(),
  /**
   * The validation run beside the review (docs/validation.md), with `seenByModel`: whether its results
   * arrived in time to be the model's evidence. Absent when validation is off.
   */
  validation: validationReportSchema.extend({ seenByModel: z.boolean() }).optional(),
  /**
   * Evidence artifacts (review-engine 2.6; docs/evidence.md): the stored command outputs, and for each
   * finding (by fingerprint) that claims something was run, the artifacts backing it and, with
   * VERDICT_EVIDENCE_REQUIRE_ARTIFACTS, `verified`/`unverified` and why. Absent when the step is off.
   */
  evidence: z
    .object({
      artifacts: z.array(evidenceArtifactSchema),
      failed: z.string().nullable(),
      findings: z.array(
        z.object({
          fingerprint: z.string(),
          artifacts: z.array(evidenceArtifactSchema),
          status: z.enum(['verified', 'unverified']).nullable(),
          downgradedReason: z.string().nullable(),
        }),
      ),
    })
    .optional(),
});

export type FileCoverage = z.infer<typeof fileCoverageSchema>;
export type SemanticCoverage = z.infer<typeof semanticCoverageSchema>;
export type PriorFinding = z.infer<typeof priorFindingSchema>;
export type RunResult = z.infer<typeof runResultSchema>;
export type VerificationReportRecord = z.infer<typeof verificationReportSchema>;
export type SamplesReport = z.infer<typeof samplesReportSchema>;
export type RecallReport = z.infer<typeof recallReportSchema>;
export type MemoryReport = z.infer<typeof memoryReportSchema>;

/** What a result stored before a part existed reads as in place of it. */
const OLDER_RESULT_DEFAULTS: Partial<RunResult> = {
  warnings: [],
  admission: { notes: [] },
  priorFindings: { supplied: 0, resolved: [], rejected: [], carriedOpen: [] },
  unreadableFindings: 0,
  synthesis: null,
  degraded: false,
};

/**
 * A run's stored `result`, read leniently: a current result parses; an older or partial one (an object
 * whose `output` holds findings) is kept as stored, the parts it lacks that have a neutral value filled in
 * (others, such as `coverage`, stay absent: readers treat them as missing). Null when there is no result
 * or the value is not one (the caller logs that).
 */
export function readRunResult(value: unknown): RunResult | null {
  const parsed = runResultSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  if (!isPlainObject(value) || !isPlainObject(value.output) || !Array.isArray(value.output.findings))
    return null;
  return { ...OLDER_RESULT_DEFAULTS, ...value } as RunResult;
}
