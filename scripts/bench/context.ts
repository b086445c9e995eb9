/**
 * Context benchmark: builds the review input (prioritise, tokenise, clip, chunk) for a synthetic pull
 * request of 3,000 files and 200,000 changed lines. Prints the time, the peak memory (max RSS), the chunk
 * count and the largest chunk against the budget, and checks that every file is accounted for (in a
 * chunk, or listed as not reviewed) and that no chunk is over the budget. The target is for the default
 * budget (what a worker uses); a second pass with room for every file (so every patch is tokenised) is
 * printed for reference. The timed build includes what a review adds around the diffs: the surrounding
 * code of the first 50 changed source files (tree-sitter over their head text, rebuilt from the patch) and
 * every part's prompt with 6,000 tokens of repository instructions. The grammars are loaded first, once, as a
 * server does at its first review, and that time is printed on its own.
 *
 *   npm run bench:context
 */
import { resourceUsage } from 'node:process';
import {
  buildReviewInput,
  classifyFile,
  DEFAULT_BUDGET,
  prioritiseFiles,
  type ChangedFile,
  type ContextBudget,
} from '../../src/review/context.js';
import { chunkPrompt, type PromptContext } from '../../src/review/prompt.js';
import { surroundingCode } from '../../src/review/surrounding.js';

/**
 * A file's change as a review meets it in the middle of existing code: a hunk of 60 changed lines at line
 * 102 of a head text that wraps them in a function with 100 untouched lines on each side, written as valid
 * code of the file's language (TypeScript, Python or Go), as real files are.
 */
function inExistingCode(file: ChangedFile, i: number): { patch: string; source: string } {
  const ext = file.filename.slice(file.filename.lastIndexOf('.') + 1);
  const line = (name: string, k: number) =>
    ext === 'py'
      ? `    ${name}_${k} = service.call(request, ${k})`
      : ext === 'go'
        ? `\t${name}${k} := service.Call(request, ${k})`
        : `  const ${name}${k} = await service.call(request, ${k});`;
  const head =
    ext === 'py'
      ? `def handler_${i}(service, request):`
      : ext === 'go'
        ? `func handler${i}(service Service, request Request) {`
        : `export async function handler${i}(service: Service, request: Request) {`;
  const tail = ext === 'py' ? '    return None' : '}';
  const lines = (name: string, from: number, n: number) =>
    Array.from({ length: n }, (_, k) => line(name, from + k));
  const changed = lines('changed', 0, 60);
  const source = [head, ...lines('kept', 0, 100), ...changed, ...lines('kept', 100, 100), tail].join('\n');
  const patch = `@@ -102,60 +102,60 @@\n${changed.map((l) => `+${l}`).join('\n')}`;
  return { patch, source };
}

const INSTRUCTIONS = 'Handlers validate their input and log the request id. '.repeat(600);

const PROMPT: PromptContext = {
  repo: 'bench/monorepo',
  number: 1,
  title: 'A large change',
  body: 'Migrates every service.',
  author: 'dev',
  baseRef: 'main',
  headRef: 'migrate',
  headSha: 'f'.repeat(40),
  labels: [],
  customInstructions: '',
  memory: [],
  prior: [],
  incremental: null,
  fullReviewNote: null,
  allPaths: [],
  instructions: [{ path: 'AGENTS.md', appliesTo: 'every file', text: INSTRUCTIONS }],
  competitors: [],
};

const FILES = 3000;
const LINES = 200_000;

function syntheticPullRequest(): ChangedFile[] {
  const files: ChangedFile[] = [];
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  // A skewed spread: a few huge files, many small ones.
  const weights = Array.from({ length: FILES }, (_, i) => (i < 6 ? 12 : 1) / (1 + i * 0.05) + rnd() * 0.2);
  const total = weights.reduce((a, b) => a + b, 0);
  const words = [
    'const',
    'value',
    'await',
    'return',
    'config',
    'request',
    'handler',
    'error',
    'if',
    'for',
    'user',
    'id',
  ];
  for (let i = 0; i < FILES; i++) {
    const n = Math.max(1, Math.round((weights[i]! / total) * LINES));
    const dir = i % 10 === 0 ? 'vendor/lib' : i % 13 === 0 ? 'dist' : `src/module${i % 50}`;
    const name =
      i === 7 ? 'package-lock.json' : `${dir}/file${i}.${i % 3 === 0 ? 'ts' : i % 3 === 1 ? 'py' : 'go'}`;
    const body: string[] = [`@@ -1,${Math.floor(n / 3)} +1,${n} @@`];
    for (let l = 0; l < n; l++) {
      const w = Array.from(
        { length: 4 + Math.floor(rnd() * 8) },
        () => words[Math.floor(rnd() * words.length)],
      );
      body.push(`${l % 4 === 0 ? '-' : '+'}    ${w.join(' ')}(${Math.floor(rnd() * 1e6)}); // line ${l}`);
    }
    const additions = Math.ceil(n * 0.75);
    files.push({
      filename: name,
      status: i % 97 === 0 ? 'removed' : 'modified',
      additions,
      deletions: n - additions,
      changes: n,
      patch: i % 211 === 0 ? undefined : body.join('\n'),
    });
  }
  return files;
}

const files = syntheticPullRequest();
const changedLines = files.reduce((s, f) => s + f.changes, 0);

async function measure(label: string, budget: ContextBudget) {
  // The synthetic head texts are made before the clock starts: making them is not the review's work.
  const sources = prioritiseFiles(files)
    .filter((f) => f.patch && f.status !== 'added' && classifyFile(f.filename) === 'source')
    .slice(0, 50)
    .map((f, i) => ({ file: f, ...inExistingCode(f, i) }));
  const before = process.memoryUsage().rss;
  const start = performance.now();
  const withContext = new Map<string, string>();
  for (const { file, patch, source } of sources) {
    const code = await surroundingCode(file.filename, patch, source);
    if (code !== '') withContext.set(file.filename, code);
  }
  const surroundingMs = performance.now() - start;
  const input = buildReviewInput(
    files.map((f) => (withContext.has(f.filename) ? { ...f, context: withContext.get(f.filename)! } : f)),
    budget,
  );
  const buildMs = performance.now() - start - surroundingMs;
  const prompt = { ...PROMPT, allPaths: files.map((f) => f.filename) };
  let promptChars = 0;
  for (const chunk of input.chunks) promptChars += chunkPrompt(prompt, chunk, input.chunks.length).length;
  const ms = performance.now() - start;
  const peakMb = resourceUsage().maxRSS / 1024;
  const inChunks = new Set(input.chunks.flatMap((c) => c.files.map((f) => f.path)));
  const listed = new Set(input.notReviewed.map((f) => f.path));
  const unaccounted = files.filter((f) => !inChunks.has(f.filename) && !listed.has(f.filename)).length;
  const largest = Math.max(...input.chunks.map((c) => c.tokens));
  const over = input.chunks.filter((c) => c.tokens > budget.chunkTokens).length;
  console.log(
    `${label}: budget ${budget.chunkTokens} tokens per chunk, ${budget.fileTokens} per file, at most ${budget.maxChunks} chunks`,
  );
  console.log(
    `  surrounding code for ${withContext.size} of ${sources.length} files; ${input.chunks.length} part prompts, ${(promptChars / 1e6).toFixed(1)} M characters with instructions`,
  );
  console.log(
    `  build time ${ms.toFixed(0)} ms (surrounding code ${surroundingMs.toFixed(0)} ms, parts ${buildMs.toFixed(0)} ms, prompts ${(ms - surroundingMs - buildMs).toFixed(0)} ms), peak RSS ${peakMb.toFixed(0)} MB (RSS before ${(before / 1048576).toFixed(0)} MB)`,
  );
  console.log(
    `  chunks ${input.chunks.length}, largest ${largest} tokens, over budget ${over}; files reviewed ${inChunks.size}, clipped ${input.clipped.length}, not reviewed ${input.notReviewed.length}, unaccounted ${unaccounted}`,
  );
  return { met: ms < 1000 && peakMb < 300 && unaccounted === 0 && over === 0, ms, peakMb };
}

console.log(`context benchmark: ${files.length} files, ${changedLines} changed lines`);
// A server loads each grammar once, at its first review; the build below is what every review costs.
const loadStart = performance.now();
for (const ext of ['ts', 'py', 'go']) {
  await surroundingCode(`warm.${ext}`, '@@ -2,1 +2,1 @@\n+x', 'a\nx\nb\nc');
}
console.log(`  grammars loaded in ${(performance.now() - loadStart).toFixed(0)} ms (once per process)`);
const pass = await measure('default budget', DEFAULT_BUDGET);
await measure('reference, room for every file (every patch tokenised)', {
  ...DEFAULT_BUDGET,
  maxChunks: 10_000,
});
console.log(
  `bench:context: ${pass.ms.toFixed(0)} ms, peak RSS ${pass.peakMb.toFixed(0)} MB (target under 1 s, under 300 MB, every file accounted for, no part over budget): ${pass.met ? 'met' : 'missed'}`,
);
