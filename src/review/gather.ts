import { mapConcurrent } from './concurrency.js';
import type { ChangedFile } from './context.js';

import type { GitHubClient } from '../github/client.js';

/** GitHub lists at most this many files of a pull request (3,000), 100 per page. */
export const GITHUB_MAX_PR_FILES = 3000;

export type PullRequestFacts = {
  number: number;
  state: string;
  title: string;
  body: string;
  author: string | null;
  draft: boolean;
  baseRef: string;
  /** The base commit the pull request's diff is computed against (null when GitHub does not say). */
  baseSha: string | null;
  headRef: string;
  headSha: string;
  /** The repository's default branch (`base.repo.default_branch`), null when GitHub does not say. */
  defaultBranch: string | null;
  labels: string[];
  changedFiles: number;
};

/** A GitHub answer or a network failure while gathering, with whether trying again can help. */
export class GatherError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'GatherError';
  }
}

/** The HTTP status a GitHub (Octokit) error carries, or null (a network failure, another error). */
export function statusOf(error: unknown): number | null {
  const status = (error as { status?: unknown })?.status;
  return typeof status === 'number' ? status : null;
}

/** Wraps a failed GitHub read: 5xx, 429, 403 rate limits and network errors are retryable. */
export function gatherError(what: string, error: unknown): GatherError {
  if (error instanceof GatherError) return error;
  const status = statusOf(error);
  const message = (error as Error)?.message ?? String(error);
  // Octokit wraps the refusing fetch of shadow mode into a request error: recognise it by its text too.
  if (
    (error as Error)?.name === 'ShadowModeError' ||
    /shadow mode: no GitHub App credentials/.test(message)
  ) {
    return new GatherError(
      `${what}: no GitHub App credentials (APP_ID and PRIVATE_KEY), so the pull request cannot be read`,
      null,
      false,
    );
  }
  const rateLimited = status === 403 && /rate limit/i.test(message);
  const retryable = status === null || status >= 500 || status === 429 || status === 408 || rateLimited;
  return new GatherError(`${what} failed${status ? ` (${status})` : ''}: ${message}`, status, retryable);
}

export async function getPullRequest(
  gh: GitHubClient,
  owner: string,
  repo: string,
  number: number,
): Promise<PullRequestFacts> {
  try {
    const { data } = await gh.rest.pulls.get({ owner, repo, pull_number: number });
    return {
      number: data.number,
      state: data.state,
      title: data.title ?? '',
      body: data.body ?? '',
      author: data.user?.login ?? null,
      draft: data.draft === true,
      baseRef: data.base.ref,
      baseSha: data.base.sha ?? null,
      headRef: data.head.ref,
      headSha: data.head.sha,
      defaultBranch: data.base.repo?.default_branch ?? null,
      labels: (data.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
      changedFiles: data.changed_files ?? 0,
    };
  } catch (error) {
    throw gatherError(`reading ${owner}/${repo}#${number}`, error);
  }
}

/** A file of GitHub's "list pull request files" or "compare" answer (the same diff-entry shape). */
function changedFile(f: {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
  changes: number;
  patch?: string;
  previous_filename?: string;
}): ChangedFile {
  return {
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.changes,
    patch: f.patch ?? null,
    previous_filename: f.previous_filename ?? null,
  };
}

/** Pages of the PR's file list read at once when its size is known. */
const FILE_PAGES_AT_ONCE = 6;

/**
 * Every changed file of the pull request, all pages (GitHub stops at 3,000 files). When the PR says how
 * many files it changes (`changed_files`), the pages are read six at a time, in page order; a last page
 * that is full (the PR grew meanwhile) is followed by the next ones.
 */
export async function listChangedFiles(
  gh: GitHubClient,
  owner: string,
  repo: string,
  number: number,
  expected = 0,
): Promise<ChangedFile[]> {
  try {
    if (expected <= 100) {
      const files = await gh.paginate(gh.rest.pulls.listFiles, {
        owner,
        repo,
        pull_number: number,
        per_page: 100,
      });
      return files.map(changedFile);
    }
    const page = async (n: number) =>
      (await gh.rest.pulls.listFiles({ owner, repo, pull_number: number, per_page: 100, page: n })).data;
    const count = Math.min(GITHUB_MAX_PR_FILES / 100, Math.ceil(expected / 100));
    const pages = await mapConcurrent(
      Array.from({ length: count }, (_, i) => i + 1),
      FILE_PAGES_AT_ONCE,
      page,
    );
    let next = count + 1;
    while (pages[pages.length - 1]!.length === 100 && next <= GITHUB_MAX_PR_FILES / 100) {
      pages.push(await page(next++));
    }
    return pages.flat().map(changedFile);
  } catch (error) {
    throw gatherError(`listing the files of ${owner}/${repo}#${number}`, error);
  }
}

/** GitHub's compare endpoint lists at most this many files. */
export const GITHUB_MAX_COMPARE_FILES = 300;

export type HeadComparison =
  | { status: 'ahead'; files: ChangedFile[]; truncated: boolean }
  | { status: 'behind' | 'diverged' | 'identical' }
  | { status: 'missing' };

/**
 * `GET /repos/{o}/{r}/compare/{old}...{new}`: whether the earlier head is an ancestor of the new one
 * (`ahead`) and, when it is, the files and hunks changed between them. `missing` when GitHub cannot
 * compare them (the earlier head was force-pushed away).
 */
export async function compareHeads(
  gh: GitHubClient,
  owner: string,
  repo: string,
  oldSha: string,
  newSha: string,
): Promise<HeadComparison> {
  try {
    const { data } = await gh.rest.repos.compareCommitsWithBasehead({
      owner,
      repo,
      basehead: `${oldSha}...${newSha}`,
      per_page: 100,
    });
    if (data.status !== 'ahead') return { status: data.status };
    const files = (data.files ?? []).map(changedFile);
    return { status: 'ahead', files, truncated: files.length >= GITHUB_MAX_COMPARE_FILES };
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 422) return { status: 'missing' };
    throw gatherError(`comparing ${oldSha.slice(0, 12)}...${newSha.slice(0, 12)}`, error);
  }
}

/** A file's text at a commit, `null` when it does not exist there (evidence checks of 2.4). */
export function fileReader(gh: GitHubClient, owner: string, repo: string, ref: string) {
  return async (path: string): Promise<string | null> => {
    try {
      const res = await gh.rest.repos.getContent({ owner, repo, path, ref, mediaType: { format: 'raw' } });
      const data = res.data as unknown;
      if (typeof data === 'string') return data;
      if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
      if (data && typeof data === 'object' && 'content' in data && typeof data.content === 'string') {
        return Buffer.from(data.content, 'base64').toString('utf8');
      }
      return null;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw gatherError(`reading ${path} at ${ref.slice(0, 12)}`, error);
    }
  };
}
