import type {
  ReportSource,
  SourceComment,
  SourceLineComment,
  SourcePr,
  SourceRun,
} from '../store/report-source.js';
import { DAY_MS, formatDay, parseDay } from './calendar.js';
import type { FindingStatus, ReportFilters } from './params.js';
import type { Scope } from './scope.js';
import {
  cmp,
  entryOf,
  inc,
  isAnalysed,
  iso,
  percentile,
  prKeyOf,
  ratio,
  securityKey,
  zeroSeverities,
  zeroStatuses,
} from './tally.js';
import type {
  Concern,
  CoverageState,
  Counts,
  PeriodSummary,
  Report,
  ReportPr,
  ReportSummary,
  Window,
} from './types.js';

/** What of the scope falls in one window of time. */
export type Period = {
  findings: Concern[];
  runs: SourceRun[];
  reviewsByPr: Map<string, SourceRun[]>;
  comments: SourceComment[];
  lineComments: SourceLineComment[];
};

const inWindow = (w: Window, ms: number) => ms >= w.from && ms < w.to;

/** The window: from/to (inclusive days, UTC), open-ended where not given. */
export function windowOf(filters: ReportFilters): Window {
  const from = filters.from === null ? -Infinity : parseDay(filters.from);
  const to = filters.to === null ? Infinity : parseDay(filters.to) + DAY_MS;
  return { from, to };
}

export function periodOf(scope: Scope, w: Window): Period {
  const findings = scope.concerns.filter((c) => inWindow(w, c.firstSeen));
  const runs = scope.runs.filter((r) => inWindow(w, r.createdAt));
  const reviewsByPr = new Map<string, SourceRun[]>();
  for (const r of runs) {
    if (isAnalysed(r.analysisStatus)) entryOf(reviewsByPr, prKeyOf(r.repo, r.prNumber), () => []).push(r);
  }
  const comments = scope.comments.filter((c) => inWindow(w, c.createdAt));
  const lineComments = scope.lineComments.filter((c) => inWindow(w, c.createdAt));
  return { findings, runs, reviewsByPr, comments, lineComments };
}

export function summarise(p: Period): PeriodSummary {
  const byStatus: Record<string, number> = {};
  let reviews = 0;
  for (const r of p.runs) {
    inc(byStatus, r.status);
    if (isAnalysed(r.analysisStatus)) reviews++;
  }
  const findings: PeriodSummary['findings'] = {
    total: p.findings.length,
    bySeverity: zeroSeverities(),
    byStatus: zeroStatuses(),
    bySecurity: { true: 0, false: 0, unknown: 0 },
    withoutPath: 0,
    withoutLine: 0,
    outsideDiff: 0,
  };
  for (const { finding: f } of p.findings) {
    findings.bySeverity[f.severity]++;
    findings.byStatus[f.status]++;
    findings.bySecurity[securityKey(f.security)]++;
    if (f.path === null) findings.withoutPath++;
    if (f.line === null) findings.withoutLine++;
    if (f.outsideDiff) findings.outsideDiff++;
  }
  const byKind: Record<string, number> = {};
  for (const c of p.comments) inc(byKind, c.kind);
  const feedback = { posted: p.lineComments.length, addressed: 0, dismissed: 0, up: 0, down: 0 };
  for (const c of p.lineComments) {
    feedback.addressed += c.addressed > 0 ? 1 : 0;
    feedback.dismissed += c.dismissed > 0 ? 1 : 0;
    feedback.up += c.up;
    feedback.down += c.down;
  }
  return {
    reviewedPrs: p.reviewsByPr.size,
    runs: { total: p.runs.length, reviews, byStatus },
    findings,
    comments: { total: p.comments.length, byKind },
    feedback: {
      ...feedback,
      addressedRate: feedback.posted > 0 ? feedback.addressed / feedback.posted : 0,
    },
  };
}

/** Reviewed pull requests: at least one analysed run in the period. */
export function reviewedPrsOf(
  current: Period,
  prs: Map<string, SourcePr>,
): { reviewedPrs: ReportPr[]; verdicts: Record<string, number>; coverage: Report['coverage'] } {
  const findingsByPr = new Map<string, Counts<FindingStatus> & { total: number }>();
  for (const { prKey, finding } of current.findings) {
    const counts = entryOf(findingsByPr, prKey, () => ({ ...zeroStatuses(), total: 0 }));
    counts[finding.status]++;
    counts.total++;
  }
  const runsInPeriodByPr: Record<string, number> = {};
  for (const r of current.runs) inc(runsInPeriodByPr, prKeyOf(r.repo, r.prNumber));
  const verdicts: Record<string, number> = {};
  const coverage = { complete: 0, incomplete: 0, unknown: 0 };
  const reviewedPrs: ReportPr[] = [];
  for (const [key, reviews] of current.reviewsByPr) {
    const latest = reviews[reviews.length - 1]!;
    const first = reviews[0]!;
    const pr = prs.get(key);
    const state: CoverageState =
      latest.coverageComplete === null ? 'unknown' : latest.coverageComplete ? 'complete' : 'incomplete';
    coverage[state]++;
    inc(verdicts, latest.verdict ?? 'unknown');
    reviewedPrs.push({
      repo: latest.repo,
      number: latest.prNumber,
      title: pr?.title ?? null,
      author: pr?.author ?? null,
      state: pr?.state ?? null,
      headSha: pr?.headSha ?? latest.headSha,
      runs: runsInPeriodByPr[key] ?? 0,
      reviews: reviews.length,
      firstReviewedAt: iso(first.createdAt),
      lastReviewedAt: iso(latest.createdAt),
      latestReview: {
        runId: latest.id,
        headSha: latest.headSha,
        verdict: latest.verdict,
        confidence: latest.confidence,
        analysisStatus: latest.analysisStatus,
        coverage: state,
      },
      findings: findingsByPr.get(key) ?? { ...zeroStatuses(), total: 0 },
    });
  }
  reviewedPrs.sort(
    (a, b) => cmp(b.lastReviewedAt, a.lastReviewedAt) || cmp(a.repo, b.repo) || a.number - b.number,
  );
  return { reviewedPrs, verdicts, coverage: coverageOf(coverage, reviewedPrs.length) };
}

function coverageOf(coverage: Counts<CoverageState>, reviewed: number): Report['coverage'] {
  const knownCoverage = coverage.complete + coverage.incomplete;
  return {
    basis: 'the latest analysed run in the period of each reviewed pull request',
    reviewedPrs: reviewed,
    ...coverage,
    completeShare: ratio(coverage.complete, reviewed),
    completeShareOfKnown: ratio(coverage.complete, knownCoverage),
  };
}

/** Traces of the period's runs. */
export function traceSummary(source: ReportSource, current: Period): ReportSummary['traces'] {
  const periodRunIds = new Set(current.runs.map((r) => r.id));
  const traceStatus: Record<string, number> = {};
  const durations: number[] = [];
  let traceTotal = 0;
  for (const t of source.traces) {
    if (t.runId === null || !periodRunIds.has(t.runId)) continue;
    traceTotal++;
    inc(traceStatus, t.status);
    if (t.endedAt !== null && t.status !== 'running') durations.push(Math.max(0, t.endedAt - t.startedAt));
  }
  durations.sort((a, b) => a - b);
  return {
    total: traceTotal,
    byStatus: traceStatus,
    medianMs: percentile(durations, 50),
    p90Ms: percentile(durations, 90),
  };
}

/** Comparison with the preceding period of equal length (only with both from and to). */
export function comparePeriods(
  filters: ReportFilters,
  window: Window,
  scope: Scope,
  summaryBase: PeriodSummary,
): Report['comparison'] {
  if (filters.from === null || filters.to === null) return null;
  const days = Math.round((window.to - window.from) / DAY_MS);
  const previous: Window = { from: window.from - days * DAY_MS, to: window.from };
  const prev = summarise(periodOf(scope, previous));
  const change = (a: number, b: number) => ({ delta: a - b, ratio: b === 0 ? null : ratio(a - b, b) });
  return {
    current: { from: filters.from, to: filters.to, ...summaryBase },
    previous: { from: formatDay(previous.from), to: formatDay(previous.to - DAY_MS), ...prev },
    change: {
      reviewedPrs: change(summaryBase.reviewedPrs, prev.reviewedPrs),
      runs: change(summaryBase.runs.total, prev.runs.total),
      findings: change(summaryBase.findings.total, prev.findings.total),
      comments: change(summaryBase.comments.total, prev.comments.total),
    },
  };
}
