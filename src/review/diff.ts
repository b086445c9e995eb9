/**
 * Unified diffs as GitHub returns them in a file's `patch`: parsed into hunks, shown to the model with
 * the new-side line number of every line it can cite, and used to check the line anchors the model gives
 * (NAMES.md, "Line anchors and suggestions on findings").
 *
 * The numbered form of one hunk (the idea is PR-Agent's; the layout is ours):
 *
 * ```
 * @@ -10,4 +10,5 @@ function evict
 * __new hunk__
 * 10   const key = k;
 * 11 + if (expired(key)) {
 * 12     store.delete(key);
 * __old hunk__
 * - store.delete(key);
 * ```
 *
 * `__new hunk__` holds the context and added lines with their line numbers in the file at the head
 * commit (`+` marks an added line); `__old hunk__`, present only when the hunk removes lines, holds the
 * removed lines, which have no new-side number and cannot be cited.
 */

export type DiffLine = {
  kind: 'add' | 'del' | 'context';
  text: string;
  /** Line number on the old side (null for an added line). */
  oldLine: number | null;
  /** Line number on the new side (null for a removed line). */
  newLine: number | null;
};

export type Hunk = {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  /** What follows the second `@@` (the enclosing function, when git found one). */
  section: string;
  lines: DiffLine[];
};

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$/;

/**
 * The hunks of a patch. Lines before the first hunk header (`diff --git`, `---`, `+++`) are ignored, and
 * so is git's `\ No newline at end of file` marker. A line without a known prefix inside a hunk is taken
 * as context (GitHub never sends one; hand-written patches sometimes lose the space of an empty line).
 */
export function parsePatch(patch: string | null | undefined): Hunk[] {
  if (!patch) return [];
  const hunks: Hunk[] = [];
  let current: Hunk | null = null;
  let oldLine = 0;
  let newLine = 0;
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  // A patch ending in a newline would give one empty line too many.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (const raw of lines) {
    const header = HUNK_HEADER.exec(raw);
    if (header) {
      current = {
        oldStart: Number(header[1]),
        oldCount: header[2] === undefined ? 1 : Number(header[2]),
        newStart: Number(header[3]),
        newCount: header[4] === undefined ? 1 : Number(header[4]),
        section: header[5]!.trim(),
        lines: [],
      };
      hunks.push(current);
      oldLine = current.oldStart;
      newLine = current.newStart;
      continue;
    }
    if (!current) continue;
    if (raw.startsWith('\\')) continue;
    const prefix = raw[0];
    if (prefix === '+') {
      current.lines.push({ kind: 'add', text: raw.slice(1), oldLine: null, newLine: newLine++ });
    } else if (prefix === '-') {
      current.lines.push({ kind: 'del', text: raw.slice(1), oldLine: oldLine++, newLine: null });
    } else {
      const text = prefix === ' ' ? raw.slice(1) : raw;
      current.lines.push({ kind: 'context', text, oldLine: oldLine++, newLine: newLine++ });
    }
  }
  return hunks;
}

/** The numbered form of a patch (see the module comment); an empty string for a patch without hunks. */
export function numberPatch(patch: string | null | undefined): string {
  const hunks = parsePatch(patch);
  const out: string[] = [];
  for (const hunk of hunks) {
    const width = String(Math.max(1, hunk.newStart + hunk.newCount)).length;
    out.push(
      `@@ -${hunk.oldStart},${hunk.oldCount} +${hunk.newStart},${hunk.newCount} @@${hunk.section ? ` ${hunk.section}` : ''}`,
    );
    const removed: string[] = [];
    const kept: string[] = [];
    const added = hunk.lines.some((l) => l.kind === 'add');
    for (const line of hunk.lines) {
      if (line.kind === 'del') removed.push(`-${line.text}`);
      else
        kept.push(`${String(line.newLine).padStart(width)} ${line.kind === 'add' ? '+' : ' '}${line.text}`);
    }
    out.push('__new hunk__');
    if (kept.length === 0) out.push('(no line on the new side: this hunk only removes lines)');
    else out.push(...kept);
    if (!added && removed.length > DELETION_LINES_SHOWN) {
      // A hunk that only removes lines is compressed to one line naming what was removed.
      const first = removed.map((r) => r.slice(1).trim()).find((r) => r !== '') ?? '';
      out.push(
        '__old hunk__',
        `(${removed.length} lines removed, from: ${JSON.stringify(first.slice(0, 100))})`,
      );
    } else if (removed.length > 0) out.push('__old hunk__', ...removed);
  }
  return out.join('\n');
}

/** A hunk that only removes lines shows them up to this many; more are named in one line. */
export const DELETION_LINES_SHOWN = 3;

/** Where a new-side line sits in a patch: its hunk and its text. */
export type NewSideLine = { hunk: number; text: string; added: boolean };

/** Every new-side line of a patch (context and added lines) by its line number. */
export function newSideIndex(patch: string | null | undefined): Map<number, NewSideLine> {
  const index = new Map<number, NewSideLine>();
  parsePatch(patch).forEach((hunk, h) => {
    for (const line of hunk.lines) {
      if (line.newLine !== null)
        index.set(line.newLine, { hunk: h, text: line.text, added: line.kind === 'add' });
    }
  });
  return index;
}

export type AnchorCheck =
  { ok: true; line: number; endLine: number; lineText: string } | { ok: false; reason: string };

function isLineNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

/**
 * Checks a finding's anchor against its file's patch at the reviewed head: `line`..`endLine` (endLine
 * defaults to line) must be new-side lines of one hunk. The anchor is never moved or guessed: it holds as
 * given, or the reason it does not is returned. `lineText` is the text of the lines, `\n`-joined (kept on
 * the finding to recognise the code later).
 */
export function checkAnchor(
  index: ReadonlyMap<number, NewSideLine> | null,
  line: unknown,
  endLine: unknown,
): AnchorCheck {
  if (!isLineNumber(line)) return { ok: false, reason: `line ${JSON.stringify(line)} is not a line number` };
  const end = endLine === undefined || endLine === null ? line : endLine;
  if (!isLineNumber(end))
    return { ok: false, reason: `endLine ${JSON.stringify(endLine)} is not a line number` };
  if (end < line) return { ok: false, reason: `endLine ${end} is before line ${line}` };
  if (index === null) return { ok: false, reason: 'the file has no textual diff in this pull request' };
  const first = index.get(line);
  if (!first) return { ok: false, reason: `line ${line} is not on the new side of the diff` };
  const texts: string[] = [];
  for (let n = line; n <= end; n++) {
    const at = index.get(n);
    if (!at) return { ok: false, reason: `line ${n} is not on the new side of the diff` };
    if (at.hunk !== first.hunk) return { ok: false, reason: `lines ${line}-${end} span more than one hunk` };
    texts.push(at.text);
  }
  return { ok: true, line, endLine: end, lineText: texts.join('\n') };
}
