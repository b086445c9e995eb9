import { createRequire } from 'node:module';
import { Language, Parser, type Node } from 'web-tree-sitter';
import { cachedReader } from './concurrency.js';
import { parsePatch } from './diff.js';

/**
 * Surrounding code (the review issue, item 4): for each hunk of a changed file, the enclosing function or
 * class at the head commit, marked as context and not change, so the model sees what the changed lines
 * live in. Parsed with tree-sitter (`web-tree-sitter`, grammars from `@vscode/tree-sitter-wasm`) for the
 * common languages; for the rest a plain-text fallback reads indentation and blank lines.
 */

/** Grammar file of each supported language, by file extension. */
const GRAMMARS: Record<string, string> = {
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  py: 'python',
  go: 'go',
  java: 'java',
  rs: 'rust',
  rb: 'ruby',
  cs: 'c-sharp',
  cpp: 'cpp',
  cc: 'cpp',
  hpp: 'cpp',
  php: 'php',
};

/** Node types that enclose code worth showing: functions, methods, classes and their kin. */
const ENCLOSING =
  /^(function_declaration|function_definition|function_item|function_expression|generator_function_declaration|arrow_function|method_definition|method_declaration|method|singleton_method|constructor_declaration|func_literal|class_declaration|class_definition|class|class_specifier|struct_item|impl_item|trait_item|interface_declaration|enum_declaration|module|namespace_definition|record_declaration|lambda)$/;

/** Lines of one enclosing block shown at most; a longer one is shown by its head and tail. */
export const MAX_BLOCK_LINES = 80;
const HEAD_LINES = 30;
const TAIL_LINES = 10;

const require = createRequire(import.meta.url);
let init: Promise<void> | null = null;
/** Each grammar is loaded once per process (null when it cannot be). */
const loadLanguage = cachedReader((name) =>
  Language.load(require.resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${name}.wasm`)).catch(() => null),
);

function grammarOf(path: string): string | null {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return path.includes('.') ? (GRAMMARS[ext] ?? null) : null;
}

async function language(name: string): Promise<Language | null> {
  init ??= Parser.init();
  await init;
  return loadLanguage(name);
}

export type Block = { start: number; end: number; kind: string };

/** Files larger than this are not parsed: the plain-text fallback reads only near the hunks. */
export const MAX_PARSE_CHARS = 200_000;

type Finder = { find(from: number, to: number): Block | null; dispose(): void };

/** Parses a file once and finds the enclosing definition of any line range in it; null without a grammar. */
async function treeFinder(path: string, source: string): Promise<Finder | null> {
  const name = grammarOf(path);
  if (!name) return null;
  const lang = await language(name);
  if (!lang) return null;
  const parser = new Parser();
  parser.setLanguage(lang);
  const tree = parser.parse(source);
  parser.delete();
  if (!tree) return null;
  const lines = source.split('\n');
  return {
    find(from, to) {
      // The smallest node spanning the hunk's lines, then outwards to the first definition.
      const indent = (lines[from - 1] ?? '').search(/\S/);
      let node: Node | null = tree.rootNode.descendantForPosition(
        { row: from - 1, column: Math.max(0, indent) },
        { row: to - 1, column: Math.max(0, (lines[to - 1] ?? '').length - 1) },
      );
      // The root (a Python `module`, a Ruby `program`) is the whole file, not an enclosing block.
      while (node && node.parent) {
        // `export function f` wraps the definition: the export is its first line.
        const inner = node.type === 'export_statement' ? node.childForFieldName('declaration') : null;
        const kind = ENCLOSING.test(node.type)
          ? node.type
          : inner && ENCLOSING.test(inner.type)
            ? inner.type
            : null;
        if (kind && node.startPosition.row + 1 <= from && node.endPosition.row + 1 >= to) {
          return { start: node.startPosition.row + 1, end: node.endPosition.row + 1, kind };
        }
        node = node.parent;
      }
      return null;
    },
    dispose: () => tree.delete(),
  };
}

/** The smallest enclosing definition of lines `from`..`to` (1-based), by tree-sitter, or null. */
export async function parsedBlock(
  path: string,
  source: string,
  from: number,
  to: number,
): Promise<Block | null> {
  const finder = await treeFinder(path, source);
  if (!finder) return null;
  try {
    return finder.find(from, to);
  } finally {
    finder.dispose();
  }
}

const indentOf = (line: string) => (line.match(/^[ \t]*/)?.[0] ?? '').replace(/\t/g, '    ').length;

/**
 * The plain-text fallback: upward to the nearest line indented less than the hunk (the block's header),
 * downward to the next such line (its closer); at the top level, the paragraph between blank lines.
 */
export function textBlock(lines: readonly string[], from: number, to: number): Block {
  const body = lines.slice(from - 1, to).filter((l) => l.trim() !== '');
  const base = body.length > 0 ? Math.min(...body.map(indentOf)) : 0;
  let start = from;
  let end = to;
  if (base === 0) {
    while (start > 1 && lines[start - 2]!.trim() !== '' && from - start < MAX_BLOCK_LINES) start--;
    while (end < lines.length && lines[end]!.trim() !== '' && end - to < MAX_BLOCK_LINES) end++;
    return { start, end, kind: 'paragraph' };
  }
  while (start > 1 && from - start < MAX_BLOCK_LINES) {
    const above = lines[start - 2]!;
    start--;
    if (above.trim() !== '' && indentOf(above) < base) break;
  }
  while (end < lines.length && end - to < MAX_BLOCK_LINES) {
    const below = lines[end]!;
    end++;
    if (below.trim() !== '' && indentOf(below) < base) break;
  }
  return { start, end, kind: 'indented block' };
}

/**
 * A block's lines that the prompt does not already show (`shown`: the diff's new-side lines and the
 * earlier blocks'), numbered as in the diff; each run of lines left out because the diff shows them is one
 * marker line. A block with more than 80 such lines shows its first 30 and last 10. Null when the block
 * adds no line.
 */
function showBlock(lines: readonly string[], block: Block, shown: ReadonlySet<number>): string | null {
  const width = String(block.end).length;
  const pad = ' '.repeat(width);
  const row = (n: number) => `${String(n).padStart(width)}  ${lines[n - 1] ?? ''}`;
  const added: number[] = [];
  for (let n = block.start; n <= block.end; n++) if (!shown.has(n)) added.push(n);
  if (added.length === 0) return null;
  const kept =
    added.length <= MAX_BLOCK_LINES
      ? added
      : [...added.slice(0, HEAD_LINES), ...added.slice(added.length - TAIL_LINES)];
  const inDiff = (from: number, to: number) =>
    `${pad}  … ${from === to ? `line ${from}` : `lines ${from}-${to}`}: in the diff`;
  const out: string[] = [];
  let previous = block.start - 1;
  for (const n of kept) {
    if (n > previous + 1) {
      const gap = added.filter((m) => m > previous && m < n).length;
      out.push(gap === 0 ? inDiff(previous + 1, n - 1) : `${pad}  … [${gap} lines not shown]`);
    }
    out.push(row(n));
    previous = n;
  }
  if (previous < block.end) out.push(inDiff(previous + 1, block.end));
  return out.join('\n');
}

/**
 * The surrounding code of a file's hunks at the head: the enclosing block of each hunk with new-side
 * lines (deletion-only hunks have none), each block once, in file order, showing only the lines the diff
 * does not (a run of lines the diff shows is one marker line naming them). Empty when there is nothing
 * to add (a new file is shown whole by its diff; a block the diff shows whole adds no line).
 */
export async function surroundingCode(path: string, patch: string, source: string): Promise<string> {
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  // Hunks with new-side lines that do not already show the whole file.
  const hunks = parsePatch(patch).filter(
    (h) => h.newCount > 0 && !(h.newStart <= 1 && h.newStart + h.newCount - 1 >= lines.length),
  );
  if (hunks.length === 0) return '';
  const finder = source.length <= MAX_PARSE_CHARS ? await treeFinder(path, source) : null;
  const blocks: Block[] = [];
  try {
    for (const hunk of hunks) {
      const from = hunk.newStart;
      const to = hunk.newStart + hunk.newCount - 1;
      const block = finder?.find(from, to) ?? textBlock(lines, from, to);
      // Nothing to add when the hunk already shows the whole block.
      if (block.start >= from && block.end <= to) continue;
      if (blocks.some((b) => b.start <= block.start && b.end >= block.end)) continue;
      blocks.push(block);
    }
  } finally {
    finder?.dispose();
  }
  if (blocks.length === 0) return '';
  blocks.sort((a, b) => a.start - b.start);
  // The lines the diff shows (its hunks' new side), then those of the blocks already shown.
  const shown = new Set<number>();
  for (const hunk of parsePatch(patch)) {
    for (const line of hunk.lines) if (line.newLine !== null) shown.add(line.newLine);
  }
  const out: string[] = [];
  for (const b of blocks) {
    const text = showBlock(lines, b, shown);
    if (text === null) continue;
    out.push(`(${b.kind}, lines ${b.start}-${b.end})\n${text}`);
    for (let n = b.start; n <= b.end; n++) shown.add(n);
  }
  return out.join('\n\n');
}
