import { countTokens } from 'gpt-tokenizer';
import { numberPatch } from './diff.js';

/**
 * Building the review input of a pull request within a token budget (review-engine 2.2; the issue's
 * "never silently truncated" rule). Files are prioritised, large patches clipped with a marker, and the
 * rest packed into chunks that each fit the model's budget. Every changed file ends up either in a chunk
 * or in `notReviewed` with the reason.
 */

/** One changed file as GitHub's "list pull request files" gives it. */
export type ChangedFile = {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
  changes: number;
  /** Absent for binary files and diffs GitHub does not return (too large). */
  patch?: string | null;
  previous_filename?: string | null;
  /** The enclosing code of its hunks at the head (surrounding.ts), shown after the diff as context. */
  context?: string | null;
};

export type FileKind = 'source' | 'generated' | 'vendored' | 'lock';

export type ChunkFile = {
  path: string;
  /** The path before a rename. */
  previousPath?: string | null;
  kind: FileKind;
  status: string;
  /** The patch as sent, in the numbered form of `diff.ts` (clipped when `clipped`). */
  patch: string;
  tokens: number;
  clipped: boolean;
  /** Lines of the original patch left out by clipping. */
  omittedLines: number;
};

export type ReviewChunk = { index: number; files: ChunkFile[]; tokens: number };

export type NotReviewed = { path: string; reason: string };

export type ReviewInput = {
  chunks: ReviewChunk[];
  notReviewed: NotReviewed[];
  /** Files reviewed only in part (clipped patches). */
  clipped: Array<{ path: string; omittedLines: number }>;
  /** Human lines for `missingValidations`. */
  missingValidations: string[];
  totalFiles: number;
  budget: ContextBudget;
};

export type ContextBudget = {
  /** Tokens of diff one chunk may carry (the model's context minus prompt and answer). */
  chunkTokens: number;
  /** Most tokens one file's patch may take before it is clipped. */
  fileTokens: number;
  /** Most chunks (model calls) per review; files beyond are listed as not reviewed. */
  maxChunks: number;
};

export const DEFAULT_BUDGET: ContextBudget = { chunkTokens: 60_000, fileTokens: 12_000, maxChunks: 12 };

const LOCK_FILES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'cargo.lock',
  'go.sum',
  'poetry.lock',
  'pipfile.lock',
  'gemfile.lock',
  'composer.lock',
  'podfile.lock',
  'mix.lock',
  'flake.lock',
  'packages.lock.json',
  'gradle.lockfile',
]);
const VENDORED = /(^|\/)(vendor|vendors|node_modules|third[_-]?party|bower_components|external|\.yarn)\//i;
const GENERATED =
  /(^|\/)(dist|build|out|gen|generated|__generated__|coverage)\/|\.min\.(js|css)$|\.map$|\.snap$|\.pb\.(go|cc|h)$|_pb2\.py$|\.g\.dart$|\.generated\.\w+$|_generated\.\w+$|\.lock$|\.svg$/i;

/** What a changed file is, by its path: lock files, vendored code and generated output are reviewed last. */
export function classifyFile(path: string): FileKind {
  const base = path.split('/').pop()!.toLowerCase();
  if (LOCK_FILES.has(base)) return 'lock';
  if (VENDORED.test(path)) return 'vendored';
  if (GENERATED.test(path)) return 'generated';
  return 'source';
}

const KIND_RANK: Record<FileKind, number> = { source: 0, generated: 1, vendored: 2, lock: 3 };

/**
 * Review order: source before generated, vendored and lock files; within a kind, files that add code
 * before files that only delete it (removed files last), then the larger change first, then by path.
 */
export function prioritiseFiles(files: readonly ChangedFile[]): ChangedFile[] {
  // Each file is classified once, not in every comparison.
  const keyed = files.map((file) => ({
    file,
    rank: KIND_RANK[classifyFile(file.filename)],
    deletes: file.status === 'removed' || file.additions === 0 ? 1 : 0,
  }));
  keyed.sort((a, b) => {
    if (a.rank !== b.rank) return a.rank - b.rank;
    if (a.deletes !== b.deletes) return a.deletes - b.deletes;
    if (a.file.changes !== b.file.changes) return b.file.changes - a.file.changes;
    return a.file.filename < b.file.filename ? -1 : a.file.filename > b.file.filename ? 1 : 0;
  });
  return keyed.map((k) => k.file);
}

/** Tokens of a text, by the o200k tokenizer (GPT-4o family); used for every provider's budget. */
export function tokensOf(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

/** No tokenizer yields fewer than one token per this many characters of code. */
const MAX_CHARS_PER_TOKEN = 8;

/**
 * Clips a patch to at most `maxTokens`, keeping whole lines from the top and appending a marker that says
 * how many lines were left out. Returns the text and its token count.
 */
export function clipPatch(
  patch: string,
  maxTokens: number,
): { text: string; tokens: number; clipped: boolean; omittedLines: number } {
  // A patch that could fit is counted exactly; a far larger one is not tokenised past what could fit.
  if (patch.length <= maxTokens * MAX_CHARS_PER_TOKEN) {
    const tokens = tokensOf(patch);
    if (tokens <= maxTokens) return { text: patch, tokens, clipped: false, omittedLines: 0 };
  }
  const lines = patch.split('\n');
  const markerFor = (omitted: number) =>
    `\n… [clipped by Verdict: ${omitted} more line(s) of this diff not shown]`;
  const room = Math.max(0, maxTokens - tokensOf(markerFor(lines.length)));
  // Keep whole lines from the top by their own counts (one pass), then check the result exactly.
  let kept = 0;
  let sum = 0;
  for (const line of lines) {
    const t = tokensOf(line) + 1;
    if (sum + t > room) break;
    sum += t;
    kept++;
  }
  for (;;) {
    const omitted = lines.length - kept;
    const text = lines.slice(0, kept).join('\n') + markerFor(omitted);
    const tokens = tokensOf(text);
    if (tokens <= maxTokens || kept === 0) return { text, tokens, clipped: true, omittedLines: omitted };
    kept = Math.max(0, kept - Math.max(1, Math.ceil(kept / 20)));
  }
}

/** Per-file framing the prompt adds around a patch (header line and fence), counted against the chunk. */
export function fileHeader(file: Pick<ChunkFile, 'path' | 'status' | 'kind' | 'previousPath'>): string {
  const renamed =
    file.previousPath && file.previousPath !== file.path ? `, renamed from ${file.previousPath}` : '';
  return `### ${file.path} (${file.status}${renamed}${file.kind === 'source' ? '' : `, ${file.kind}`})\n\`\`\`\n`;
}
const FILE_FOOTER = '\n```\n';

function overBudget(budget: ContextBudget): string {
  return `over the review budget of ${budget.maxChunks} model calls`;
}
const FRAME_TOKENS_SLACK = 4;

/**
 * Builds the review input: prioritised files, clipped patches, chunks within `budget.chunkTokens`, at
 * most `budget.maxChunks` of them. Every file is accounted for: in a chunk, or in `notReviewed`.
 */
export function buildReviewInput(
  files: readonly ChangedFile[],
  budget: ContextBudget = DEFAULT_BUDGET,
): ReviewInput {
  const fileCap = Math.min(budget.fileTokens, budget.chunkTokens);
  const chunks: ReviewChunk[] = [];
  const notReviewed: NotReviewed[] = [];
  const clipped: ReviewInput['clipped'] = [];
  let current: ReviewChunk | null = null;
  for (const file of prioritiseFiles(files)) {
    const kind = classifyFile(file.filename);
    if (file.patch === undefined || file.patch === null || file.patch.trim() === '') {
      notReviewed.push({
        path: file.filename,
        reason:
          file.changes === 0 && file.status === 'renamed'
            ? 'renamed without changes'
            : 'no textual diff from GitHub (binary or too large)',
      });
      continue;
    }
    const previousPath = file.previous_filename ?? null;
    const frame = fileHeader({ path: file.filename, status: file.status, kind, previousPath }) + FILE_FOOTER;
    const frameTokens = tokensOf(frame) + FRAME_TOKENS_SLACK;
    // The last chunk allowed has no room left even for this file's frame: no need to tokenise the patch.
    if (
      chunks.length >= budget.maxChunks &&
      current &&
      current.tokens + frameTokens + 1 > budget.chunkTokens
    ) {
      notReviewed.push({ path: file.filename, reason: overBudget(budget) });
      continue;
    }
    // The model sees the numbered form: every line it can cite carries its new-side line number.
    const numbered =
      numberPatch(file.patch) +
      (file.context ? `\n__surrounding code at the head (context, not change)__\n${file.context}` : '');
    if (numbered === '') {
      notReviewed.push({ path: file.filename, reason: 'the diff from GitHub has no hunk' });
      continue;
    }
    const clip = clipPatch(numbered, Math.max(1, fileCap - frameTokens));
    const cost = clip.tokens + frameTokens;
    if (!current || current.tokens + cost > budget.chunkTokens) {
      if (chunks.length >= budget.maxChunks) {
        notReviewed.push({ path: file.filename, reason: overBudget(budget) });
        continue;
      }
      current = { index: chunks.length, files: [], tokens: 0 };
      chunks.push(current);
    }
    current.files.push({
      path: file.filename,
      previousPath,
      kind,
      status: file.status,
      patch: clip.text,
      tokens: cost,
      clipped: clip.clipped,
      omittedLines: clip.omittedLines,
    });
    current.tokens += cost;
    if (clip.clipped) clipped.push({ path: file.filename, omittedLines: clip.omittedLines });
  }
  const missingValidations: string[] = [];
  if (notReviewed.length > 0) {
    const shown = notReviewed.slice(0, 20).map((f) => `${f.path} (${f.reason})`);
    missingValidations.push(
      `${notReviewed.length} changed file(s) not reviewed: ${shown.join('; ')}${notReviewed.length > 20 ? `; and ${notReviewed.length - 20} more` : ''}`,
    );
  }
  if (clipped.length > 0) {
    const shown = clipped.slice(0, 20).map((f) => `${f.path} (${f.omittedLines} lines)`);
    missingValidations.push(
      `${clipped.length} large diff(s) reviewed only in part, the rest clipped: ${shown.join('; ')}${clipped.length > 20 ? `; and ${clipped.length - 20} more` : ''}`,
    );
  }
  return { chunks, notReviewed, clipped, missingValidations, totalFiles: files.length, budget };
}

/**
 * Splits a part in two (an answer cut at the output token limit): its files in two halves, or a single
 * file's shown diff in two halves of its lines, at a hunk boundary when there is one. Both halves keep the
 * part's index. Null when there is nothing left to split (one file of one line).
 */
export function splitChunk(chunk: ReviewChunk): [ReviewChunk, ReviewChunk] | null {
  const half = (files: ChunkFile[]): ReviewChunk => ({
    index: chunk.index,
    files,
    tokens: files.reduce((n, f) => n + f.tokens, 0),
  });
  if (chunk.files.length >= 2) {
    const mid = Math.ceil(chunk.files.length / 2);
    return [half(chunk.files.slice(0, mid)), half(chunk.files.slice(mid))];
  }
  const file = chunk.files[0];
  if (!file) return null;
  const lines = file.patch.split('\n');
  if (lines.length < 2) return null;
  const middle = Math.floor(lines.length / 2);
  // The hunk header nearest the middle, so that each half starts at a hunk; else the middle line.
  let cut = -1;
  for (let d = 0; d < middle && cut < 0; d++) {
    if (lines[middle + d]?.startsWith('@@ ')) cut = middle + d;
    else if (middle - d > 0 && lines[middle - d]!.startsWith('@@ ')) cut = middle - d;
  }
  if (cut <= 0) cut = middle;
  const part = (text: string): ChunkFile => ({ ...file, patch: text, tokens: tokensOf(text) });
  return [half([part(lines.slice(0, cut).join('\n'))]), half([part(lines.slice(cut).join('\n'))])];
}
