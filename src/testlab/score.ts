import type { PlantedBug, TestLabCase } from './case.js';

/** A finding as the Test Lab scores it (what the review stored). */
export type ScoredFinding = {
  severity: string;
  category: string;
  path: string | null;
  line: number | null;
  endLine: number | null;
  title: string;
  body: string;
};

/** Findings of severity medium or above count as claims: on a clean case, each is a false finding. */
export const COUNTED_SEVERITIES: ReadonlySet<string> = new Set(['blocker', 'high', 'medium']);

/** The anchor tolerance of a match: a finding's lines may miss the planted range by this many lines. */
export const ANCHOR_TOLERANCE = 3;

export type MatchRule = 'anchor' | 'keywords' | 'judge';

export type BugResult = {
  id: string;
  path: string;
  lines: [number, number];
  category: string;
  severity: string;
  /** The index of the finding that caught it, or null when missed. */
  finding: number | null;
  matchedBy: MatchRule | null;
  /** The catching finding's severity is the planted one. */
  severityAgrees: boolean | null;
  /** The catching finding is anchored inside the planted lines exactly (no tolerance). */
  anchorExact: boolean | null;
};

export type CaseScore = {
  bugs: BugResult[];
  /** Per finding: the bug it caught, or null. */
  matches: Array<string | null>;
  /** Findings of severity medium or above that caught no bug. */
  falseFindings: number;
};

/** A judge decides a bug the rules could not match: the index of the finding that describes it, or null. */
export type Judge = (
  c: TestLabCase,
  bug: PlantedBug,
  findings: readonly ScoredFinding[],
) => Promise<number | null>;

export const normalisePath = (p: string | null) => (p ?? '').replace(/^\.?\//, '');

/** The keywords of a bug (or golden finding) a finding's title and body carry (case-insensitive, stems). */
export function keywordHits(bug: { keywords: readonly string[] }, f: ScoredFinding): number {
  const text = `${f.title}\n${f.body}`.toLowerCase();
  return bug.keywords.filter((k) => text.includes(k.toLowerCase())).length;
}

/** How many keywords an unanchored finding must carry: two, or all of them when a bug has fewer. */
export function keywordsNeeded(bug: { keywords: readonly string[] }): number {
  return Math.min(2, bug.keywords.length);
}

const slugOf = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

/** The finding's category is the bug's (`race condition`, `Race_Condition`, `security/injection` all agree). */
export function categoryAgrees(bug: PlantedBug, f: ScoredFinding): boolean {
  const category = slugOf(f.category);
  return category !== '' && `-${category}-`.includes(`-${slugOf(bug.category)}-`);
}

/**
 * An anchored finding near a planted bug is about it only when it also agrees with it: it carries as many of
 * the bug's keywords as an unanchored finding must (two, or all when the bug has fewer), or its category is
 * the bug's. A nit about another thing on a nearby line (sharing at most one common word) is not a catch.
 */
export function agreesWith(bug: PlantedBug, f: ScoredFinding): boolean {
  return keywordHits(bug, f) >= keywordsNeeded(bug) || categoryAgrees(bug, f);
}

export function overlaps(f: ScoredFinding, from: number, to: number): boolean {
  if (f.line === null) return false;
  const end = f.endLine ?? f.line;
  return f.line <= to && end >= from;
}

/**
 * Matches a case's findings to its planted bugs. A finding catches a bug when its path is the bug's, its
 * anchor overlaps the planted lines within ±3 lines and it agrees with the bug (two of its keywords, or its
 * category: agreesWith), or, when it is unanchored, when its title and body carry at least two of the bug's
 * keywords. Anchored matches are taken first; a finding catches at most
 * one bug. A judge, when given, decides the bugs the rules left unmatched among the unused findings.
 */
export async function scoreCase(
  c: TestLabCase,
  findings: readonly ScoredFinding[],
  judge?: Judge,
): Promise<CaseScore> {
  const used = new Set<number>();
  const results: BugResult[] = c.bugs.map((bug) => ({
    id: bug.id,
    path: bug.path,
    lines: bug.lines,
    category: bug.category,
    severity: bug.severity,
    finding: null,
    matchedBy: null,
    severityAgrees: null,
    anchorExact: null,
  }));
  const take = (i: number, index: number, rule: MatchRule) => {
    const bug = c.bugs[i]!;
    const f = findings[index]!;
    used.add(index);
    results[i] = {
      ...results[i]!,
      finding: index,
      matchedBy: rule,
      severityAgrees: f.severity === bug.severity,
      anchorExact: overlaps(f, bug.lines[0], bug.lines[1]),
    };
  };
  const samePath = (bug: PlantedBug, f: ScoredFinding) => normalisePath(f.path) === normalisePath(bug.path);
  for (const [i, bug] of c.bugs.entries()) {
    // Of several findings near the planted lines, the one that talks about the bug most.
    let index = -1;
    findings.forEach((f, j) => {
      if (used.has(j) || !samePath(bug, f)) return;
      if (!overlaps(f, bug.lines[0] - ANCHOR_TOLERANCE, bug.lines[1] + ANCHOR_TOLERANCE)) return;
      if (!agreesWith(bug, f)) return;
      if (index < 0 || keywordHits(bug, f) > keywordHits(bug, findings[index]!)) index = j;
    });
    if (index >= 0) take(i, index, 'anchor');
  }
  for (const [i, bug] of c.bugs.entries()) {
    if (results[i]!.finding !== null) continue;
    const index = findings.findIndex(
      (f, j) =>
        !used.has(j) && samePath(bug, f) && f.line === null && keywordHits(bug, f) >= keywordsNeeded(bug),
    );
    if (index >= 0) take(i, index, 'keywords');
  }
  if (judge) {
    for (const [i, bug] of c.bugs.entries()) {
      if (results[i]!.finding !== null) continue;
      const open = findings.map((f, j) => ({ f, j })).filter(({ j }) => !used.has(j));
      if (open.length === 0) break;
      const pick = await judge(
        c,
        bug,
        open.map((o) => o.f),
      );
      if (pick !== null && open[pick]) take(i, open[pick]!.j, 'judge');
    }
  }
  const matches = findings.map((_, j) => results.find((r) => r.finding === j)?.id ?? null);
  const falseFindings = findings.filter(
    (f, j) => matches[j] === null && COUNTED_SEVERITIES.has(f.severity),
  ).length;
  return { bugs: results, matches, falseFindings };
}

/** What one case measured. */
export type CaseResult = {
  name: string;
  language: string;
  kind: string;
  clean: boolean;
  /** The run's analysis status (`analysed`, `degraded`, `failed`, `refused`) or `error` when it never ran. */
  status: string;
  error: string | null;
  findings: Array<ScoredFinding & { caught: string | null }>;
  bugs: BugResult[];
  falseFindings: number;
  tokens: { input: number; output: number };
  costUsd: number | null;
  wallMs: number;
  /** Prompt tokens of the case's review calls, system prompt and schema included (`reviewPromptTokens`). */
  promptTokens: number;
  /** The same without the system prompt and schema: the review's messages (the PR, its context, the diff). */
  messageTokens?: number;
  parts: number;
  /** What verification did in this case (null: the run recorded none). */
  verification?: {
    status: string;
    candidates: number;
    withheld: number;
    unverified: number;
    calls: number;
  } | null;
  /**
   * The same case scored over every candidate verification saw (the published findings and those it
   * withheld): what the review would have scored without verification.
   */
  withoutVerification?: { caught: number; truePositives: number; falseFindings: number };
};

/** The scores of a run over all its cases. */
export type Scores = {
  cases: number;
  bugCases: number;
  cleanCases: number;
  failedCases: number;
  bugs: number;
  caught: number;
  /** Caught planted bugs / planted bugs. */
  recall: number | null;
  /** Findings that caught a bug / (those + findings of medium or above that caught none). */
  precision: number | null;
  /** Findings of medium or above on clean cases, per clean case. */
  falseFindingsPerCleanCase: number | null;
  /** Caught bugs whose finding has the planted severity / caught bugs. */
  severityAgreement: number | null;
  /** Caught bugs whose finding is anchored inside the planted lines / caught bugs. */
  anchorAccuracy: number | null;
  /** Caught bugs a judge model matched (the rules could not). */
  judgeMatches: number;
  tokens: { input: number; output: number };
  costUsd: number | null;
  wallMs: number;
  /** The median case's review prompt tokens (the size of a typical review prompt), everything sent. */
  medianPromptTokens: number | null;
  /** The median case's review message tokens: the request without the system prompt and schema. */
  medianMessageTokens: number | null;
  /** Verification over the run: candidates, withheld, posted unverified, calls. */
  verification: { candidates: number; withheld: number; unverified: number; calls: number };
  /** Recall and precision over every candidate verification saw: the scores without it. */
  withoutVerification: {
    caught: number;
    recall: number | null;
    precision: number | null;
    falseFindingsPerCleanCase: number | null;
  };
};

export const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 1000) / 1000);

/** The mean of the known values (rounded to a thousandth), null when none is known. */
export const mean = (values: Array<number | null>): number | null => {
  const v = values.filter((x): x is number => x !== null);
  return v.length === 0 ? null : Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 1000) / 1000;
};

export function overallScores(results: readonly CaseResult[]): Scores {
  const bugs = results.flatMap((r) => r.bugs);
  const caught = bugs.filter((b) => b.finding !== null);
  const truePositives = results.reduce((n, r) => n + r.findings.filter((f) => f.caught !== null).length, 0);
  const falseFindings = results.reduce((n, r) => n + r.falseFindings, 0);
  const clean = results.filter((r) => r.clean);
  const costs = results.map((r) => r.costUsd);
  return {
    cases: results.length,
    bugCases: results.length - clean.length,
    cleanCases: clean.length,
    failedCases: results.filter((r) => r.status === 'failed' || r.status === 'error').length,
    bugs: bugs.length,
    caught: caught.length,
    recall: ratio(caught.length, bugs.length),
    precision: ratio(truePositives, truePositives + falseFindings),
    falseFindingsPerCleanCase: ratio(
      clean.reduce((n, r) => n + r.falseFindings, 0),
      clean.length,
    ),
    severityAgreement: ratio(caught.filter((b) => b.severityAgrees).length, caught.length),
    anchorAccuracy: ratio(caught.filter((b) => b.anchorExact).length, caught.length),
    judgeMatches: caught.filter((b) => b.matchedBy === 'judge').length,
    tokens: {
      input: results.reduce((n, r) => n + r.tokens.input, 0),
      output: results.reduce((n, r) => n + r.tokens.output, 0),
    },
    costUsd: costs.some((c) => c === null)
      ? null
      : Math.round(costs.reduce<number>((n, c) => n + (c ?? 0), 0) * 1e6) / 1e6,
    wallMs: results.reduce((n, r) => Math.max(n, r.wallMs), 0),
    medianPromptTokens: median(results.filter((r) => r.promptTokens > 0).map((r) => r.promptTokens)),
    medianMessageTokens: median(
      results.filter((r) => (r.messageTokens ?? 0) > 0).map((r) => r.messageTokens ?? 0),
    ),
    verification: {
      candidates: sum(results, (r) => r.verification?.candidates ?? 0),
      withheld: sum(results, (r) => r.verification?.withheld ?? 0),
      unverified: sum(results, (r) => r.verification?.unverified ?? 0),
      calls: sum(results, (r) => r.verification?.calls ?? 0),
    },
    withoutVerification: withoutVerification(results, bugs.length),
  };
}

const sum = <T>(items: readonly T[], f: (item: T) => number) => items.reduce((n, i) => n + f(i), 0);

/** The scores over every candidate verification saw (a case without the figures counts as published). */
function withoutVerification(results: readonly CaseResult[], bugs: number): Scores['withoutVerification'] {
  const of = (r: CaseResult) =>
    r.withoutVerification ?? {
      caught: r.bugs.filter((b) => b.finding !== null).length,
      truePositives: r.findings.filter((f) => f.caught !== null).length,
      falseFindings: r.falseFindings,
    };
  const caught = sum(results, (r) => of(r).caught);
  const truePositives = sum(results, (r) => of(r).truePositives);
  const falseFindings = sum(results, (r) => of(r).falseFindings);
  const clean = results.filter((r) => r.clean);
  return {
    caught,
    recall: ratio(caught, bugs),
    precision: ratio(truePositives, truePositives + falseFindings),
    falseFindingsPerCleanCase: ratio(
      sum(clean, (r) => of(r).falseFindings),
      clean.length,
    ),
  };
}

/**
 * The prompt tokens of a case's review calls: the `promptTokens` (system prompt, schema and messages, as
 * the engine counts what it sends) of its `model` spans, the parts' first attempts and their repairs.
 * Synthesis and verification calls are not counted: this is the size of the review prompt itself.
 */
export function reviewPromptTokens(
  spans: ReadonlyArray<{ name: string; attributes?: Record<string, unknown> | null }>,
  attribute: 'promptTokens' | 'messageTokens' = 'promptTokens',
): number {
  return spans
    .filter((s) => s.name === 'model')
    .reduce((n, s) => {
      const value = s.attributes?.[attribute];
      return n + (typeof value === 'number' ? value : 0);
    }, 0);
}

/** The median of some numbers (the mean of the middle two for an even count), null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}
