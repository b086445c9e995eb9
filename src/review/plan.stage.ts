import type { ReviewConfig } from '../config/index.js';
import type { GitHubClient } from '../github/client.js';
import type { RunRecord } from '../store/runs.js';
import { mapConcurrent } from './concurrency.js';
import { classifyFile, prioritiseFiles, type ChangedFile } from './context.js';
import type { Gathered } from './gather.stage.js';
import type { PullRequestFacts } from './gather.js';
import { planReview, type EarlierRun, type ReviewPlan } from './incremental.js';
import type { FileCoverage, RunResult } from './run-result.js';
import { errorText, type RunScope, type Stage } from './stage.js';
import { surroundingCode } from './surrounding.js';

/**
 * Stage `plan`: what this review shows. A full or an incremental review (incremental.ts: only what
 * changed since the last reviewed head, when that head is an ancestor), and the files it shows, each
 * with the enclosing code of its hunks at the head (surrounding.ts). An incremental review also carries
 * the coverage of the files it does not show from the run that reviewed them.
 */

export type PlanInput = {
  gh: GitHubClient;
  run: RunScope;
  pr: Pick<PullRequestFacts, 'baseRef'>;
  /** `review.incremental` of `.github/verdict.yml`. */
  incrementalEnabled: boolean;
  gathered: Pick<Gathered, 'changed' | 'previous' | 'latest' | 'fileAtHead'>;
  /** The most diff a review carries (parts × tokens): surrounding code is read while the diffs fit in it. */
  config: Pick<ReviewConfig, 'chunkTokens' | 'maxChunks'>;
  signal: AbortSignal;
};

export type Plan = {
  review: ReviewPlan;
  /** The files the review shows (the increment's, or all), with their surrounding code when it was read. */
  files: ChangedFile[];
  /** How many of them got surrounding code. */
  withContext: number;
  /** What could not be read, for the run's warnings. */
  notes: string[];
  /** An incremental review: the coverage of the files it does not show, from the run that reviewed them. */
  carried: Map<string, FileCoverage> | undefined;
};

/** Changed files given their surrounding code at most, per review. */
const MAX_SURROUNDING_FILES = 50;

async function plan(input: PlanInput): Promise<Plan> {
  const { gathered, run } = input;
  const review = await planReview({
    gh: input.gh,
    owner: run.owner,
    repo: run.name,
    headSha: run.headSha,
    baseRef: input.pr.baseRef,
    incrementalEnabled: input.incrementalEnabled,
    previous: gathered.previous ? earlierRun(gathered.previous) : null,
    latest: gathered.latest ? earlierRun(gathered.latest) : null,
    prFiles: gathered.changed,
  });
  const shown = await withSurroundingCode(
    review.kind === 'incremental' ? review.files : gathered.changed,
    gathered.fileAtHead,
    input.config.chunkTokens * input.config.maxChunks,
    input.signal,
  );
  const carried =
    review.kind === 'incremental' ? carriedCoverage(gathered.previous, review.sinceSha) : undefined;
  return { review, ...shown, carried };
}

/** What the incremental rule reads of an earlier run. */
export function earlierRun(r: RunRecord): EarlierRun {
  const baseRef = (r.result as Partial<RunResult> | null)?.baseRef;
  return { headSha: r.headSha, analysisStatus: r.analysisStatus, baseRef: baseRef ?? null };
}

/** The coverage of files an incremental review does not show: what the run that reviewed them found. */
export function carriedCoverage(previous: RunRecord | null, sinceSha: string): Map<string, FileCoverage> {
  const files = (previous?.result as Partial<RunResult> | null)?.coverage?.files ?? [];
  const reviewedThen = `unchanged since ${sinceSha.slice(0, 7)}, reviewed then`;
  return new Map(
    files.map((f) => [
      f.path,
      { ...f, reason: f.status === 'analysed' && !f.partial ? reviewedThen : f.reason },
    ]),
  );
}

/**
 * Adds to each file that will be reviewed the enclosing code of its hunks at the head (surrounding.ts):
 * source files that changed (not new, removed, generated, vendored or lock files), in review order,
 * while their diffs fit the review's budget, at most 50 files, read 8 at a time. A file that cannot be
 * read gets none, and the warnings say so.
 */
export async function withSurroundingCode(
  files: readonly ChangedFile[],
  read: (path: string) => Promise<string | null>,
  budgetTokens: number,
  signal: AbortSignal,
): Promise<{ files: ChangedFile[]; withContext: number; notes: string[] }> {
  const notes: string[] = [];
  const wanted: ChangedFile[] = [];
  let chars = 0;
  for (const f of prioritiseFiles(files)) {
    if (wanted.length >= MAX_SURROUNDING_FILES || chars > budgetTokens * 4) break;
    chars += f.patch?.length ?? 0;
    if (!f.patch || f.status === 'added' || f.status === 'removed' || classifyFile(f.filename) !== 'source')
      continue;
    wanted.push(f);
  }
  const context = new Map<string, string>();
  await mapConcurrent(wanted, 8, async (f) => {
    if (signal.aborted) return;
    try {
      const source = await read(f.filename);
      if (source === null) return;
      const code = await surroundingCode(f.filename, f.patch!, source);
      if (code !== '') context.set(f.filename, code);
    } catch (error) {
      notes.push(`${f.filename} could not be read at the head: ${errorText(error)}`);
    }
  });
  return {
    files: files.map((f) => (context.has(f.filename) ? { ...f, context: context.get(f.filename)! } : f)),
    withContext: context.size,
    notes,
  };
}

export const planStage: Stage<PlanInput, Plan> = {
  name: 'plan',
  run: plan,
  counts: (p) => ({
    review: p.review.kind,
    reviewReason: p.review.reason,
    sinceSha: p.review.sinceSha,
    files: p.files.length,
    surroundingFiles: p.withContext,
  }),
};
