/**
 * Context benchmark: builds the review input (prioritise, tokenise, clip, chunk) for a synthetic pull
 * request of 3,000 files and 200,000 changed lines. Prints the time, the peak memory (max RSS), the chunk
 * count and the largest chunk against the budget, and checks that every file is accounted for (in a
 * chunk, or listed as not reviewed) and that no chunk is over the budget. The target is for the default
 * budget (what a worker uses); a second pass with room for every file (so every patch is tokenised) is
 * printed for reference.
 *
 *   npm run bench:context
 */
import { resourceUsage } from 'node:process';
import {
  buildReviewInput,
  DEFAULT_BUDGET,
  type ChangedFile,
  type ContextBudget,
} from '../../src/review/context.js';

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

function measure(label: string, budget: ContextBudget) {
  const before = process.memoryUsage().rss;
  const start = performance.now();
  const input = buildReviewInput(files, budget);
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
    `  build time ${ms.toFixed(0)} ms, peak RSS ${peakMb.toFixed(0)} MB (RSS before ${(before / 1048576).toFixed(0)} MB)`,
  );
  console.log(
    `  chunks ${input.chunks.length}, largest ${largest} tokens, over budget ${over}; files reviewed ${inChunks.size}, clipped ${input.clipped.length}, not reviewed ${input.notReviewed.length}, unaccounted ${unaccounted}`,
  );
  return ms < 1000 && peakMb < 300 && unaccounted === 0 && over === 0;
}

console.log(`context benchmark: ${files.length} files, ${changedLines} changed lines`);
const pass = measure('default budget', DEFAULT_BUDGET);
console.log(
  `target under 1 s, under 300 MB, every file accounted for, no chunk over budget: ${pass ? 'met' : 'NOT met'}`,
);
measure('reference, room for every file (every patch tokenised)', { ...DEFAULT_BUDGET, maxChunks: 10_000 });
