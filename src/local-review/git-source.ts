import type { PullRequestSource, Side, SourceFile } from '../github/pull-request-server.js';
import {
  changedFiles,
  commitsBetween,
  currentBranch,
  fileAt,
  LocalReviewError,
  mergeBase,
  originDefaultBranch,
  repositoryName,
  repositoryRoot,
  resolveCommit,
  treeAt,
  type Commit,
} from './git.js';

/** The owner a local repository is served under: `local/<directory name>`, pull request #1. */
export const LOCAL_OWNER = 'local';
export const LOCAL_PR_NUMBER = 1;

/** Commits listed in the served pull request's description at most. */
const MAX_LISTED_COMMITS = 50;

/** A local change to review: the repository, the refs as given and resolved, and what changed. */
export type LocalChange = {
  root: string;
  name: string;
  /** `--base` as given (or the default), and its commit. */
  base: { ref: string; sha: string };
  /** `--head` as given (or the branch `HEAD` is on), and its commit. */
  head: { ref: string; sha: string };
  /** Where the head left the base: the diff is `mergeBase..head`, as GitHub's pull-request diff. */
  mergeBase: string;
  commits: Commit[];
  files: SourceFile[];
};

/**
 * Reads the change to review: `--base` defaults to `origin`'s default branch (`origin/HEAD`), else
 * `main`; `--head` to `HEAD`. The change is what the head adds to the merge base of the two, as a pull
 * request from the head into the base shows it.
 */
export async function readLocalChange(opts: {
  repo: string;
  base?: string;
  head?: string;
}): Promise<LocalChange> {
  const root = await repositoryRoot(opts.repo);
  const baseRef = opts.base ?? (await originDefaultBranch(root)) ?? 'main';
  const baseWhat =
    opts.base !== undefined ? '--base' : 'the default base (origin has no default branch; pass --base)';
  const baseSha = await resolveCommit(root, baseRef, baseWhat);
  const headSha = await resolveCommit(root, opts.head ?? 'HEAD', '--head');
  const headRef = opts.head ?? (await currentBranch(root)) ?? 'HEAD';
  const base = await mergeBase(root, baseSha, headSha);
  const [commits, files] = await Promise.all([
    commitsBetween(root, base, headSha, MAX_LISTED_COMMITS + 1),
    changedFiles(root, base, headSha),
  ]);
  return {
    root,
    name: repositoryName(root),
    base: { ref: baseRef, sha: baseSha },
    head: { ref: headRef, sha: headSha },
    mergeBase: base,
    commits,
    files,
  };
}

/**
 * The title and description of the served pull request, as GitHub fills them in for a new one: one
 * commit gives its subject and body; several give the head branch's name and the list of subjects.
 */
export function describeChange(change: LocalChange): { title: string; body: string } {
  const { commits } = change;
  if (commits.length === 1) return { title: commits[0]!.subject, body: commits[0]!.body };
  const listed = commits.slice(0, MAX_LISTED_COMMITS).map((c) => `- ${c.subject}`);
  if (commits.length > MAX_LISTED_COMMITS) listed.push('- (more commits not listed)');
  return { title: change.head.ref, body: listed.join('\n') };
}

/**
 * A local change as a served pull request (`local/<name>#1`): the base branch is `--base` at its commit,
 * the head is `--head`, the files are the merge base..head diff, and files and trees are read from git at
 * the base or head commit. As on GitHub, the base ref names the base branch's commit (where instruction
 * files and `.github/verdict.yml` are read) and the diff starts at the merge base.
 */
export function gitSource(change: LocalChange): PullRequestSource {
  const { root, base, head } = change;
  const { title, body } = describeChange(change);
  const commitOf = (side: Side) => (side === 'base' ? base.sha : head.sha);
  return {
    owner: LOCAL_OWNER,
    name: change.name,
    number: LOCAL_PR_NUMBER,
    pull: {
      title,
      body,
      author: change.commits[0]?.author ?? 'local',
      baseRef: base.ref,
      headRef: head.ref,
      baseSha: base.sha,
      headSha: head.sha,
      language: null,
      defaultBranch: base.ref,
    },
    files: change.files,
    side(ref) {
      if (ref === head.sha || ref === head.ref) return 'head';
      if (ref === base.sha || ref === base.ref) return 'base';
      return null;
    },
    read: (side, path) => fileAt(root, commitOf(side), path),
    tree: (side) => treeAt(root, commitOf(side)),
  };
}

export { LocalReviewError };
