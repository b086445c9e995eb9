import { parsePatch } from '../review/diff.js';
import { extractJsonCandidate, withoutTrailingCommas } from '../review/parse-json.js';
import type { Relies } from './authored.js';
import type { PlantedBug, TestLabCase } from './case.js';
import { githubPatch } from './patch.js';
import { keywordHits, keywordsNeeded } from './score.js';

/**
 * What scripts/testlab/derive-relies.ts derives for an authored answer: the lines it relies on, from the
 * lines each of its findings anchors and a little around them, read from the case's after/ tree and kept
 * only where the diff shows them (a line only the surrounding code shows is not relied on: the prompt may
 * leave surrounding code out). An unanchored finding relies on the lines of the planted bug it names (by
 * its words), else on the first changed lines of its file; a covered file no finding is about relies on
 * its first changed lines (the answer says it reviewed that change).
 */

/** Lines around a finding's anchor that its answer also relies on. */
export const AROUND = 2;
/** Changed lines relied on for a file an answer reviewed without a finding anchored in it. */
const FIRST_CHANGED = 2;

type AnswerFinding = {
  path?: unknown;
  line?: unknown;
  endLine?: unknown;
  title?: unknown;
  body?: unknown;
};

/** The findings of an answer's JSON (none when it holds no readable object). */
export function answerFindings(text: string): AnswerFinding[] {
  const candidate = extractJsonCandidate(text);
  if (candidate === null) return [];
  try {
    const value = JSON.parse(withoutTrailingCommas(candidate)) as { findings?: unknown };
    return Array.isArray(value.findings) ? (value.findings as AnswerFinding[]) : [];
  } catch {
    return [];
  }
}

/** A changed file's lines the diff shows (new side), by number, and its added lines in order. */
function diffLines(c: TestLabCase, path: string): { shown: Map<number, string>; added: number[] } {
  const f = c.files.find((x) => x.path === path);
  const shown = new Map<number, string>();
  const added: number[] = [];
  if (!f || !f.changed || f.after === null) return { shown, added };
  const after = f.after.split('\n');
  for (const hunk of parsePatch(githubPatch(f.before, f.after))) {
    for (const l of hunk.lines) {
      if (l.newLine === null) continue;
      shown.set(l.newLine, after[l.newLine - 1] ?? l.text);
      if (l.kind === 'add') added.push(l.newLine);
    }
  }
  return { shown, added };
}

const asLine = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : null);

/** The planted bug an unanchored finding is about, by its words. */
function bugNamed(c: TestLabCase, f: AnswerFinding, path: string): PlantedBug | undefined {
  const scored = {
    severity: '',
    category: '',
    path,
    line: null,
    endLine: null,
    title: String(f.title ?? ''),
    body: String(f.body ?? ''),
  };
  return c.bugs.find((b) => b.path === path && keywordHits(b, scored) >= keywordsNeeded(b));
}

/** The lines an authored answer covering `covers` relies on (see the module comment). */
export function deriveLines(c: TestLabCase, text: string, covers: readonly string[]): Relies['lines'] {
  const wanted = new Map<string, Set<number>>(covers.map((p) => [p, new Set<number>()]));
  const diffs = new Map(covers.map((p) => [p, diffLines(c, p)]));
  const first = (path: string) => {
    const d = diffs.get(path)!;
    return (d.added.length > 0 ? d.added : [...d.shown.keys()]).slice(0, FIRST_CHANGED);
  };
  for (const f of answerFindings(text)) {
    const path = typeof f.path === 'string' ? f.path : '';
    const set = wanted.get(path);
    if (!set) continue;
    const { shown } = diffs.get(path)!;
    const line = asLine(f.line);
    let lines: number[] = [];
    if (line !== null) {
      const end = Math.max(line, asLine(f.endLine) ?? line);
      for (let n = line - AROUND; n <= end + AROUND; n++) if (shown.has(n)) lines.push(n);
    }
    if (lines.length === 0) {
      const bug = bugNamed(c, f, path);
      if (bug) for (let n = bug.lines[0]; n <= bug.lines[1]; n++) if (shown.has(n)) lines.push(n);
    }
    if (lines.length === 0) lines = first(path);
    for (const n of lines) set.add(n);
  }
  for (const [path, set] of wanted) if (set.size === 0) for (const n of first(path)) set.add(n);
  return [...wanted].flatMap(([path, set]) =>
    [...set].sort((a, b) => a - b).map((line) => ({ path, line, text: diffs.get(path)!.shown.get(line)! })),
  );
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'answer';

/**
 * A name for an answer by what it covers: the planted bugs its findings are about, else `whole-change` when
 * it covers every changed file of the case, else its first file and how many more.
 */
export function answerName(c: TestLabCase, text: string, covers: readonly string[]): string {
  const bugs = new Set<string>();
  for (const f of answerFindings(text)) {
    const path = typeof f.path === 'string' ? f.path : '';
    const line = asLine(f.line);
    const near = c.bugs.find(
      (b) => b.path === path && line !== null && line <= b.lines[1] + 3 && line >= b.lines[0] - 3,
    );
    const bug = near ?? bugNamed(c, f, path);
    if (bug && covers.includes(bug.path)) bugs.add(bug.id);
  }
  if (bugs.size > 0) return [...bugs].join('--');
  const changed = c.files.filter((f) => f.changed).map((f) => f.path);
  if (changed.every((p) => covers.includes(p))) return 'whole-change';
  const stem = covers[0]!
    .split('/')
    .pop()!
    .replace(/\.[^.]+$/, '');
  return covers.length === 1 ? slug(stem) : `${slug(stem)}-and-${covers.length - 1}-more`;
}
