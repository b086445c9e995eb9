import type { TestLabRun } from './runner.js';

/**
 * The recorded scores of the replay corpus (`fixtures/testlab/baseline.json`): CI fails when a change
 * makes a score fall below it, loses a bug it caught, or loses an exact anchor.
 */
export type Baseline = {
  recall: number | null;
  precision: number | null;
  falseFindingsPerCleanCase: number | null;
  severityAgreement: number | null;
  anchorAccuracy: number | null;
  /** `case/bug` of every planted bug caught. */
  caught: string[];
  /** `case/bug` of every bug caught by a finding anchored inside the planted lines. */
  anchoredExactly: string[];
};

export function baselineOf(run: TestLabRun): Baseline {
  const bugs = run.cases.flatMap((c) => c.bugs.map((b) => ({ key: `${c.name}/${b.id}`, b })));
  return {
    recall: run.scores.recall,
    precision: run.scores.precision,
    falseFindingsPerCleanCase: run.scores.falseFindingsPerCleanCase,
    severityAgreement: run.scores.severityAgreement,
    anchorAccuracy: run.scores.anchorAccuracy,
    caught: bugs.filter((x) => x.b.finding !== null).map((x) => x.key),
    anchoredExactly: bugs.filter((x) => x.b.anchorExact === true).map((x) => x.key),
  };
}

/** What got worse than the baseline, one line each (empty: nothing did). */
export function regressions(run: TestLabRun, baseline: Baseline): string[] {
  const now = baselineOf(run);
  const out: string[] = [];
  const higherIsBetter = ['recall', 'precision', 'severityAgreement', 'anchorAccuracy'] as const;
  for (const key of higherIsBetter) {
    const was = baseline[key];
    const is = now[key];
    if (was !== null && (is === null || is < was)) out.push(`${key} fell from ${was} to ${is}`);
  }
  const wasFalse = baseline.falseFindingsPerCleanCase;
  const isFalse = now.falseFindingsPerCleanCase;
  if (wasFalse !== null && isFalse !== null && isFalse > wasFalse) {
    out.push(`false findings per clean case rose from ${wasFalse} to ${isFalse}`);
  }
  const caught = new Set(now.caught);
  for (const key of baseline.caught) if (!caught.has(key)) out.push(`${key} is no longer caught`);
  const exact = new Set(now.anchoredExactly);
  for (const key of baseline.anchoredExactly) {
    if (!exact.has(key) && caught.has(key)) out.push(`${key} is no longer anchored on its lines`);
  }
  for (const c of run.cases) {
    if (c.status === 'failed' || c.status === 'error')
      out.push(`${c.name} did not review: ${c.error ?? c.status}`);
  }
  return out;
}
