import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { extractJsonCandidate, withoutTrailingCommas } from '../review/parse-json.js';

/**
 * Authored answers (docs/testlab.md, "Authored answers"): the answers the replay provider serves were
 * written by hand for the Test Lab's cases, not answered by a model. Each `answers/<name>.txt` has beside it
 * `answers/<name>.relies.yml`: the changed files it reviewed (`covers`) and the code lines it relies on
 * (`lines`: path, line number and text, as the review prompt shows them). Replay serves an answer to the
 * part whose prompt holds one of its files, and only when that prompt shows every relied line of those
 * files with that number and that text; otherwise the call is refused and the case fails saying what was
 * missing. `answers/synthesis.txt` answers the call that combines several parts (it sees no code).
 */

export const reliesSchema = z.strictObject({
  /** The changed files the answer reviewed: it is served to whichever part holds one of them. */
  covers: z.array(z.string().trim().min(1)).min(1),
  /** The lines the answer relies on, each as the prompt must show it (new-side number and text). */
  lines: z
    .array(
      z.strictObject({ path: z.string().trim().min(1), line: z.number().int().min(1), text: z.string() }),
    )
    .min(1, 'an authored answer relies on at least one line'),
});
export type Relies = z.infer<typeof reliesSchema>;

/** One authored answer: its name (`<name>.txt`), its text and what it relies on. */
export type AuthoredAnswer = { name: string; text: string; relies: Relies };

export const SYNTHESIS_ANSWER = 'synthesis.txt';

/**
 * The authored answers of an `answers/` folder (files already read, by name), and what is wrong with the
 * folder: an answer without its relies file, a relies file that does not validate, or answers still in the
 * old per-part form (`part-<n>.txt`, which scripts/testlab/derive-relies.ts converts).
 */
export function authoredAnswers(
  dir: string,
  files: ReadonlyMap<string, string>,
): { authored: AuthoredAnswer[]; problems: string[] } {
  const authored: AuthoredAnswer[] = [];
  const problems: string[] = [];
  for (const [file, text] of files) {
    if (!file.endsWith('.txt') || file === SYNTHESIS_ANSWER || file.includes('/')) continue;
    const name = file.slice(0, -'.txt'.length);
    const reliesFile = join(dir, `${name}.relies.yml`);
    if (!existsSync(reliesFile)) {
      problems.push(
        `answers/${file} has no answers/${name}.relies.yml (run npx tsx scripts/testlab/derive-relies.ts)`,
      );
      continue;
    }
    let value: unknown;
    try {
      value = parseYaml(readFileSync(reliesFile, 'utf8'));
    } catch (error) {
      problems.push(
        `answers/${name}.relies.yml: not valid YAML (${(error as Error).message.split('\n')[0]})`,
      );
      continue;
    }
    const parsed = reliesSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      problems.push(`answers/${name}.relies.yml: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
      continue;
    }
    authored.push({ name, text, relies: parsed.data });
  }
  return { authored: authored.sort((a, b) => a.name.localeCompare(b.name)), problems };
}

/** What one review part's prompt shows: its files, and each file's numbered lines (number to text). */
export type ShownPrompt = { part: number; files: string[]; lines: Map<string, Map<number, string>> };

const FILE_HEADER = /^### (.+) \((?:added|removed|modified|renamed|copied|changed|unchanged)\b[^)]*\)$/;
/** A numbered row: a hunk's new-side line (`12 +text`, `12  text`) or a surrounding-code line (`12  text`). */
const ROW = /^ *(\d+) [ +](.*)$/;

/**
 * Reads a review part's prompt as the model sees it: the part number (`## Part n of m`, else 1), the files
 * of its `## Diff` section (the last one: the description before it is data), and every numbered line
 * shown for each file, in the diff's hunks or in the surrounding code after them.
 */
export function shownPrompt(prompt: string): ShownPrompt {
  const at = prompt.lastIndexOf('\n## Diff\n');
  const head = at < 0 ? prompt : prompt.slice(0, at);
  const parts = [...head.matchAll(/^## Part (\d+) of \d+$/gm)];
  const part = Number(parts.at(-1)?.[1] ?? '1');
  const files: string[] = [];
  const lines = new Map<string, Map<number, string>>();
  if (at < 0) return { part, files, lines };
  let current: Map<number, string> | null = null;
  for (const line of prompt.slice(at + '\n## Diff\n'.length).split('\n')) {
    const header = FILE_HEADER.exec(line);
    if (header) {
      files.push(header[1]!);
      current = new Map();
      lines.set(header[1]!, current);
      continue;
    }
    const row = current ? ROW.exec(line) : null;
    if (row && !current!.has(Number(row[1]))) current!.set(Number(row[1]), row[2]!);
  }
  return { part, files, lines };
}

/** The relied lines of `answers` for the files of this part that the prompt does not show as relied on. */
export function missingLines(answers: readonly AuthoredAnswer[], shown: ShownPrompt): string[] {
  const missing: string[] = [];
  for (const a of answers) {
    for (const r of a.relies.lines) {
      if (!shown.files.includes(r.path)) continue;
      const text = shown.lines.get(r.path)?.get(r.line);
      if (text === r.text) continue;
      missing.push(
        `${r.path}:${r.line} ${JSON.stringify(r.text)} (${a.name}.txt; the prompt shows ${
          text === undefined ? 'no such line' : JSON.stringify(text)
        })`,
      );
    }
  }
  return missing;
}

/** The authored answers that cover a file of the part. */
export function answersForPart(
  answers: readonly AuthoredAnswer[],
  files: readonly string[],
): AuthoredAnswer[] {
  return answers.filter((a) => a.relies.covers.some((p) => files.includes(p)));
}

type Json = Record<string, unknown>;

function answerJson(a: AuthoredAnswer): Json {
  const candidate = extractJsonCandidate(a.text);
  if (candidate === null) throw new Error(`authored answer ${a.name}.txt holds no JSON object`);
  return JSON.parse(withoutTrailingCommas(candidate)) as Json;
}

const arrayOf = (j: Json, key: string): unknown[] => (Array.isArray(j[key]) ? (j[key] as unknown[]) : []);
const textOf = (j: Json, key: string): string => (typeof j[key] === 'string' ? (j[key] as string) : '');

/**
 * The answer a part gets from the authored answers that cover its files. One answer whose findings are all
 * on the part's files is served as written (prose around the JSON and all). Otherwise the answers' JSON is
 * combined: the findings and important files on the part's files, the lists joined, the first overview,
 * the summaries and reasoning joined, `needs-attention` when any answer says so, the lowest confidence.
 */
export function partAnswer(answers: readonly AuthoredAnswer[], files: readonly string[]): string {
  const inPart = (item: unknown) =>
    typeof (item as { path?: unknown })?.path === 'string' && files.includes((item as { path: string }).path);
  const parsed = answers.map(answerJson);
  if (answers.length === 1 && arrayOf(parsed[0]!, 'findings').every(inPart)) return answers[0]!.text;
  const joined = (key: string) => parsed.map((j) => textOf(j, key).trim()).filter(Boolean);
  const all = (key: string) => parsed.flatMap((j) => arrayOf(j, key));
  const attention = parsed.some((j) => j.verdict === 'needs-attention');
  const merged: Json = {
    overview: joined('overview')[0] ?? '',
    importantFiles: all('importantFiles').filter(inPart),
    findings: all('findings').filter(inPart),
    priorFindingDispositions: all('priorFindingDispositions'),
    missingValidations: all('missingValidations'),
    crossRepoImpact: all('crossRepoImpact'),
    sequenceDiagram: joined('sequenceDiagram')[0] ?? '',
    competitorComparison: parsed.find((j) => j.competitorComparison)?.competitorComparison ?? null,
    summary: joined('summary').join(' '),
    bulletHighlights: all('bulletHighlights'),
    reasoning: joined('reasoning').join(' '),
    confidenceScore: Math.min(...parsed.map((j) => Number(j.confidenceScore ?? 5))),
    verdict: attention ? 'needs-attention' : 'clear',
    mergeVerdict:
      (attention ? parsed.find((j) => j.verdict === 'needs-attention') : parsed[0])?.mergeVerdict ?? '',
  };
  return JSON.stringify(merged, null, 2);
}
