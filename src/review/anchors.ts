import type { ChangedFile } from './context.js';
import { checkAnchor, newSideIndex, type NewSideLine } from './diff.js';
import { normaliseFindingPath } from './fingerprint.js';
import type { Finding } from './output.schema.js';

/** Characters of the anchored lines kept on a finding (enough to recognise the code). */
const MAX_LINE_TEXT = 10_000;

/** A finding after its anchor was checked: a kept anchor with the text of its lines, or none at all. */
export type AnchoredFinding = Omit<Finding, 'line' | 'endLine' | 'suggestion'> & {
  line: number | null;
  endLine: number | null;
  suggestion: string | null;
  lineText: string | null;
};

export type AnchorReport = {
  findings: AnchoredFinding[];
  /** Anchors that held. */
  kept: number;
  /** Anchors removed (the findings stay, unanchored), with why. */
  removed: Array<{ path: string; title: string; line: unknown; endLine: unknown; reason: string }>;
  /** Suggestions dropped with their anchor, or given without one. */
  suggestionsDropped: number;
};

/**
 * Checks every finding's anchor against its file's patch at the reviewed head (the pull request's own
 * diff: GitHub accepts line comments on nothing else). `line`..`endLine` must be new-side lines of one
 * hunk; an anchor that fails is removed and the finding stays, unanchored: it is never moved or guessed.
 * A `suggestion` is kept only with a kept anchor.
 */
export function checkFindingAnchors(
  findings: readonly Finding[],
  files: readonly ChangedFile[],
): AnchorReport {
  const patches = new Map<string, string | null>();
  for (const f of files) patches.set(normaliseFindingPath(f.filename), f.patch ?? null);
  const indexes = new Map<string, Map<number, NewSideLine> | null>();
  const indexOf = (path: string) => {
    if (!indexes.has(path)) {
      const patch = patches.get(path);
      indexes.set(path, patch ? newSideIndex(patch) : null);
    }
    return indexes.get(path)!;
  };
  const report: AnchorReport = { findings: [], kept: 0, removed: [], suggestionsDropped: 0 };
  for (const finding of findings) {
    const { line, endLine, suggestion, ...rest } = finding;
    const hasSuggestion = typeof suggestion === 'string';
    if (line !== undefined && line !== null) {
      const path = normaliseFindingPath(finding.path);
      const check = patches.has(path)
        ? checkAnchor(indexOf(path), line, endLine)
        : ({ ok: false, reason: `${finding.path} is not a changed file of this pull request` } as const);
      if (check.ok) {
        report.kept++;
        report.findings.push({
          ...rest,
          line: check.line,
          endLine: check.endLine,
          suggestion: hasSuggestion ? suggestion : null,
          lineText: check.lineText.slice(0, MAX_LINE_TEXT),
        });
        continue;
      }
      report.removed.push({ path: finding.path, title: finding.title, line, endLine, reason: check.reason });
    }
    // No anchor, or one that failed: the finding stays, unanchored, without its suggestion.
    if (hasSuggestion) report.suggestionsDropped++;
    report.findings.push({ ...rest, line: null, endLine: null, suggestion: null, lineText: null });
  }
  return report;
}
