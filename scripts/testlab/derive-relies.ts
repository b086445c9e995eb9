/**
 * Derives the relies files of the Test Lab's authored answers (docs/testlab.md, "Authored answers"):
 * `tsx scripts/testlab/derive-relies.ts [case-glob,...]`. Re-runnable: it rewrites every
 * `answers/<name>.relies.yml` from the answer's findings and the case's after/ tree (src/testlab/derive.ts),
 * keeping the files each answer covers.
 *
 * Answers still in the per-part form (`answers/part-<n>.txt`, as cases were written before, and as
 * `verdict testlab run --record` writes them) are converted first: the case is reviewed once in replay with
 * a provider that only reads the prompts, so each `part-<n>.txt` covers exactly the files part n's prompt
 * held; it is then renamed by what it covers (the planted bugs its findings are about, `whole-change`, or
 * its first file and how many more) and gets its relies file. `synthesis.txt` stays as it is. Live-only
 * cases (no answers) are left alone.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { stringify, parse as parseYaml } from 'yaml';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../src/review/providers/index.js';
import { SYNTHESIS_SYSTEM } from '../../src/review/synthesis.js';
import { confirmingAnswer } from '../../src/review/verification.js';
import { reliesSchema, shownPrompt } from '../../src/testlab/authored.js';
import { loadCase, loadCorpus, type TestLabCase } from '../../src/testlab/case.js';
import { answerFindings, answerName, deriveLines } from '../../src/testlab/derive.js';
import { answerFileOf, isVerificationCall } from '../../src/testlab/replay-provider.js';
import { runTestLab, selectCases } from '../../src/testlab/runner.js';

const corpus = join(process.cwd(), 'fixtures/testlab');
const LEGACY = /^part-(\d+)\.txt$/;

/** An answer every review call accepts: nothing found (the derivation run is only read for its prompts). */
const EMPTY_REVIEW = JSON.stringify({
  overview: 'Read for its prompt.',
  importantFiles: [],
  findings: [],
  priorFindingDispositions: [],
  missingValidations: [],
  crossRepoImpact: [],
  sequenceDiagram: '',
  competitorComparison: {
    available: false,
    winner: 'unclear',
    summary: 'none',
    confidence: 1,
    agreements: [],
    competitorMisses: [],
    ownMisses: [],
    strongerCompetitorFindings: [],
    strongerOwnFindings: [],
    actionItems: [],
  },
  summary: 'Read for its prompt.',
  bulletHighlights: [],
  reasoning: '',
  confidenceScore: 3,
  verdict: 'clear',
  mergeVerdict: 'Read for its prompt.',
});
const EMPTY_SYNTHESIS = JSON.stringify({
  overview: 'Read for its prompt.',
  summary: 'Read for its prompt.',
  verdict: 'clear',
  confidenceScore: 3,
  bulletHighlights: [],
  reasoning: '',
  mergeVerdict: 'Read for its prompt.',
  duplicates: [],
});

/** Reads each review part's prompt: which files part n of which case holds. */
class PromptReader implements ModelProvider {
  readonly name = 'replay' as const;
  readonly model = 'prompt-reader';
  readonly maxTokens = null;
  readonly parts = new Map<string, Map<number, string[]>>();

  async complete(req: ModelRequest): Promise<ModelResponse> {
    let text = EMPTY_REVIEW;
    if (isVerificationCall(req)) text = confirmingAnswer(req.messages.at(-1)?.content ?? '');
    else if (req.system === SYNTHESIS_SYSTEM) text = EMPTY_SYNTHESIS;
    else {
      const { caseName } = answerFileOf(req);
      const shown = shownPrompt(req.messages[0]?.content ?? '');
      if (caseName) {
        const parts = this.parts.get(caseName) ?? new Map<number, string[]>();
        parts.set(shown.part, shown.files);
        this.parts.set(caseName, parts);
      }
    }
    return {
      text,
      usage: { inputTokens: 0, outputTokens: 0 },
      costUsd: 0,
      provider: 'replay',
      model: this.model,
      durationMs: 0,
    };
  }
}

/** The files each part of each case's review holds, read from the prompts of one replay run. */
async function partFiles(cases: readonly TestLabCase[]): Promise<Map<string, Map<number, string[]>>> {
  const reader = new PromptReader();
  await runTestLab({
    corpus,
    cases: cases.map((c) => c.name).join(','),
    concurrency: 4,
    env: {},
    provider: 'replay',
    log: pino({ level: 'silent' }),
    replayProvider: () => reader,
  });
  return reader.parts;
}

/**
 * Renames a case's `part-<n>.txt` answers by what they cover: the files part n's prompt held and the files
 * its findings are about (an answer written for an older packing may name a file that part no longer
 * holds). A part the review no longer has leaves its answer covering its findings' files; without findings
 * it is removed (nothing would ever be served from it). Returns each new name's covered files.
 */
function convert(c: TestLabCase, parts: ReadonlyMap<number, string[]>): Map<string, string[]> {
  const covers = new Map<string, string[]>();
  const dir = join(c.dir, 'answers');
  const changed = new Set(c.files.filter((f) => f.changed).map((f) => f.path));
  for (const [file, text] of c.answers) {
    const m = LEGACY.exec(file);
    if (!m) continue;
    const about = answerFindings(text)
      .map((f) => f.path)
      .filter((p): p is string => typeof p === 'string' && changed.has(p));
    const files = [...new Set([...(parts.get(Number(m[1])) ?? []), ...about])];
    if (files.length === 0) {
      rmSync(join(dir, file));
      console.log(`${c.name}: answers/${file} removed: the review has no part ${m[1]} and it finds nothing`);
      continue;
    }
    const base = answerName(c, text, files);
    let name = base;
    for (let i = 2; covers.has(name) || existsSync(join(dir, `${name}.txt`)); i++) name = `${base}-${i}`;
    renameSync(join(dir, file), join(dir, `${name}.txt`));
    covers.set(name, files);
    console.log(`${c.name}: answers/${file} -> answers/${name}.txt (covers ${files.length} file(s))`);
  }
  return covers;
}

const HEADER = [
  '# The files this authored answer reviewed (it is served to whichever review part holds one of them) and',
  "# the lines it relies on: replay serves it only when that part's prompt shows each line with this number",
  '# and this text. Derived by scripts/testlab/derive-relies.ts (re-run it after editing the answer or after/).',
].join('\n');

/** Writes the relies file of every authored answer of a case; `covers` from conversion or the file. */
function writeRelies(c: TestLabCase, converted: ReadonlyMap<string, string[]>): number {
  const dir = join(c.dir, 'answers');
  const fresh = loadCase(c.dir);
  let written = 0;
  for (const [file, text] of fresh.answers) {
    if (!file.endsWith('.txt') || file === 'synthesis.txt' || LEGACY.test(file) || file.includes('.repair.'))
      continue;
    const name = file.slice(0, -'.txt'.length);
    const reliesFile = join(dir, `${name}.relies.yml`);
    const covers =
      converted.get(name) ??
      (existsSync(reliesFile)
        ? reliesSchema.shape.covers.parse(parseYaml(readFileSync(reliesFile, 'utf8')).covers)
        : null);
    if (!covers)
      throw new Error(`${c.name}: answers/${file} has no relies file to read its covered files from`);
    const lines = deriveLines(fresh, text, covers);
    writeFileSync(reliesFile, `${HEADER}\n${stringify({ covers, lines }, { lineWidth: 0 })}`);
    written++;
  }
  return written;
}

const all = selectCases(loadCorpus(corpus), process.argv[2]).filter(
  (c) => !c.meta.liveOnly && c.answers.size > 0,
);
const legacy = all.filter((c) => [...c.answers.keys()].some((f) => LEGACY.test(f)));
const parts = legacy.length > 0 ? await partFiles(legacy) : new Map<string, Map<number, string[]>>();
let total = 0;
for (const c of all) {
  const converted = legacy.includes(c)
    ? convert(c, parts.get(c.name) ?? new Map())
    : new Map<string, string[]>();
  total += writeRelies(c, converted);
}
console.log(
  `derive-relies: ${total} relies file(s) written for ${all.length} case(s), ${legacy.length} converted`,
);
