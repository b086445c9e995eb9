import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { randomId } from '../clock.js';
import { reviewOutputJsonSchema } from '../review/output.schema.js';
import { systemPrompt } from '../review/prompt.js';
import type { Store } from '../store/index.js';
import type { TestLabRecord } from '../store/testlab.js';
import type { TestLabRun } from './runner.js';
import type { BugResult, CaseResult, Scores } from './score.js';

/** The version of what the model is asked: a short hash of the system prompt and the output schema. */
export function promptVersion(): string {
  return createHash('sha256')
    .update(systemPrompt(''))
    .update(JSON.stringify(reviewOutputJsonSchema()))
    .digest('hex')
    .slice(0, 12);
}

/** The commit of the checkout, or null outside a git checkout. */
export function currentCommit(cwd = process.cwd()): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

/** Saves a corpus run as a Test Lab record. */
export function saveTestLabRun(
  store: Store,
  run: TestLabRun,
  opts: { name?: string; actor: string; commit?: string | null },
): Promise<TestLabRecord> {
  return store.testLab.save({
    id: randomId('tl'),
    name: opts.name ?? `${run.provider}/${run.model}`,
    provider: run.provider,
    model: run.model,
    promptVersion: promptVersion(),
    commit: opts.commit === undefined ? currentCommit() : opts.commit,
    judge: run.judge,
    // The run's mode, samples and refused recorded calls travel with the scores (the list shows them).
    scores: { ...run.scores, refusals: run.refusals } as unknown as Record<string, unknown>,
    cases: run.cases as unknown as Array<Record<string, unknown>>,
    actor: opts.actor,
  });
}

/** One planted bug that one run caught and the other missed. */
export type CaughtDifference = {
  case: string;
  bug: string;
  category: string;
  path: string;
  lines: [number, number];
};

export type Comparison = {
  a: string;
  b: string;
  /** Bugs `a` caught and `b` missed. */
  onlyA: CaughtDifference[];
  /** Bugs `b` caught and `a` missed. */
  onlyB: CaughtDifference[];
  /** Clean cases where one run raised false findings and the other fewer (`a` minus `b`). */
  falseFindings: Array<{ case: string; a: number; b: number }>;
  /** Cases only one of the runs reviewed. */
  notInBoth: string[];
};

/** The cases one run caught and the other missed (by case name and bug id). */
export function compareRecords(a: TestLabRecord, b: TestLabRecord): Comparison {
  const byName = (r: TestLabRecord) =>
    new Map((r.cases as unknown as CaseResult[]).map((c) => [c.name, c] as const));
  const casesA = byName(a);
  const casesB = byName(b);
  const onlyA: CaughtDifference[] = [];
  const onlyB: CaughtDifference[] = [];
  const falseFindings: Comparison['falseFindings'] = [];
  const notInBoth: string[] = [];
  const caught = (c: CaseResult, id: string) =>
    c.bugs.some((x: BugResult) => x.id === id && x.finding !== null);
  for (const name of [...new Set([...casesA.keys(), ...casesB.keys()])].sort()) {
    const ca = casesA.get(name);
    const cb = casesB.get(name);
    if (!ca || !cb) {
      notInBoth.push(name);
      continue;
    }
    for (const bug of ca.bugs) {
      const diff = { case: name, bug: bug.id, category: bug.category, path: bug.path, lines: bug.lines };
      const inA = caught(ca, bug.id);
      const inB = caught(cb, bug.id);
      if (inA && !inB) onlyA.push(diff);
      if (inB && !inA) onlyB.push(diff);
    }
    if (ca.clean && ca.falseFindings !== cb.falseFindings) {
      falseFindings.push({ case: name, a: ca.falseFindings, b: cb.falseFindings });
    }
  }
  return { a: a.id, b: b.id, onlyA, onlyB, falseFindings, notInBoth };
}

/** A ratio as a whole percentage, `-` when there is none. */
export const percent = (v: number | null) => (v === null ? '-' : `${Math.round(v * 100)}%`);

/** The score line of a run, as the CLI prints it. */
export function scoreLine(scores: Scores): string {
  return [
    `recall ${percent(scores.recall)} (${scores.caught}/${scores.bugs})`,
    `precision ${percent(scores.precision)}`,
    `false findings per clean case ${scores.falseFindingsPerCleanCase ?? '-'}`,
    `severity agreement ${percent(scores.severityAgreement)}`,
    `anchor accuracy ${percent(scores.anchorAccuracy)}`,
    `${scores.failedCases} failed`,
  ].join(' · ');
}

/** Recall and precision with and without verification, and what it withheld, as the CLI prints it. */
export function verificationLine(scores: Scores): string {
  const v = scores.verification;
  const w = scores.withoutVerification;
  if (!v || !w) return 'verification: not recorded';
  return [
    `with verification: recall ${percent(scores.recall)}, precision ${percent(scores.precision)}`,
    `without: recall ${percent(w.recall)}, precision ${percent(w.precision)}`,
    `${v.candidates} candidates, ${v.withheld} withheld, ${v.unverified} unverified, ${v.calls} calls`,
  ].join(' · ');
}
