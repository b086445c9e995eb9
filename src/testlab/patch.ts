import { structuredPatch } from 'diff';

/**
 * A file's change as GitHub's pull-request files API gives it in `patch`: the unified-diff hunks with 3
 * lines of context, without the `---`/`+++` header lines.
 */
export function githubPatch(before: string | null, after: string | null): string {
  const patch = structuredPatch('a', 'b', before ?? '', after ?? '', undefined, undefined, { context: 3 });
  return patch.hunks
    .map((h) => {
      // An added file's hunk starts at -0,0 and a deleted file's at +0,0, as git prints them.
      const oldStart = h.oldLines === 0 ? 0 : h.oldStart;
      const newStart = h.newLines === 0 ? 0 : h.newStart;
      return [`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`, ...h.lines].join('\n');
    })
    .join('\n');
}

/** Added and deleted line counts of a patch. */
export function patchCounts(patch: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) continue;
    if (line.startsWith('+')) additions++;
    else if (line.startsWith('-')) deletions++;
  }
  return { additions, deletions };
}
