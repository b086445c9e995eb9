import { parsePatch } from './diff.js';

/**
 * Following a line of a file from an earlier head to a later one through the file's patch between the
 * two heads (GitHub's compare), for cross-push matching (cross-push.ts): where does a line a finding
 * anchored at the earlier head stand now?
 *
 * Lines before a hunk keep their number plus what earlier hunks added or removed; a context line of a
 * hunk is where the hunk puts it; a removed line has no place at the later head and stands where the
 * hunk's new side is at that point (`kept: false`): its code changed, but what replaced it is there.
 */

export type FollowedLine = { line: number; kept: boolean };

/** Where `line` of the earlier head is at the later head, following `patch` (absent: the file did not change). */
export function followLine(patch: string | null | undefined, line: number): FollowedLine {
  let offset = 0;
  for (const hunk of parsePatch(patch)) {
    if (hunk.oldCount === 0) {
      // A pure insertion after old line `oldStart`.
      if (line <= hunk.oldStart) return { line: line + offset, kept: true };
      offset += hunk.newCount;
      continue;
    }
    if (line < hunk.oldStart) return { line: line + offset, kept: true };
    const last = hunk.oldStart + hunk.oldCount - 1;
    if (line > last) {
      offset += hunk.newCount - hunk.oldCount;
      continue;
    }
    // A hunk with no new side (`+10,0`) names the line before it.
    let newSide = hunk.newCount === 0 ? hunk.newStart + 1 : hunk.newStart;
    for (const l of hunk.lines) {
      if (l.oldLine === line) {
        return l.kind === 'context' ? { line: l.newLine!, kept: true } : { line: newSide, kept: false };
      }
      if (l.newLine !== null) newSide = l.newLine + 1;
    }
    return { line: newSide, kept: false };
  }
  return { line: line + offset, kept: true };
}

/**
 * The first line of `lineText` (the text of a finding's anchored lines when it was checked) found in
 * `source`, the occurrence nearest to `near`; null when it is blank or not there. What follows a line
 * when the heads cannot be compared (a force push).
 */
export function findLineText(source: string, lineText: string | null, near: number): number | null {
  const wanted = (lineText ?? '').split('\n')[0]!.trim();
  if (wanted === '') return null;
  let best: number | null = null;
  source.split('\n').forEach((text, i) => {
    if (text.trim() !== wanted) return;
    const n = i + 1;
    if (best === null || Math.abs(n - near) < Math.abs(best - near)) best = n;
  });
  return best;
}
