import type { FeedbackFigures } from '../services/analytics.js';
import type { ReportLimits } from './limits.js';
import type { SourceComment, SourcePr } from '../store/report-source.js';
import type { FindingStatus, REPORT_SCHEMA, ReportFilters, ReportSeverity } from './params.js';
import type { Resolution, StatusReason } from './status.js';

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

export type Counts<K extends string> = Record<K, number>;

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
  feedback: FeedbackFigures;
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
export type FindingCore = Omit<ReportFinding, 'firstSeenAt' | 'lastSeenAt' | 'resolution'> & {
  firstSeen: number;
  lastSeen: number;
  resolution: Resolution | null;
};

export type Concern = {
  prKey: string;
  finding: FindingCore;
  firstSeen: number;
  text: string | null;
};

export type Window = { from: number; to: number };
