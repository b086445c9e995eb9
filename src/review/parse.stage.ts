import type { PassResult } from './pass.js';
import type { ReviewChunk } from './context.js';
import type { ReviewOutput } from './output.schema.js';
import type { Stage } from './stage.js';

/**
 * Stage `parse`: the primary pass's answers as the review's candidates. The call stage read each answer
 * as it arrived (parse-json.ts finds and reads its JSON, parse-output.ts normalises it); here the parts'
 * readings become one list of candidate outputs in part order, their warnings named by part, and what
 * could not be used is counted and said: findings that could not be read, parts that could not be
 * analysed. Nothing is dropped silently.
 */

export type ParseInput = {
  /** The primary pass. */
  called: { primary: PassResult };
  /** The parts it reviewed (for the part numbers and file counts of the lines it writes). */
  budgeted: { input: { chunks: ReviewChunk[] } };
};

export type Parsed = {
  /** The candidate outputs, one per usable answer (a split part has two or more), in part order. */
  outputs: Array<{ chunk: number; output: ReviewOutput }>;
  /** What reading the answers normalised, prefixed `part N:` when the review has several parts. */
  warnings: string[];
  /** Findings the model gave that could not be used (no path, no title), over all parts. */
  unreadable: number;
  /** Memory ids the findings cited that the model was not given, removed from them, over all parts. */
  removedContextIds: number;
  /** The parts that could not be analysed, with their first error. */
  failed: ReadonlyMap<number, string>;
  /** Missing-validation lines: the unreadable findings and each part that could not be analysed. */
  missing: string[];
};

async function parse(input: ParseInput): Promise<Parsed> {
  const pass = input.called.primary;
  const parts = input.budgeted.input.chunks;
  const warnings = pass.outputs.flatMap((o) =>
    o.warnings.map((w) => (parts.length > 1 ? `part ${o.chunk + 1}: ${w}` : w)),
  );
  const unreadable = pass.outputs.reduce((n, o) => n + o.unreadable, 0);
  const removedContextIds = pass.outputs.reduce((n, o) => n + (o.removedContextIds ?? 0), 0);
  const missing: string[] = [];
  if (unreadable > 0) {
    missing.push(
      `${unreadable} finding${unreadable === 1 ? '' : 's'} from the model could not be read (no path or no title)`,
    );
  }
  for (const [chunk, error] of pass.failed) {
    const count = parts[chunk]?.files.length ?? 0;
    missing.push(`Part ${chunk + 1} (${count} file(s)) could not be analysed: ${error}`);
  }
  return {
    outputs: pass.outputs.map(({ chunk, output }) => ({ chunk, output })),
    warnings,
    unreadable,
    removedContextIds,
    failed: pass.failed,
    missing,
  };
}

export const parseStage: Stage<ParseInput, Parsed> = {
  name: 'parse',
  run: parse,
  counts: (p) => ({
    outputs: p.outputs.length,
    candidates: p.outputs.reduce((n, o) => n + o.output.findings.length, 0),
    unreadableFindings: p.unreadable,
    removedContextIds: p.removedContextIds,
    failedParts: p.failed.size,
    warnings: p.warnings.length,
  }),
};
