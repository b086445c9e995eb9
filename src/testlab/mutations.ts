import type { Budgeted } from '../review/budget.stage.js';
import type { Parsed } from '../review/parse.stage.js';
import type { Plan } from '../review/plan.stage.js';
import type { StageTap } from '../review/run-trace.js';

/**
 * Breakages of the review pipeline a Test Lab run must notice (docs/testlab.md, "What replay can fail
 * on"), injected through the engine's stage tap (`runTestLab({ tap })`), never by editing files. The
 * mutation test (test/integration/testlab-mutations.test.ts) runs the corpus under each and checks it as
 * `npm run testlab` does, against fixtures/testlab/baseline.json.
 */

const SURROUNDING = '\n__surrounding code at the head (context, not change)__\n';

/** The diff deleted from the prompt: each file of each part keeps only its surrounding code, if any. */
export const deleteDiff: StageTap = (stage, output) => {
  if (stage !== 'budget') return output;
  const b = output as Budgeted;
  const chunks = b.input.chunks.map((c) => ({
    ...c,
    files: c.files.map((f) => {
      const at = f.patch.indexOf(SURROUNDING);
      return { ...f, patch: at < 0 ? '' : f.patch.slice(at + 1) };
    }),
  }));
  return { ...b, input: { ...b.input, chunks } };
};

/** Every line number the prompt shows (diff hunks and surrounding code) shifted by one. */
export const shiftLineNumbers: StageTap = (stage, output) => {
  if (stage !== 'budget') return output;
  const b = output as Budgeted;
  const shift = (patch: string) =>
    patch.replace(/^( *)(\d+)( [ +])/gm, (_m, pad: string, n: string, mark: string) => {
      const next = String(Number(n) + 1);
      return `${pad.slice(Math.max(0, next.length - n.length))}${next}${mark}`;
    });
  const chunks = b.input.chunks.map((c) => ({
    ...c,
    files: c.files.map((f) => ({ ...f, patch: shift(f.patch) })),
  }));
  return { ...b, input: { ...b.input, chunks } };
};

/** A parser that loses a finding: the first finding of each review's answers is dropped. */
export const dropFinding: StageTap = (stage, output) => {
  if (stage !== 'parse') return output;
  const p = output as Parsed;
  const at = p.outputs.findIndex((o) => o.output.findings.length > 0);
  if (at < 0) return output;
  const outputs = p.outputs.map((o, i) =>
    i === at ? { ...o, output: { ...o.output, findings: o.output.findings.slice(1) } } : o,
  );
  return { ...p, outputs };
};

/** No surrounding code: the files go to the budget without it, so they are packed into parts anew. */
export const noSurroundingCode: StageTap = (stage, output) => {
  if (stage !== 'plan') return output;
  const p = output as Plan;
  return {
    ...p,
    files: p.files.map((f) => {
      const { context: _context, ...rest } = f;
      return rest;
    }),
    withContext: 0,
  };
};

/** Taps run one after the other. */
export function taps(...all: StageTap[]): StageTap {
  return (stage, output, input) => all.reduce((out, tap) => tap(stage, out, input), output);
}

/** A tap that only watches: the files of each part of each review, by repository (`testlab/<case>`). */
export function packingRecorder(): { tap: StageTap; parts: Map<string, string[][]> } {
  const parts = new Map<string, string[][]>();
  const tap: StageTap = (stage, output) => {
    if (stage === 'budget') {
      const b = output as Budgeted;
      parts.set(
        b.context.repo,
        b.input.chunks.map((c) => c.files.map((f) => f.path)),
      );
    }
    return output;
  };
  return { tap, parts };
}
