import { globMatcher } from '../policy/matcher.js';

/**
 * Which memory applies to a pull request (NAMES.md "Memory"), as pure functions: the store selects with
 * them, the preview reports what they select, and the review gives the model what they select.
 */

/** A context applies when it has no globs (every path) or a changed path matches one of its globs. */
export function contextApplies(globs: readonly string[], changedPaths: readonly string[]): boolean {
  if (globs.length === 0) return true;
  const matchers = globs.map(globMatcher);
  return changedPaths.some((path) => matchers.some((matches) => matches(path)));
}

/** The knowledge-document path that stands for the whole repository. */
export const KNOWLEDGE_ROOT = '/';

/**
 * A knowledge document applies when its path is the repository root (`/`), equals a changed file, or is
 * a directory above one (`src/api` applies to `src/api/users.ts` and `src/api/v2/x.ts`, not to
 * `src/apiary.ts`).
 */
export function knowledgeApplies(path: string, changedPaths: readonly string[]): boolean {
  if (path === KNOWLEDGE_ROOT) return true;
  const dir = `${path}/`;
  return changedPaths.some((changed) => changed === path || changed.startsWith(dir));
}

export type ClusterStanding = {
  action: 'none' | 'suppress' | 'keep';
  feedback: { up: number; dismissed: number };
};

/**
 * Whether findings like a cluster's are withheld: its action is `suppress`, or (unless its action is
 * `keep`) reviewers dismissed at least two of them and gave none a 👍.
 */
export function clusterSuppresses(cluster: ClusterStanding): boolean {
  if (cluster.action === 'suppress') return true;
  if (cluster.action === 'keep') return false;
  return cluster.feedback.dismissed >= 2 && cluster.feedback.up === 0;
}

/** Most issues one pull request's body links (the first ones, in the order the body names them). */
export const MAX_LINKED_ISSUES = 10;

/** `s` matched literally inside a regular expression. */
export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The issues of the same repository a pull request's body closes or references, in the order it names
 * them, each once, without the pull request itself, at most MAX_LINKED_ISSUES: `#12`, `closes #12`
 * (and `fixes`, `resolves` in all their forms, which read the same here), `owner/name#12` and
 * `https://github.com/owner/name/issues/12` when owner/name is this repository (case-insensitive). A
 * `#12` glued to a word or an HTML entity (`a#12`, `&#12;`) is not a reference; neither is one inside
 * inline or fenced code.
 */
export function linkedIssueNumbers(body: string, repo: string, selfNumber: number | null): number[] {
  const text = body.replace(/```[\s\S]*?```/g, ' ').replace(/`[^`\n]*`/g, ' ');
  const name = escapeRegExp(repo);
  const pattern = new RegExp(
    [
      // https://github.com/owner/name/issues/12 (any host: GitHub Enterprise has its own)
      `https?://[^\\s/]+/(${name})/(?:issues|pull)/(\\d{1,9})\\b`,
      // owner/name#12, or a bare #12 not glued to a word, '&' or '/'
      `(?:^|[^\\w&/#])(?:(${name}))?#(\\d{1,9})\\b`,
    ].join('|'),
    'gi',
  );
  const out: number[] = [];
  for (const m of text.matchAll(pattern)) {
    const n = Number(m[2] ?? m[4]);
    if (!Number.isSafeInteger(n) || n < 1 || n === selfNumber || out.includes(n)) continue;
    out.push(n);
    if (out.length === MAX_LINKED_ISSUES) break;
  }
  return out;
}
