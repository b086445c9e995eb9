import type { GoldenFinding, PlantedBug, TestLabCase } from './case.js';
import {
  keywordHits,
  keywordsNeeded,
  mean,
  normalisePath,
  overlaps,
  ratio,
  type Judge,
  type ScoredFinding,
} from './score.js';

/**
 * Scoring a review of an imported real pull request against its golden findings, by ReviewBench's rules
 * (its docs/METHODOLOGY.md, sections 6 and 7; docs/testlab.md "Real pull requests"):
 *
 * - A finding matches a golden finding when they are in the same file and describe the same issue.
 *   ReviewBench decides "the same issue" with an LLM matcher. Offline, the Test Lab decides it with the
 *   lines and the words: the finding's anchor overlaps the golden lines (within `GOLDEN_LINE_TOLERANCE`) and
 *   its title and body carry at least two of the golden finding's keywords (all of them when it has fewer);
 *   a finding without lines on the golden file needs the words alone. With a judge model, a golden finding
 *   the rules left unmatched is offered to the judge with the same-file findings (ReviewBench's matcher).
 * - Matching is many-to-many. Recall: a golden finding is covered when at least one finding matches it.
 *   Precision: each finding, in the order the review gave them, takes the first golden finding it matches
 *   (golden order) that no earlier finding took, and inherits its label; a finding whose matches are all
 *   taken is unmatched.
 * - Grounded precision = matched findings whose golden is `tp` / matched findings; grounded recall = covered
 *   `tp` golden findings / `tp` golden findings. A finding that matches an `fp` golden finding counts as a
 *   false finding. Unmatched findings are left out of the grounded scores (ReviewBench has a judge label
 *   them for its augmented scores); `precisionAllCounted` counts every unmatched finding as false, as
 *   ReviewBench does for a finding its classifier did not label.
 */

/** How far a finding's lines may miss the golden range and still count as overlapping. */
export const GOLDEN_LINE_TOLERANCE = 3;

export type GoldenMatchRule = 'lines+words' | 'words' | 'judge';

export type GoldenResult = {
  id: string;
  path: string;
  lines: [number, number];
  label: 'tp' | 'fp';
  severity: string;
  category: string;
  /** Every finding that matches it (indices into the case's findings). */
  findings: number[];
  /** How the first of them matched, or null when none did. */
  matchedBy: GoldenMatchRule | null;
};

export type GoldenCounts = {
  /** Golden findings labelled tp / fp. */
  goldenTp: number;
  goldenFp: number;
  /** Findings the review published (C). */
  findings: number;
  /** Findings that took a golden finding (M), of them with a tp golden (M_TP) and an fp golden. */
  matched: number;
  matchedTp: number;
  matchedFp: number;
  /** Findings that took none (U). */
  unmatched: number;
  /** tp golden findings at least one finding matches. */
  coveredTp: number;
};

export type GoldenScore = GoldenCounts & {
  golden: GoldenResult[];
  /** Per finding: the golden finding it took, or null. */
  matches: Array<string | null>;
  /** M_TP / M, null without a matched finding. */
  groundedPrecision: number | null;
  /** covered tp / tp, null without a tp golden finding. */
  groundedRecall: number | null;
  /** M_TP / C: every unmatched finding counted as false. */
  precisionAllCounted: number | null;
};

function sameIssueByRules(g: GoldenFinding, f: ScoredFinding): GoldenMatchRule | null {
  if (normalisePath(f.path) !== normalisePath(g.path)) return null;
  if (keywordHits(g, f) < keywordsNeeded(g)) return null;
  if (f.line === null) return 'words';
  const near = overlaps(f, g.lines[0] - GOLDEN_LINE_TOLERANCE, g.lines[1] + GOLDEN_LINE_TOLERANCE);
  return near ? 'lines+words' : null;
}

/** A golden finding as the judge reads a bug (its prompt names the path, lines, category and message). */
function asBug(g: GoldenFinding): PlantedBug {
  return {
    id: g.id,
    path: g.path,
    lines: g.lines,
    category: g.category as PlantedBug['category'],
    severity: g.severity,
    keywords: g.keywords.length >= 2 ? g.keywords : [...g.keywords, g.keywords[0]!],
    description: g.description,
  };
}

/** Matches a review's findings to the case's golden findings and scores it (see the module comment). */
export async function scoreGolden(
  c: TestLabCase,
  findings: readonly ScoredFinding[],
  judge?: Judge,
): Promise<GoldenScore> {
  const golden = c.golden ?? [];
  const results: GoldenResult[] = golden.map((g) => ({
    id: g.id,
    path: g.path,
    lines: g.lines,
    label: g.label,
    severity: g.severity,
    category: g.category,
    findings: [],
    matchedBy: null,
  }));
  for (const [i, g] of golden.entries()) {
    findings.forEach((f, j) => {
      const rule = sameIssueByRules(g, f);
      if (rule === null) return;
      results[i]!.findings.push(j);
      results[i]!.matchedBy ??= rule;
    });
  }
  if (judge) {
    for (const [i, g] of golden.entries()) {
      if (results[i]!.findings.length > 0) continue;
      const open = findings
        .map((f, j) => ({ f, j }))
        .filter(({ f }) => normalisePath(f.path) === normalisePath(g.path));
      if (open.length === 0) continue;
      const pick = await judge(
        c,
        asBug(g),
        open.map((o) => o.f),
      );
      if (pick !== null && open[pick]) {
        results[i]!.findings.push(open[pick]!.j);
        results[i]!.matchedBy = 'judge';
      }
    }
  }
  // Precision: each finding takes the first golden finding it matches that no earlier finding took.
  const taken = new Set<number>();
  const matches = findings.map((_, j) => {
    const i = results.findIndex((r, k) => !taken.has(k) && r.findings.includes(j));
    if (i < 0) return null;
    taken.add(i);
    return results[i]!.id;
  });
  const label = (id: string) => results.find((r) => r.id === id)!.label;
  const matched = matches.filter((m): m is string => m !== null);
  const matchedTp = matched.filter((id) => label(id) === 'tp').length;
  const goldenTp = results.filter((r) => r.label === 'tp').length;
  const coveredTp = results.filter((r) => r.label === 'tp' && r.findings.length > 0).length;
  return {
    golden: results,
    matches,
    goldenTp,
    goldenFp: results.length - goldenTp,
    findings: findings.length,
    matched: matched.length,
    matchedTp,
    matchedFp: matched.length - matchedTp,
    unmatched: findings.length - matched.length,
    coveredTp,
    groundedPrecision: ratio(matchedTp, matched.length),
    groundedRecall: ratio(coveredTp, goldenTp),
    precisionAllCounted: ratio(matchedTp, findings.length),
  };
}

/** ReviewBench's scores over a run's imported cases: micro (pooled counts) and macro (mean per case). */
export type GoldenRunScores = GoldenCounts & {
  cases: number;
  groundedPrecision: number | null;
  groundedRecall: number | null;
  precisionAllCounted: number | null;
  macroGroundedPrecision: number | null;
  macroGroundedRecall: number | null;
};

export function goldenRunScores(scores: readonly GoldenScore[]): GoldenRunScores {
  const sum = (k: keyof GoldenCounts) => scores.reduce((n, s) => n + s[k], 0);
  const counts: GoldenCounts = {
    goldenTp: sum('goldenTp'),
    goldenFp: sum('goldenFp'),
    findings: sum('findings'),
    matched: sum('matched'),
    matchedTp: sum('matchedTp'),
    matchedFp: sum('matchedFp'),
    unmatched: sum('unmatched'),
    coveredTp: sum('coveredTp'),
  };
  return {
    cases: scores.length,
    ...counts,
    groundedPrecision: ratio(counts.matchedTp, counts.matched),
    groundedRecall: ratio(counts.coveredTp, counts.goldenTp),
    precisionAllCounted: ratio(counts.matchedTp, counts.findings),
    macroGroundedPrecision: mean(scores.map((s) => s.groundedPrecision)),
    macroGroundedRecall: mean(scores.map((s) => s.groundedRecall)),
  };
}
