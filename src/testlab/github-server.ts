import { createHash } from 'node:crypto';
import { type PullRequestSource, type Side, type SourceFile } from '../github/pull-request-server.js';
import { githubPatch, patchCounts } from './patch.js';
import type { TestLabCase } from './case.js';

/** The owner every case is served under: case `x` is the repository `testlab/x`, pull request #1. */
export const TESTLAB_OWNER = 'testlab';
export const TESTLAB_PR_NUMBER = 1;

/** A commit id of a case's base or head (stable: the same case text gives the same id). */
export function caseSha(c: TestLabCase, side: 'base' | 'head'): string {
  const h = createHash('sha1').update(`${side}\0${c.name}\0`);
  for (const f of c.files)
    h.update(`${f.path}\0${(side === 'base' ? f.before : f.after) ?? '\u0000deleted'}\0`);
  return h.digest('hex');
}

/** A changed file of a case as the pull-request files API lists it. */
function prFile(f: TestLabCase['files'][number]): SourceFile {
  const patch = githubPatch(f.before, f.after);
  const { additions, deletions } = patchCounts(patch);
  return {
    filename: f.path,
    status: f.before === null ? 'added' : f.after === null ? 'removed' : 'modified',
    additions,
    deletions,
    changes: additions + deletions,
    patch,
    sha: createHash('sha1')
      .update(f.after ?? f.before ?? '')
      .digest('hex'),
  };
}

/** A case as a served pull request: `testlab/<case>#1`, its files at the base and head from its folders. */
export function caseSource(c: TestLabCase): PullRequestSource {
  const baseSha = caseSha(c, 'base');
  const headSha = caseSha(c, 'head');
  const text = (side: Side, f: TestLabCase['files'][number]) => (side === 'base' ? f.before : f.after);
  return {
    owner: TESTLAB_OWNER,
    name: c.name,
    number: TESTLAB_PR_NUMBER,
    pull: {
      title: c.meta.title,
      body: c.meta.body,
      author: 'testlab-author',
      baseRef: c.meta.base,
      headRef: c.meta.head,
      baseSha,
      headSha,
      language: c.meta.language,
      defaultBranch: c.meta.base,
    },
    files: c.files.filter((f) => f.changed).map(prFile),
    side(ref) {
      if (ref === headSha || ref === c.meta.head) return 'head';
      if (ref === baseSha || ref === c.meta.base) return 'base';
      return null;
    },
    read(side, path) {
      const file = c.files.find((f) => f.path === path);
      return file ? text(side, file) : null;
    },
    tree(side) {
      return c.files
        .filter((f) => text(side, f) !== null)
        .map((f) => ({ path: f.path, mode: '100644', type: 'blob' as const, sha: headSha }));
    },
  };
}
