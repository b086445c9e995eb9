import { bucketLabel, bucketStart, DAY_MS, formatDay, nextBucket, parseDay, startOfDay } from './calendar.js';
import { tooLarge } from './errors.js';
import type { ReportLimits } from './limits.js';
import type { ReportSource, SourceComment, SourcePr, SourceRun } from '../store/report-source.js';
import {
  FINDING_STATUSES,
  REPORT_SCHEMA,
  REPORT_SEVERITIES,
  type FindingStatus,
  type ReportFilters,
  type ReportSeverity,
} from './params.js';
import { classifySecurity } from './security.js';
import { reportSeverity } from './severity.js';
import { findingStatus, type Resolution, type StatusReason, type StatusRun } from './status.js';

/** Rows per ranking (repositories, authors, categories, files). */
export const RANKING_SIZE = 25;

export type Page<T> = { page: number; pageSize: number; total: number; items: T[] };

export type ReportFinding = {
  /** The id of the first stored row of this finding. */
  id: number;
  /** `owner/name#number:fingerprint`: the finding across the reviews of its pull request. */
  key: string;
  repo: string;
  prNumber: number;
  prTitle: string | null;
  author: string | null;
  fingerprint: string;
  severity: ReportSeverity;
  /** The severity as the reviewer gave it (`blocker`, `high`, …). */
  storedSeverity: string;
  category: string;
  /** true, false, or null when the classifier cannot tell (docs/reports.md). */
  security: boolean | null;
  status: FindingStatus;
  statusReason: StatusReason;
  title: string;
  body: string;
  /** Null when the reviewer gave no path. */
  path: string | null;
  /** Null when the reviewer gave no line: never invented. */
  line: number | null;
  outsideDiff: boolean;
  firstSeenAt: string;
  lastSeenAt: string;
  /** How many reviews of the pull request raised it. */
  occurrences: number;
  firstRunId: string;
  lastRunId: string;
  resolution: (Omit<Resolution, 'at'> & { at: string }) | null;
};

export type CoverageState = 'complete' | 'incomplete' | 'unknown';

export type ReportPr = Omit<SourcePr, 'draft'> & {
  /** Runs of the pull request in the period (any status). */
  runs: number;
  /** Analysed (or degraded) runs in the period: the reviews. */
  reviews: number;
  firstReviewedAt: string;
  lastReviewedAt: string;
  /** The latest analysed run in the period. */
  latestReview: {
    runId: string;
    headSha: string | null;
    verdict: string | null;
    confidence: number | null;
    analysisStatus: string;
    coverage: CoverageState;
  };
  /** This pull request's findings in the report, by status. */
  findings: Record<FindingStatus, number> & { total: number };
};

export type ReportComment = Omit<SourceComment, 'createdAt'> & {
  /** `verdict` for what Verdict published (or would have, in shadow mode), `user` for a comment command. */
  origin: 'verdict' | 'user';
  bodyTruncated: boolean;
  createdAt: string;
};

type Counts<K extends string> = Record<K, number>;

export type PeriodSummary = {
  reviewedPrs: number;
  runs: { total: number; reviews: number; byStatus: Record<string, number> };
  findings: {
    total: number;
    bySeverity: Counts<ReportSeverity>;
    byStatus: Counts<FindingStatus>;
    bySecurity: { true: number; false: number; unknown: number };
    withoutPath: number;
    withoutLine: number;
    outsideDiff: number;
  };
  comments: { total: number; byKind: Record<string, number> };
  /**
   * The line comments Verdict posted in the period (on pull requests in scope) and what reviewers did
   * with them since (NAMES.md "Feedback and learning"): findings addressed and dismissed (each once),
   * 👍 and 👎 reactions, and addressed / posted (0 when none was posted).
   */
  feedback: {
    posted: number;
    addressed: number;
    dismissed: number;
    up: number;
    down: number;
    addressedRate: number;
  };
};

export type ReportSummary = PeriodSummary & {
  verdicts: Record<string, number>;
  traces: { total: number; byStatus: Record<string, number>; medianMs: number | null; p90Ms: number | null };
};

export type SeriesPoint = {
  bucket: string;
  from: string;
  to: string;
  reviewedPrs: number;
  runs: number;
  reviews: number;
  findings: number;
  bySeverity: Counts<ReportSeverity>;
  comments: number;
};

export type Ranking<T> = { total: number; items: T[] };

export type Note = { code: string; message: string };

export type Report = {
  schema: typeof REPORT_SCHEMA;
  generatedAt: string;
  filters: Omit<ReportFilters, 'granularity' | 'page' | 'pageSize'>;
  /** page and pageSize are null in the export, which holds every item. */
  options: {
    granularity: ReportFilters['granularity'];
    page: number | null;
    pageSize: number | null;
    paginated: boolean;
  };
  period: { from: string | null; to: string | null; bounded: boolean };
  source: {
    scope: string;
    runs: number;
    heads: number;
    configs: number;
    ledgerRows: number;
    traces: number;
    findingRows: number;
    largestRunFindings: number;
    largestPrFindings: number;
    inputBytes: number;
  };
  summary: ReportSummary;
  comparison: {
    current: { from: string; to: string } & PeriodSummary;
    previous: { from: string; to: string } & PeriodSummary;
    change: Record<'reviewedPrs' | 'runs' | 'findings' | 'comments', { delta: number; ratio: number | null }>;
  } | null;
  series: SeriesPoint[];
  rankings: {
    repositories: Ranking<{
      repo: string;
      reviewedPrs: number;
      findings: number;
      p0p1: number;
      open: number;
      installed: boolean | null;
      enabled: boolean | null;
    }>;
    authors: Ranking<{ author: string | null; reviewedPrs: number; findings: number; p0p1: number }>;
    categories: Ranking<{ category: string; findings: number; p0p1: number; security: boolean | null }>;
    files: Ranking<{ repo: string; path: string; findings: number; p0p1: number }>;
  };
  coverage: {
    basis: string;
    reviewedPrs: number;
    complete: number;
    incomplete: number;
    unknown: number;
    /** complete / reviewedPrs (unknown counts as not complete); null without reviewed PRs. */
    completeShare: number | null;
    /** complete / (complete + incomplete); null when no coverage is known. */
    completeShareOfKnown: number | null;
  };
  notes: Note[];
  findings: Page<ReportFinding>;
  reviewedPrs: Page<ReportPr>;
  comments: Page<ReportComment>;
};

export type BuildOptions = { now: number; limits: Readonly<ReportLimits>; paginate: boolean };

/** A report finding before its timestamps are formatted (only the items shown are). */
type FindingCore = Omit<ReportFinding, 'firstSeenAt' | 'lastSeenAt' | 'resolution'> & {
  firstSeen: number;
  lastSeen: number;
  resolution: Resolution | null;
};

type Concern = {
  prKey: string;
  finding: FindingCore;
  firstSeen: number;
  text: string | null;
};

type Window = { from: number; to: number };

const isAnalysed = (status: string) => status === 'analysed' || status === 'degraded';
const prKeyOf = (repo: string, number: number) => `${repo}#${number}`;
const iso = (ms: number) => new Date(ms).toISOString();
/** Code-unit order: fast and the same everywhere (no locale). */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function toReportComment(c: SourceComment): ReportComment {
  return {
    id: c.id,
    source: c.source,
    kind: c.kind,
    repo: c.repo,
    prNumber: c.prNumber,
    runId: c.runId,
    origin: c.source === 'ledger' ? 'verdict' : 'user',
    author: c.author,
    mode: c.mode,
    status: c.status,
    verb: c.verb,
    body: c.body,
    bodyTruncated: c.body !== null && c.bodyLength !== null && Buffer.byteLength(c.body) < c.bodyLength,
    bodyLength: c.bodyLength,
    createdAt: iso(c.createdAt),
  };
}

function toReportFinding(core: FindingCore): ReportFinding {
  const { firstSeen, lastSeen, resolution, ...rest } = core;
  return {
    ...rest,
    firstSeenAt: iso(firstSeen),
    lastSeenAt: iso(lastSeen),
    resolution: resolution && { ...resolution, at: iso(resolution.at) },
  };
}
const zeroSeverities = (): Counts<ReportSeverity> =>
  Object.fromEntries(REPORT_SEVERITIES.map((s) => [s, 0])) as Counts<ReportSeverity>;
const zeroStatuses = (): Counts<FindingStatus> =>
  Object.fromEntries(FINDING_STATUSES.map((s) => [s, 0])) as Counts<FindingStatus>;
const inc = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};
/** A security class as the `security` filter and the summary name it. */
const securityKey = (security: boolean | null) =>
  security === null ? 'unknown' : security ? 'true' : 'false';
const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** One page of `items` (every item when not paginating), each shown item made by `show`. */
function paginate<T, U = T>(
  items: T[],
  filters: ReportFilters,
  paginate: boolean,
  show: (item: T) => U = (item) => item as unknown as U,
): Page<U> {
  if (!paginate) return { page: 1, pageSize: items.length, total: items.length, items: items.map(show) };
  const start = (filters.page - 1) * filters.pageSize;
  return {
    page: filters.page,
    pageSize: filters.pageSize,
    total: items.length,
    items: items.slice(start, start + filters.pageSize).map(show),
  };
}

/** The value of `key`, made by `make` and stored the first time it is asked for. */
function entryOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

function ranking<T>(items: T[]): Ranking<T> {
  return { total: items.length, items: items.slice(0, RANKING_SIZE) };
}

/**
 * Builds the report object (operator-api 2.7) from the loaded source history: pure, no I/O. Throws a
 * 413 `ReportError` when the series would have more points than the bound allows.
 */
export function buildReport(source: ReportSource, filters: ReportFilters, opts: BuildOptions): Report {
  // Pull requests and their runs, oldest run first.
  const prs = new Map<string, SourcePr>();
  for (const pr of source.prs) prs.set(prKeyOf(pr.repo, pr.number), pr);
  // Every run list below inherits this order: oldest first, ties by id.
  const sortedRuns = [...source.runs].sort((a, b) => a.createdAt - b.createdAt || cmp(a.id, b.id));
  // Only analysed runs decide a status (failed or skipped runs saw nothing).
  const statusRunsByPr = new Map<string, StatusRun[]>();
  for (const r of sortedRuns) {
    if (!isAnalysed(r.analysisStatus)) continue;
    const run: StatusRun = { id: r.id, createdAt: r.createdAt, analysed: true, claims: r.claims };
    entryOf(statusRunsByPr, prKeyOf(r.repo, r.prNumber), () => []).push(run);
  }

  // Closure claims recorded without evidence (they do not make a finding addressed; a note counts them).
  const claimsWithoutEvidence = new Set<string>();
  for (const run of source.runs) {
    for (const c of run.claims ?? []) {
      if (c.evidence.length === 0)
        claimsWithoutEvidence.add(`${prKeyOf(run.repo, run.prNumber)}:${c.fingerprint}`);
    }
  }

  // PR-level filters: repository, author, team (no team data: nothing matches).
  const authorFilter = filters.author?.toLowerCase() ?? null;
  const prPasses = new Map<string, boolean>();
  const passesPr = (repo: string, number: number): boolean => {
    const key = prKeyOf(repo, number);
    return entryOf(
      prPasses,
      key,
      () =>
        filters.team === null &&
        (filters.repo === null || repo === filters.repo) &&
        (authorFilter === null || (prs.get(key)?.author ?? '').toLowerCase() === authorFilter),
    );
  };
  const q = filters.q?.toLowerCase() ?? null;
  const prText = (repo: string, number: number) => {
    const pr = prs.get(prKeyOf(repo, number));
    return `${repo}#${number}\n${pr?.title ?? ''}\n${pr?.author ?? ''}`.toLowerCase();
  };

  // Findings followed by fingerprint across the reviews of their pull request.
  const groups = new Map<string, ReportSource['findings']>();
  for (const f of source.findings) {
    if (!passesPr(f.repo, f.prNumber)) continue;
    const prKey = prKeyOf(f.repo, f.prNumber);
    const key = f.fingerprint.trim() === '' ? `${prKey}\u0000#${f.id}` : `${prKey}\u0000${f.fingerprint}`;
    entryOf(groups, key, () => []).push(f);
  }
  const concerns: Concern[] = [];
  const prsWithMatchingFinding = new Set<string>();
  for (const rows of groups.values()) {
    rows.sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
    const first = rows[0]!;
    const last = rows[rows.length - 1]!;
    const prKey = prKeyOf(first.repo, first.prNumber);
    const pr = prs.get(prKey);
    const raisedBy: Pick<Set<string>, 'has'> = rows.length === 1
      ? { has: (id) => id === first.runId }
      : new Set(rows.map((r) => r.runId));
    const verdict = findingStatus(first.fingerprint, statusRunsByPr.get(prKey) ?? [], raisedBy);
    const text =
      q === null ? null : `${last.title}\n${last.body}\n${last.category}\n${last.path ?? ''}`.toLowerCase();
    if (q !== null && text!.includes(q)) prsWithMatchingFinding.add(prKey);
    concerns.push({
      prKey,
      firstSeen: first.createdAt,
      text,
      finding: {
        id: first.id,
        key: `${prKey}:${first.fingerprint}`,
        repo: first.repo,
        prNumber: first.prNumber,
        prTitle: pr?.title ?? null,
        author: pr?.author ?? null,
        fingerprint: first.fingerprint,
        severity: reportSeverity(last.severity),
        storedSeverity: last.severity,
        category: last.category,
        security: classifySecurity(last),
        status: verdict.status,
        statusReason: verdict.reason,
        title: last.title,
        body: last.body,
        path: last.path,
        line: last.line,
        outsideDiff: last.outsideDiff,
        firstSeen: first.createdAt,
        lastSeen: last.createdAt,
        occurrences: rows.length === 1 ? 1 : (raisedBy as Set<string>).size,
        firstRunId: first.runId,
        lastRunId: last.runId,
        resolution: verdict.resolution,
      },
    });
  }

  const prMatchesQ = (repo: string, number: number) =>
    q === null || prsWithMatchingFinding.has(prKeyOf(repo, number)) || prText(repo, number).includes(q);
  const findingFilter = (c: Concern): boolean => {
    const f = c.finding;
    if (filters.severity !== null && f.severity !== filters.severity) return false;
    if (filters.status !== null && f.status !== filters.status) return false;
    if (filters.security !== 'all' && securityKey(f.security) !== filters.security) return false;
    if (q !== null && !c.text!.includes(q) && !prText(f.repo, f.prNumber).includes(q)) return false;
    return true;
  };
  const matchingConcerns = concerns.filter(findingFilter);
  const runsInScope = sortedRuns.filter(
    (r) => passesPr(r.repo, r.prNumber) && prMatchesQ(r.repo, r.prNumber),
  );
  const commentsInScope = source.comments.filter((c) => {
    if (c.prNumber === null) return filters.author === null && filters.team === null && q === null;
    if (!passesPr(c.repo, c.prNumber)) return false;
    if (q === null) return true;
    return (c.body ?? '').toLowerCase().includes(q) || prMatchesQ(c.repo, c.prNumber);
  });

  const lineCommentsInScope = source.lineComments.filter(
    (c) => passesPr(c.repo, c.prNumber) && prMatchesQ(c.repo, c.prNumber),
  );

  // The window: from/to (inclusive days, UTC), open-ended where not given.
  const fromMs = filters.from === null ? -Infinity : parseDay(filters.from);
  const toMs = filters.to === null ? Infinity : parseDay(filters.to) + DAY_MS;
  const window: Window = { from: fromMs, to: toMs };
  const inWindow = (w: Window, ms: number) => ms >= w.from && ms < w.to;

  const period = (w: Window) => {
    const findings = matchingConcerns.filter((c) => inWindow(w, c.firstSeen));
    const runs = runsInScope.filter((r) => inWindow(w, r.createdAt));
    const reviewsByPr = new Map<string, SourceRun[]>();
    for (const r of runs) {
      if (isAnalysed(r.analysisStatus)) entryOf(reviewsByPr, prKeyOf(r.repo, r.prNumber), () => []).push(r);
    }
    const comments = commentsInScope.filter((c) => inWindow(w, c.createdAt));
    const lineComments = lineCommentsInScope.filter((c) => inWindow(w, c.createdAt));
    return { findings, runs, reviewsByPr, comments, lineComments };
  };

  const summarise = (p: ReturnType<typeof period>): PeriodSummary => {
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
  };

  const current = period(window);
  const summaryBase = summarise(current);

  // Reviewed pull requests: at least one analysed run in the period.
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

  // Traces of the period's runs.
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

  const summary: ReportSummary = {
    ...summaryBase,
    verdicts,
    traces: {
      total: traceTotal,
      byStatus: traceStatus,
      medianMs: percentile(durations, 50),
      p90Ms: percentile(durations, 90),
    },
  };

  // Comparison with the preceding period of equal length (only with both from and to).
  let comparison: Report['comparison'] = null;
  if (filters.from !== null && filters.to !== null) {
    const days = Math.round((toMs - fromMs) / DAY_MS);
    const previous: Window = { from: fromMs - days * DAY_MS, to: fromMs };
    const prev = summarise(period(previous));
    const change = (a: number, b: number) => ({ delta: a - b, ratio: b === 0 ? null : ratio(a - b, b) });
    comparison = {
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

  // Series: buckets of the granularity (UTC; ISO weeks from Monday) over the period.
  const eventTimes: number[] = [];
  for (const r of current.runs) eventTimes.push(r.createdAt);
  for (const c of current.findings) eventTimes.push(c.firstSeen);
  for (const c of current.comments) eventTimes.push(c.createdAt);
  let seriesFrom: number | null = Number.isFinite(fromMs) ? fromMs : null;
  let seriesTo: number | null = Number.isFinite(toMs) ? toMs - DAY_MS : null;
  if (seriesFrom === null || seriesTo === null) {
    let min = Infinity;
    let max = -Infinity;
    for (const t of eventTimes) {
      if (t < min) min = t;
      if (t > max) max = t;
    }
    if (seriesFrom === null) seriesFrom = Number.isFinite(min) ? startOfDay(min) : seriesTo;
    if (seriesTo === null) seriesTo = Number.isFinite(max) ? startOfDay(max) : seriesFrom;
  }
  let seriesClipped = false;
  const series: SeriesPoint[] = [];
  const bucketIndex = new Map<number, number>();
  if (seriesFrom !== null && seriesTo !== null && seriesFrom <= seriesTo) {
    const lo = seriesFrom;
    const hi = seriesTo;
    const g = filters.granularity;
    for (let start = bucketStart(g, lo); start <= hi; start = nextBucket(g, start)) {
      if (series.length >= opts.limits.seriesBuckets) {
        let count = series.length;
        for (let s = start; s <= hi && count <= opts.limits.seriesBuckets * 4; s = nextBucket(g, s)) count++;
        throw tooLarge(
          'seriesBuckets',
          count,
          opts.limits.seriesBuckets,
          { repo: filters.repo },
          'use granularity=week or month, or a shorter from/to range',
        );
      }
      const end = nextBucket(g, start) - DAY_MS;
      if (start < lo || end > hi) seriesClipped = true;
      bucketIndex.set(start, series.length);
      series.push({
        bucket: bucketLabel(g, start),
        from: formatDay(Math.max(start, lo)),
        to: formatDay(Math.min(end, hi)),
        reviewedPrs: 0,
        runs: 0,
        reviews: 0,
        findings: 0,
        bySeverity: zeroSeverities(),
        comments: 0,
      });
    }
    const pointAt = (ms: number) => {
      const i = bucketIndex.get(bucketStart(g, ms));
      return i === undefined ? null : series[i]!;
    };
    const reviewedInBucket = new Map<SeriesPoint, Set<string>>();
    for (const r of current.runs) {
      const point = pointAt(r.createdAt);
      if (!point) continue;
      point.runs++;
      if (!isAnalysed(r.analysisStatus)) continue;
      point.reviews++;
      entryOf(reviewedInBucket, point, () => new Set()).add(prKeyOf(r.repo, r.prNumber));
    }
    for (const [point, set] of reviewedInBucket) point.reviewedPrs = set.size;
    for (const c of current.findings) {
      const point = pointAt(c.firstSeen);
      if (!point) continue;
      point.findings++;
      point.bySeverity[c.finding.severity]++;
    }
    for (const c of current.comments) {
      const point = pointAt(c.createdAt);
      if (point) point.comments++;
    }
  }

  // Rankings over the period's findings and reviewed pull requests.
  const high = (s: ReportSeverity) => (s === 'P0' || s === 'P1' ? 1 : 0);
  const repoStats = new Map<string, { reviewedPrs: number; findings: number; p0p1: number; open: number }>();
  const authorStats = new Map<string | null, { reviewedPrs: number; findings: number; p0p1: number }>();
  const categoryStats = new Map<string, { findings: number; p0p1: number; security: Set<boolean | null> }>();
  const fileStats = new Map<string, { repo: string; path: string; findings: number; p0p1: number }>();
  const repoEntry = (repo: string) =>
    entryOf(repoStats, repo, () => ({ reviewedPrs: 0, findings: 0, p0p1: 0, open: 0 }));
  const authorEntry = (author: string | null) =>
    entryOf(authorStats, author, () => ({ reviewedPrs: 0, findings: 0, p0p1: 0 }));
  for (const pr of reviewedPrs) {
    repoEntry(pr.repo).reviewedPrs++;
    authorEntry(pr.author).reviewedPrs++;
  }
  for (const { finding: f } of current.findings) {
    const r = repoEntry(f.repo);
    r.findings++;
    r.p0p1 += high(f.severity);
    if (f.status === 'open') r.open++;
    const a = authorEntry(f.author);
    a.findings++;
    a.p0p1 += high(f.severity);
    const c = entryOf(categoryStats, f.category, () => ({ findings: 0, p0p1: 0, security: new Set() }));
    c.findings++;
    c.p0p1 += high(f.severity);
    c.security.add(f.security);
    const path = f.path;
    if (path !== null) {
      const key = `${f.repo}\u0000${path}`;
      const file = entryOf(fileStats, key, () => ({ repo: f.repo, path, findings: 0, p0p1: 0 }));
      file.findings++;
      file.p0p1 += high(f.severity);
    }
  }
  const repoMeta = new Map(source.repositories.map((r) => [r.fullName, r]));
  const byCount = <T extends { findings: number; p0p1: number }>(a: T, b: T) =>
    b.findings - a.findings || b.p0p1 - a.p0p1;
  const rankings: Report['rankings'] = {
    repositories: ranking(
      [...repoStats]
        .map(([repo, s]) => ({
          repo,
          ...s,
          installed: repoMeta.get(repo)?.installed ?? null,
          enabled: repoMeta.get(repo)?.enabled ?? null,
        }))
        .sort((a, b) => byCount(a, b) || b.reviewedPrs - a.reviewedPrs || cmp(a.repo, b.repo)),
    ),
    authors: ranking(
      [...authorStats]
        .map(([author, s]) => ({ author, ...s }))
        .sort(
          (a, b) =>
            byCount(a, b) || b.reviewedPrs - a.reviewedPrs || cmp(a.author ?? '\uffff', b.author ?? '\uffff'),
        ),
    ),
    categories: ranking(
      [...categoryStats]
        .map(([category, s]) => ({
          category,
          findings: s.findings,
          p0p1: s.p0p1,
          // The category's classification when all its findings agree; null when mixed or unknown.
          security: s.security.size === 1 ? ([...s.security][0] ?? null) : null,
        }))
        .sort((a, b) => byCount(a, b) || cmp(a.category, b.category)),
    ),
    files: ranking(
      [...fileStats.values()].sort((a, b) => byCount(a, b) || cmp(a.repo, b.repo) || cmp(a.path, b.path)),
    ),
  };

  const reviewed = reviewedPrs.length;
  const knownCoverage = coverage.complete + coverage.incomplete;
  const coverageBlock: Report['coverage'] = {
    basis: 'the latest analysed run in the period of each reviewed pull request',
    reviewedPrs: reviewed,
    ...coverage,
    completeShare: ratio(coverage.complete, reviewed),
    completeShareOfKnown: ratio(coverage.complete, knownCoverage),
  };

  const findingsList = current.findings
    .map((c) => c.finding)
    .sort(
      (a, b) =>
        REPORT_SEVERITIES.indexOf(a.severity) - REPORT_SEVERITIES.indexOf(b.severity) ||
        b.firstSeen - a.firstSeen ||
        cmp(a.repo, b.repo) ||
        a.prNumber - b.prNumber ||
        a.id - b.id,
    );
  const commentsList = current.comments.slice().sort((a, b) => b.createdAt - a.createdAt || cmp(a.id, b.id));
  const notes = reportNotes({
    filters,
    source,
    summary,
    coverage: coverageBlock,
    findings: findingsList,
    reviewedPrs,
    comments: commentsList,
    prs,
    seriesClipped,
    claimsWithoutEvidence,
  });

  const { granularity, page, pageSize, ...echo } = filters;
  return {
    schema: REPORT_SCHEMA,
    generatedAt: iso(opts.now),
    filters: echo,
    options: {
      granularity,
      page: opts.paginate ? page : null,
      pageSize: opts.paginate ? pageSize : null,
      paginated: opts.paginate,
    },
    period: {
      from: seriesFrom === null ? null : formatDay(seriesFrom),
      to: seriesTo === null ? null : formatDay(seriesTo),
      bounded: filters.from !== null && filters.to !== null,
    },
    source: {
      scope: source.scope.repo ? `repository ${source.scope.repo}` : 'all repositories',
      runs: source.counts.runs,
      heads: source.counts.heads,
      configs: source.counts.configs,
      ledgerRows: source.counts.ledgerRows,
      traces: source.counts.traces,
      findingRows: source.counts.findings,
      largestRunFindings: source.counts.findingsPerRun,
      largestPrFindings: source.counts.findingsPerPr,
      inputBytes: source.inputBytes,
    },
    summary,
    comparison,
    series,
    rankings,
    coverage: coverageBlock,
    notes,
    findings: paginate(findingsList, filters, opts.paginate, toReportFinding),
    reviewedPrs: paginate(reviewedPrs, filters, opts.paginate),
    comments: paginate(commentsList, filters, opts.paginate, toReportComment),
  };
}

/** Every caveat a reader of this report needs, as `{code, message}`. */
function reportNotes(ctx: {
  filters: ReportFilters;
  source: ReportSource;
  summary: ReportSummary;
  coverage: Report['coverage'];
  findings: FindingCore[];
  reviewedPrs: ReportPr[];
  comments: SourceComment[];
  prs: Map<string, SourcePr>;
  seriesClipped: boolean;
  claimsWithoutEvidence: ReadonlySet<string>;
}): Note[] {
  const notes: Note[] = [];
  const add = (code: string, message: string) => notes.push({ code, message });
  const { filters, summary } = ctx;
  add(
    'status_rules',
    'A finding is "addressed" only when a later analysed review accepted a closure claim for it with evidence quoted from its head; a finding that a later review merely did not raise again is "not_reobserved", which is not a fix. "open" means the latest analysed review of the pull request still raises it.',
  );
  const unknown = summary.findings.byStatus.unknown;
  if (unknown > 0) {
    add(
      'status_unknown',
      `${unknown} finding(s) have status "unknown": they carry no fingerprint to follow across reviews, or the run that raised them is not on record as an analysed review.`,
    );
  }
  const unsupported = ctx.findings.filter(
    (f) => f.status === 'not_reobserved' && ctx.claimsWithoutEvidence.has(f.key),
  ).length;
  if (unsupported > 0) {
    add(
      'claims_without_evidence',
      `${unsupported} finding(s) had a closure claim recorded without evidence: they are counted as "not_reobserved", not "addressed".`,
    );
  }
  add(
    'findings_deduplicated',
    'A finding raised again by later reviews of the same pull request (same fingerprint) is counted once, in the period it was first raised; "occurrences" says how many reviews raised it, and its text, severity and location are those of the latest review that raised it.',
  );
  if (summary.findings.withoutPath > 0 || summary.findings.withoutLine > 0) {
    add(
      'location_nullable',
      `${summary.findings.withoutPath} finding(s) have no file path and ${summary.findings.withoutLine} no line number: the reviewer did not give them, so they are null, never guessed.`,
    );
  }
  const unknownSeverities = [
    ...new Set(ctx.findings.filter((f) => f.severity === 'unknown').map((f) => f.storedSeverity)),
  ];
  if (unknownSeverities.length > 0) {
    add(
      'severity_unknown',
      `Severities not on the P0–P3/info scale are reported as "unknown": ${unknownSeverities.slice(0, 10).join(', ')}.`,
    );
  }
  add(
    'severity_map',
    'Severity levels: blocker (or critical) is P0, high P1, medium P2, low P3, info info; anything else unknown.',
  );
  add(
    'security_heuristic',
    `"security" is classified from the category and the text of a finding (the review output has no security flag): true, false, or null when it cannot tell (${summary.findings.bySecurity.unknown} finding(s) in this report).`,
  );
  if (filters.team !== null) {
    add(
      'team_unknown',
      'Verdict records no team membership, so the team filter matches no pull request: this report is empty on purpose. Filter by author instead.',
    );
  }
  const unknownAuthors = ctx.reviewedPrs.filter((p) => p.author === null).length;
  if (unknownAuthors > 0) {
    add('author_unknown', `${unknownAuthors} reviewed pull request(s) have no recorded author.`);
  }
  const missingPr = ctx.reviewedPrs.filter((p) => !ctx.prs.has(prKeyOf(p.repo, p.number))).length;
  if (missingPr > 0) {
    add(
      'pr_metadata_missing',
      `${missingPr} reviewed pull request(s) have runs but no stored pull-request record: title, author and state are null.`,
    );
  }
  if (ctx.coverage.unknown > 0) {
    add(
      'coverage_unknown',
      `Semantic coverage is unknown for ${ctx.coverage.unknown} reviewed pull request(s): their latest review recorded no coverage.`,
    );
  }
  if (filters.from === null || filters.to === null) {
    add('comparison_unavailable', 'The comparison with the preceding period needs both from and to.');
  } else {
    add(
      'comparison_status_now',
      'The preceding period uses the same filters; finding statuses in both periods are as of generation time.',
    );
  }
  add(
    'period_attribution',
    'Periods and series buckets are UTC calendar days; weeks are ISO weeks starting on Monday. Findings count in the period they were first raised, runs and reviews by when the run was created, comments by when they were recorded.',
  );
  if (ctx.seriesClipped) {
    add(
      'series_partial_buckets',
      'The first and last series buckets may cover only part of their week or month: their from/to say which days.',
    );
  }
  add(
    'comments_definition',
    'Comments are the texts Verdict published on pull requests (reviews, replies and comments of the publication ledger; "shadow" ones were recorded but not posted) and the @verdict comment commands people wrote (no body is stored for those). Bodies are cut to 2000 characters.',
  );
  if (ctx.comments.some((c) => c.mode === 'shadow')) {
    add(
      'shadow_publications',
      'Some comments are in shadow mode: they were recorded but never posted on GitHub.',
    );
  }
  return notes;
}
