import type { PassResult } from './pass.js';
import type { ChangedFile } from './context.js';
import { checkAnchor, newSideIndex } from './diff.js';
import { normaliseFindingPath } from './fingerprint.js';
import type { Finding } from './output.schema.js';
import type { SamplesReport } from './run-result.js';
import { alike } from '../memory/alike.js';

/**
 * Agreement across samples (`review.samples: N` in `.github/verdict.yml`): the review's parts are
 * reviewed in N independent passes, and a finding is kept when it recurs in at least half of the passes
 * that answered its part, rounded up (2 of 3, 3 of 5; 1 of 1). Two findings of different passes are the
 * same when they are on the same path, their lines are within 3 of each other once their anchors are
 * checked against the diff (an anchor that does not hold counts as no line, and a finding without a line
 * matches on its text alone), and their title and body are alike (memory/alike.ts). Each pass contributes
 * at most one finding to a group; the group is kept as its first finding (the earliest pass's). The other
 * parts of the review (overview, dispositions, missing validations) are the first answering pass's.
 */

/** Lines two findings' anchors may be apart and still be the same finding. */
export const SAMPLE_LINE_TOLERANCE = 3;

type Located = { finding: Finding; sample: number; chunk: number; line: number | null; end: number | null };

/** The checked anchor of each finding (null when it has none, or it does not hold on the diff). */
function anchorOf(changed: readonly ChangedFile[]) {
  const indexes = new Map<string, ReturnType<typeof newSideIndex> | null>();
  const patches = new Map(changed.map((f) => [normaliseFindingPath(f.filename), f.patch ?? null]));
  return (f: Finding): { line: number | null; end: number | null } => {
    const path = normaliseFindingPath(f.path);
    if (f.line === null || f.line === undefined || !patches.has(path)) return { line: null, end: null };
    if (!indexes.has(path)) {
      const patch = patches.get(path);
      indexes.set(path, patch ? newSideIndex(patch) : null);
    }
    const check = checkAnchor(indexes.get(path)!, f.line, f.endLine);
    return check.ok ? { line: check.line, end: check.endLine } : { line: null, end: null };
  };
}

function near(a: Located, b: Located): boolean {
  if (a.line === null || b.line === null) return true;
  return a.line <= b.end! + SAMPLE_LINE_TOLERANCE && b.line <= a.end! + SAMPLE_LINE_TOLERANCE;
}

/** Whether two findings of different passes are the same finding. */
function same(a: Located, b: Located): boolean {
  return (
    normaliseFindingPath(a.finding.path) === normaliseFindingPath(b.finding.path) &&
    near(a, b) &&
    alike(a.finding, b.finding)
  );
}

export type Agreed = { pass: PassResult; report: SamplesReport };

/** The passes' findings agreed on, as one pass (see the module comment). */
export function agreeAcrossSamples(passes: readonly PassResult[], changed: readonly ChangedFile[]): Agreed {
  const count = passes.length;
  const anchor = anchorOf(changed);
  // Per part: the passes that answered it; the first of them gives the part's outputs.
  const chunks = new Set(passes.flatMap((p) => [...p.outputs.map((o) => o.chunk), ...p.failed.keys()]));
  const answered = new Map<number, number[]>();
  for (const chunk of chunks) {
    answered.set(
      chunk,
      passes.flatMap((p, s) => (p.outputs.some((o) => o.chunk === chunk) ? [s] : [])),
    );
  }
  // Groups of alike findings, at most one per pass, in the order they first appear.
  const groups: Located[][] = [];
  passes.forEach((p, sample) => {
    for (const o of p.outputs) {
      for (const finding of o.output.findings) {
        const at = anchor(finding);
        const located: Located = { finding, sample, chunk: o.chunk, line: at.line, end: at.end };
        const group = groups.find((g) => !g.some((x) => x.sample === sample) && same(g[0]!, located));
        if (group) group.push(located);
        else groups.push([located]);
      }
    }
  });
  const required = (chunk: number) => Math.ceil((answered.get(chunk)?.length ?? count) / 2);
  const kept = groups.filter((g) => g.length >= required(g[0]!.chunk));
  // The agreed pass: for each part, the outputs of the first pass that answered it, holding the kept
  // findings of that part (each group's first finding) in the order they first appeared.
  const outputs: PassResult['outputs'] = [];
  const failed = new Map<number, string>();
  let retryable = false;
  for (const chunk of [...chunks].sort((a, b) => a - b)) {
    const first = answered.get(chunk)![0];
    if (first === undefined) {
      failed.set(chunk, passes.map((p) => p.failed.get(chunk)).find((e) => e !== undefined) ?? 'no answer');
      retryable ||= passes.some((p) => p.retryable && p.failed.has(chunk));
      continue;
    }
    // A part split in two whose one half failed stays failed, as in one pass.
    const half = passes[first]!.failed.get(chunk);
    if (half !== undefined) failed.set(chunk, half);
    const own = passes[first]!.outputs.filter((o) => o.chunk === chunk);
    const findings = kept.filter((g) => g[0]!.chunk === chunk).map((g) => g[0]!.finding);
    own.forEach((o, i) => outputs.push({ ...o, output: { ...o.output, findings: i === 0 ? findings : [] } }));
  }
  const splits = passes[0]?.splits ?? 0;
  return {
    pass: { outputs, failed, retryable, splits },
    report: {
      count,
      required: Math.ceil(count / 2),
      candidates: groups.length,
      kept: kept.length,
      dropped: groups.length - kept.length,
      agreement: kept
        .slice(0, 200)
        .map((g) => ({ path: g[0]!.finding.path, title: g[0]!.finding.title, samples: g.length })),
    },
  };
}
