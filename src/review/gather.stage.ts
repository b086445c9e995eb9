import type { GitHubClient } from '../github/client.js';
import type { Store } from '../store/index.js';
import type { CompetitorReview } from '../store/competitors.js';
import type { RunRecord } from '../store/runs.js';
import { cachedReader } from './concurrency.js';
import type { ChangedFile } from './context.js';
import { fileReader, listChangedFiles, type PullRequestFacts } from './gather.js';
import { readInstructions, type RepositoryInstructions } from './instructions.js';
import { selectReviewMemory, type ReviewMemory } from './memory.js';
import type { PriorFinding, RunResult } from './run-result.js';
import type { RunScope, Stage } from './stage.js';

/**
 * Stage `gather`: what the review reads besides the pull request admission read. All pages of the PR's
 * files (when admission did not list them), the PR's earlier runs and the prior findings to dispose of,
 * the repository's instruction files from the base branch, the memory the review is given (memory.ts:
 * the contexts and knowledge documents that match a changed path, the issues the PR's body links, in
 * budget), and other review bots' reviews. It also opens the reader of files at the head, which
 * reads each path once per run (the plan's surrounding code and the filter's evidence share it).
 */

export type GatherInput = {
  gh: GitHubClient;
  store: Pick<Store, 'runs' | 'findings' | 'memory' | 'competitors'>;
  run: RunScope;
  pr: PullRequestFacts;
  /** The files admission listed, or null when it did not list them (then they are listed here). */
  files: ChangedFile[] | null;
  /** Called once the changed files are known, before the rest is read (validation starts from there). */
  onFiles?: (files: ChangedFile[]) => void;
};

export type Gathered = {
  changed: ChangedFile[];
  /** The changed paths, in GitHub's order. */
  paths: string[];
  /** The previous analysed (or degraded) run of the PR. */
  previous: RunRecord | null;
  /** The latest run of the PR before this one whose analysis finished (analysed, degraded or failed). */
  latest: RunRecord | null;
  prior: PriorFinding[];
  instructions: RepositoryInstructions;
  memory: ReviewMemory;
  competitors: CompetitorReview[];
  /** A file's text at the head, null when absent there; each path is read once per run. */
  fileAtHead: (path: string) => Promise<string | null>;
};

const MAX_PRIOR_FINDINGS = 200;

async function gather(input: GatherInput): Promise<Gathered> {
  const { gh, store, run, pr } = input;
  const changed =
    input.files ?? (await listChangedFiles(gh, run.owner, run.name, run.prNumber, pr.changedFiles));
  input.onFiles?.(changed);
  const paths = changed.map((f) => f.filename);
  const previous = await store.runs.previousAnalysed(run.repo, run.prNumber, run.runId);
  const prior = previous ? await priorFindings(store, previous) : [];
  const latest = await latestFinished(store, run);
  const instructions = await readInstructions(gh, run.owner, run.name, pr.baseRef, paths);
  const target = { repo: run.repo, owner: run.owner, name: run.name, number: run.prNumber, body: pr.body };
  const memory = await selectReviewMemory({ store, gh }, { ...target, paths });
  const competitors = await store.competitors.listForPr(run.repo, run.prNumber);
  const fileAtHead = cachedReader(fileReader(gh, run.owner, run.name, run.headSha));
  return { changed, paths, previous, latest, prior, instructions, memory, competitors, fileAtHead };
}

/** The latest run of the PR before this one whose analysis finished (analysed, degraded or failed). */
async function latestFinished(store: GatherInput['store'], run: RunScope): Promise<RunRecord | null> {
  const runs = await store.runs.listForPr(run.repo, run.prNumber);
  const latest = runs.find(
    (r) =>
      r.id !== run.runId &&
      r.createdAt <= run.createdAt &&
      ['analysed', 'degraded', 'failed'].includes(r.analysisStatus),
  );
  return latest ?? null;
}

/** Open findings of the previous analysed run of the PR: its own findings and those it carried open. */
async function priorFindings(store: GatherInput['store'], previous: RunRecord): Promise<PriorFinding[]> {
  const own = await store.findings.listForRun(previous.id);
  const carried =
    ((previous.result as Partial<RunResult> | null)?.priorFindings?.carriedOpen as
      PriorFinding[] | undefined) ?? [];
  const byFingerprint = new Map<string, PriorFinding>();
  for (const f of own) {
    byFingerprint.set(f.fingerprint, {
      priorReviewKey: f.reviewKey,
      fingerprint: f.fingerprint,
      severity: f.severity,
      category: f.category,
      path: f.path,
      line: f.line,
      title: f.title,
      headSha: f.headSha,
    });
  }
  for (const p of carried) if (!byFingerprint.has(p.fingerprint)) byFingerprint.set(p.fingerprint, p);
  return [...byFingerprint.values()].slice(0, MAX_PRIOR_FINDINGS);
}

export const gatherStage: Stage<GatherInput, Gathered> = {
  name: 'gather',
  run: gather,
  counts: (g) => ({
    files: g.changed.length,
    priorFindings: g.prior.length,
    memoryContexts: g.memory.items.filter((i) => i.kind === 'context').length,
    knowledgeDocuments: g.memory.items.filter((i) => i.kind === 'knowledge').length,
    linkedIssues: g.memory.issues.length,
    memoryLeftOut: g.memory.leftOut.contexts + g.memory.leftOut.knowledge + g.memory.leftOut.linkedIssues,
    skippedIssues: g.memory.skippedIssues.length,
    competitorReviews: g.competitors.length,
    instructionFiles: g.instructions.files.length,
    previousRun: g.previous?.id ?? null,
  }),
};
