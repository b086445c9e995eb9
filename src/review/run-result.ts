import type { ReviewPlan } from './incremental.js';
import type { SemanticCoverage } from './merge.js';
import type { ReviewOutput } from './output.schema.js';
import type { PriorFinding } from './prompt.js';

/** What the engine stores as the run's `result` (review-engine 2.8). */
export type RunResult = {
  headSha: string;
  provider: string;
  model: string;
  output: ReviewOutput;
  coverage: SemanticCoverage;
  warnings: string[];
  admission: { notes: string[] };
  priorFindings: {
    supplied: number;
    resolved: Array<{
      fingerprint: string;
      disposition: string;
      explanation: string;
      title?: string | null;
      path?: string | null;
    }>;
    rejected: Array<{ fingerprint: string; reason: string }>;
    /** Prior findings neither disposed of with evidence nor raised again: the next review is given them. */
    carriedOpen: PriorFinding[];
  };
  strictness: { level: string; dropped: number };
  /** Findings the model gave that could not be read even after the repair attempt (counted, said). */
  unreadableFindings: number;
  chunks: {
    total: number;
    failed: number;
    errors: Array<{ chunk: number; error: string }>;
    /** Parts split in two because an answer was cut at the output token limit. */
    splits?: number;
  };
  /**
   * A review in several parts: how they were combined (the synthesis call, or the deterministic merge
   * when it failed), and how many findings were the same issue seen twice. Null with one part.
   */
  synthesis: { status: 'synthesised' | 'failed'; merged: number; error: string | null } | null;
  /** The repository instruction files the prompt quoted (from the base branch). */
  instructions?: { files: string[] };
  /** Full or incremental (NAMES.md), why, and since which reviewed head. */
  review: { kind: ReviewPlan['kind']; reason: string; sinceSha: string | null; files: number };
  /** The base branch reviewed against (a changed base gives the next run a full review). */
  baseRef: string;
  /** Line anchors checked against the diff: kept, removed (the findings stay), suggestions dropped. */
  anchors: {
    kept: number;
    removed: number;
    suggestionsDropped: number;
    problems: Array<{ path: string; title: string; reason: string }>;
  };
  degraded: boolean;
};
