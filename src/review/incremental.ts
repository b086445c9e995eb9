import type { ChangedFile } from './context.js';
import { compareHeads } from './gather.js';
import type { GitHubClient } from '../github/client.js';

/** How a run reviews its pull request, and why (stored on the run, said in one line of the body). */
export type ReviewPlan =
  | { kind: 'full'; reason: string; sinceSha: string | null }
  | { kind: 'incremental'; reason: string; sinceSha: string; files: ChangedFile[] };

/** What the plan needs to know of an earlier run. */
export type EarlierRun = {
  headSha: string | null;
  analysisStatus: string;
  /** The base branch it reviewed against (absent on runs recorded before it was kept). */
  baseRef?: string | null;
};

const short = (sha: string) => sha.slice(0, 7);

/**
 * The incremental rule (NAMES.md, "Incremental review"). A run reviews only what changed since the last
 * reviewed head when that head is an ancestor of the new one (the compare API says `ahead`). It reviews
 * everything instead on the first review, when `review.incremental` is false in `.github/verdict.yml`,
 * when the latest review failed or was incomplete, when the head was reviewed before (a manual
 * `@verdict review` or a requeue), when the base branch changed, after a force push, and when more files
 * changed since than GitHub's compare lists. The increment holds only files of the pull request's own
 * diff (a merge of the base branch brings in files the pull request does not change).
 */
export async function planReview(opts: {
  gh: GitHubClient;
  owner: string;
  repo: string;
  headSha: string;
  baseRef: string;
  incrementalEnabled: boolean;
  /** The latest analysed (or degraded) run of the PR before this one. */
  previous: EarlierRun | null;
  /** The latest run of the PR before this one whose analysis finished, failed included. */
  latest: EarlierRun | null;
  prFiles: readonly ChangedFile[];
}): Promise<ReviewPlan> {
  const { previous, latest } = opts;
  if (!previous || !previous.headSha) {
    return { kind: 'full', reason: 'first review of this pull request', sinceSha: null };
  }
  const since = previous.headSha;
  const full = (reason: string): ReviewPlan => ({ kind: 'full', reason, sinceSha: since });
  if (!opts.incrementalEnabled) return full('`review.incremental` is false in `.github/verdict.yml`');
  if (latest && latest.analysisStatus === 'failed') {
    return full(`the previous review${latest.headSha ? ` (at ${short(latest.headSha)})` : ''} failed`);
  }
  if (previous.analysisStatus !== 'analysed') {
    return full(`the previous review at ${short(since)} was incomplete`);
  }
  if (since === opts.headSha) return full(`this head (${short(since)}) was reviewed before`);
  if (previous.baseRef && previous.baseRef !== opts.baseRef) {
    return full(`the base branch changed from \`${previous.baseRef}\` to \`${opts.baseRef}\``);
  }
  const comparison = await compareHeads(opts.gh, opts.owner, opts.repo, since, opts.headSha);
  if (comparison.status === 'missing') {
    return full(`the earlier head ${short(since)} is no longer in the repository (force push)`);
  }
  if (comparison.status === 'identical') return full(`this head (${short(since)}) was reviewed before`);
  if (comparison.status !== 'ahead') {
    return full(`the branch was force-pushed: ${short(since)} is not an ancestor of ${short(opts.headSha)}`);
  }
  if (comparison.truncated) return full(`too many files changed since ${short(since)} to compare them`);
  const inPr = new Set(opts.prFiles.map((f) => f.filename));
  const files = comparison.files.filter((f) => inPr.has(f.filename));
  return {
    kind: 'incremental',
    reason: `${files.length} file(s) changed since ${short(since)}`,
    sinceSha: since,
    files,
  };
}
