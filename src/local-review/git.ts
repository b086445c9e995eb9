import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { SourceFile, SourceTreeEntry } from '../github/pull-request-server.js';

/**
 * What `verdict review` reads of a local git repository, through `git` run with execFile (no shell): the
 * commits of the base and head, their merge base, the change between them as GitHub's pull-request files
 * API lists it (status, counts, rename, patch hunks), and files and trees at a commit.
 */

export type LocalReviewErrorCode =
  | 'no_directory'
  | 'git_missing'
  | 'not_a_repository'
  | 'unknown_ref'
  | 'no_merge_base'
  | 'git_failed'
  | 'review_failed';

/** A local review that cannot be done, with a one-line message for the command line. */
export class LocalReviewError extends Error {
  constructor(
    readonly code: LocalReviewErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LocalReviewError';
  }
}

/** Output larger than this is refused (a diff of 256 MB is not a review). */
const MAX_OUTPUT = 256 * 1024 * 1024;

/** Options every command gets: no pager, no colour, no external diff or text conversion, paths verbatim. */
const GIT_CONFIG = ['-c', 'core.quotePath=false', '-c', 'color.ui=false', '--no-pager'];

/** Runs `git` in `dir`; resolves with its stdout, rejects with a LocalReviewError (`git_failed`). */
export function git(dir: string, args: readonly string[]): Promise<string>;
export function git(dir: string, args: readonly string[], opts: { buffer: true }): Promise<Buffer>;
export function git(dir: string, args: readonly string[], opts: { buffer?: boolean } = {}) {
  return new Promise<string | Buffer>((done, fail) => {
    execFile(
      'git',
      [...GIT_CONFIG, ...args],
      {
        cwd: dir,
        encoding: opts.buffer ? 'buffer' : 'utf8',
        maxBuffer: MAX_OUTPUT,
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (!error) return done(stdout);
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          return fail(new LocalReviewError('git_missing', 'git is not installed (or not on PATH)'));
        }
        const text = String(stderr).trim().split('\n')[0] || error.message.split('\n')[0];
        fail(Object.assign(new LocalReviewError('git_failed', `git ${args[0]}: ${text}`), { stderr }));
      },
    );
  });
}

/** The top-level directory of the git work tree holding `dir`. */
export async function repositoryRoot(dir: string): Promise<string> {
  const path = resolve(dir);
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) throw new LocalReviewError('no_directory', `${path} is not a directory`);
  const notRepository = `${path} is not in a git work tree`;
  return gitOr(path, ['rev-parse', '--show-toplevel'], 'not_a_repository', notRepository);
}

/** `git`'s trimmed output; git's refusal (`git_failed`) becomes a LocalReviewError `code` saying `message`. */
async function gitOr(
  dir: string,
  args: readonly string[],
  code: LocalReviewErrorCode,
  message: string,
): Promise<string> {
  try {
    return (await git(dir, args)).trim();
  } catch (error) {
    if (error instanceof LocalReviewError && error.code === 'git_failed')
      throw new LocalReviewError(code, message);
    throw error;
  }
}

/** The commit a ref names, or a LocalReviewError `unknown_ref` naming it. */
export async function resolveCommit(root: string, ref: string, what: string): Promise<string> {
  const unknown = `${what} "${ref}" is not a commit of this repository`;
  // A ref that starts with `-` would be read as an option.
  if (ref.trim() === '' || ref.startsWith('-')) throw new LocalReviewError('unknown_ref', unknown);
  return gitOr(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], 'unknown_ref', unknown);
}

/** `origin`'s default branch as the remote-tracking ref (`origin/main`), or null when origin names none. */
export const originDefaultBranch = (root: string) => symbolicRef(root, 'refs/remotes/origin/HEAD');

/** The branch `HEAD` is on, or null when it is detached. */
export const currentBranch = (root: string) => symbolicRef(root, 'HEAD');

/** The short name of the ref the symbolic ref `name` points to, or null when it points to none. */
async function symbolicRef(root: string, name: string): Promise<string | null> {
  try {
    const ref = (await git(root, ['symbolic-ref', '--quiet', '--short', name])).trim();
    return ref === '' ? null : ref;
  } catch {
    return null;
  }
}

export async function mergeBase(root: string, a: string, b: string): Promise<string> {
  const none = `${a.slice(0, 12)} and ${b.slice(0, 12)} have no common ancestor`;
  return gitOr(root, ['merge-base', a, b], 'no_merge_base', none);
}

export type Commit = { sha: string; author: string; subject: string; body: string };

/** The commits in `from..to`, newest first (at most `limit`). */
export async function commitsBetween(
  root: string,
  from: string,
  to: string,
  limit: number,
): Promise<Commit[]> {
  const out = await git(root, [
    'log',
    '--no-color',
    `--max-count=${limit}`,
    '--format=%H%x00%an%x00%s%x00%b%x1e',
    `${from}..${to}`,
  ]);
  return out
    .split('\x1e')
    .map((record) => record.replace(/^\n/, ''))
    .filter((record) => record !== '')
    .map((record) => {
      const [sha = '', author = '', subject = '', body = ''] = record.split('\x00');
      return { sha, author, subject, body: body.trim() };
    });
}

/** `git diff` options of the two listings, so that they list the same files in the same order. */
const DIFF_OPTIONS = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--no-relative',
  '--find-renames',
  '--ignore-submodules=none',
];

const STATUS: Record<string, SourceFile['status']> = {
  A: 'added',
  D: 'removed',
  M: 'modified',
  R: 'renamed',
  C: 'copied',
  T: 'changed',
};

const ZERO_SHA = /^0+$/;

/**
 * The change from `base` to `head` as GitHub's pull-request files API lists it: status (`added`,
 * `removed`, `modified`, `renamed`, ...), line counts, the previous name of a renamed file, and the patch
 * hunks (3 lines of context, without the `diff --git` and `---`/`+++` lines). A binary file has no
 * patch, as on GitHub.
 */
export async function changedFiles(root: string, base: string, head: string): Promise<SourceFile[]> {
  const listing = await git(root, [
    'diff',
    '-z',
    '--raw',
    '--no-abbrev',
    '--numstat',
    ...DIFF_OPTIONS,
    base,
    head,
    '--',
  ]);
  const entries = parseRawAndNumstat(listing);
  if (entries.length === 0) return [];
  const patches = splitPatches(
    await git(root, [
      'diff',
      '--patch',
      '--unified=3',
      '--inter-hunk-context=0',
      '--src-prefix=a/',
      '--dst-prefix=b/',
      ...DIFF_OPTIONS,
      base,
      head,
      '--',
    ]),
  );
  if (patches.length !== entries.length) {
    throw new LocalReviewError(
      'git_failed',
      `git diff listed ${entries.length} file(s) but printed ${patches.length} patch(es)`,
    );
  }
  return entries.map((e, i) => {
    const patch = patches[i]!;
    return {
      filename: e.path,
      status: STATUS[e.status[0]!] ?? 'modified',
      additions: e.additions,
      deletions: e.deletions,
      changes: e.additions + e.deletions,
      ...(patch !== null ? { patch } : {}),
      ...(e.previousPath !== null ? { previous_filename: e.previousPath } : {}),
      sha: ZERO_SHA.test(e.dstSha) ? e.srcSha : e.dstSha,
    };
  });
}

type RawEntry = {
  status: string;
  srcSha: string;
  dstSha: string;
  path: string;
  previousPath: string | null;
  additions: number;
  deletions: number;
};

/**
 * `git diff -z --raw --numstat`: the raw entries (`:old new srcSha dstSha STATUS`, then one path, or two
 * for a rename or copy), then the same files' numstat entries (`added\tdeleted\tpath`, or
 * `added\tdeleted\t` and two paths), `-` counts for a binary file.
 */
export function parseRawAndNumstat(out: string): RawEntry[] {
  const tokens = out.split('\0');
  const entries: RawEntry[] = [];
  let i = 0;
  while (i < tokens.length && tokens[i]!.startsWith(':')) {
    const meta = tokens[i++]!.slice(1).split(' ');
    const status = meta[4] ?? 'M';
    const pair = status.startsWith('R') || status.startsWith('C');
    const first = tokens[i++] ?? '';
    const second = pair ? (tokens[i++] ?? '') : null;
    entries.push({
      status,
      srcSha: meta[2] ?? '',
      dstSha: meta[3] ?? '',
      path: second ?? first,
      previousPath: second !== null ? first : null,
      additions: 0,
      deletions: 0,
    });
  }
  for (const entry of entries) {
    const stat = tokens[i++] ?? '';
    const [added = '-', deleted = '-', path = ''] = stat.split('\t');
    if (path === '') i += 2; // a rename or copy: the two paths follow
    entry.additions = /^\d+$/.test(added) ? Number(added) : 0;
    entry.deletions = /^\d+$/.test(deleted) ? Number(deleted) : 0;
  }
  return entries;
}

/**
 * `git diff --patch` split into one patch per file, in order: the hunks from the first `@@` line to the
 * next `diff --git` line, or null for a file without hunks (binary, a pure rename, a mode change).
 */
export function splitPatches(out: string): Array<string | null> {
  const patches: Array<string | null> = [];
  let hunks: string[] | null = null;
  let started = false;
  const flush = () => {
    if (started) patches.push(hunks === null ? null : hunks.join('\n').replace(/\n+$/, ''));
  };
  for (const line of out.split('\n')) {
    if (line.startsWith('diff --git ')) {
      flush();
      started = true;
      hunks = null;
      continue;
    }
    if (!started) continue;
    if (hunks === null) {
      if (line.startsWith('@@ ')) hunks = [line];
      continue;
    }
    hunks.push(line);
  }
  flush();
  return patches;
}

/** A file's text at a commit, null when the commit has no such file. */
export async function fileAt(root: string, commit: string, path: string): Promise<string | null> {
  try {
    return (await git(root, ['cat-file', 'blob', `${commit}:${path}`], { buffer: true })).toString('utf8');
  } catch (error) {
    if (error instanceof LocalReviewError && error.code === 'git_failed') return null;
    throw error;
  }
}

/** Every file of a commit's tree (blobs, and submodules as `commit` entries). */
export async function treeAt(root: string, commit: string): Promise<SourceTreeEntry[]> {
  const out = await git(root, ['ls-tree', '-r', '-z', '--full-tree', commit]);
  const entries: SourceTreeEntry[] = [];
  for (const record of out.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode = '', type = '', sha = ''] = record.slice(0, tab).split(' ');
    if (type !== 'blob' && type !== 'commit') continue;
    entries.push({ path: record.slice(tab + 1), mode, type, sha });
  }
  return entries;
}

/** Whether the work tree has changes that are not committed (they are not reviewed). */
export async function hasUncommittedChanges(root: string): Promise<boolean> {
  try {
    return (await git(root, ['status', '--porcelain', '--untracked-files=no'])).trim() !== '';
  } catch {
    return false;
  }
}

/** A repository name GitHub would accept, from the work tree's directory name. */
export function repositoryName(root: string): string {
  const name = basename(root)
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+/, '');
  return name === '' ? 'repository' : name.slice(0, 100);
}
