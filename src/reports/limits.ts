/**
 * The bounds of one report (operator-api 8, "Report source loading" and "Report export"). Every source
 * count is checked with a COUNT query before the rows are read; crossing a bound answers 413
 * `report_too_large` instead of a slow or partial report.
 */
export type ReportLimits = {
  /** Runs in the source history (all runs of the repository, or of every repository). */
  runs: number;
  /** Distinct reviewed heads (repository, pull request, head SHA) among those runs. */
  heads: number;
  /** Repository configurations (rows of `repositories`). */
  configs: number;
  /** Publication-ledger rows read as comments, plus stored comment commands. */
  ledgerRows: number;
  /** Review traces. */
  traces: number;
  /** Finding rows. */
  findings: number;
  /** Finding rows of the largest run. */
  findingsPerRun: number;
  /** Finding rows of the largest pull request. */
  findingsPerPr: number;
  /** Bytes of text read from the store (finding text, run analysis extracts, comment excerpts, titles). */
  inputBytes: number;
  /** Bytes of the export's ZIP file. */
  exportBytes: number;
  /** Points of the series (buckets of the granularity over the window). */
  seriesBuckets: number;
};

const MIB = 1024 * 1024;

/** The bounds of operator-api 8 (and the series bound of `docs/reports.md`). */
export const DEFAULT_REPORT_LIMITS: Readonly<ReportLimits> = Object.freeze({
  runs: 10_000,
  heads: 10_000,
  configs: 2_000,
  ledgerRows: 30_000,
  traces: 30_000,
  findings: 30_000,
  findingsPerRun: 1_000,
  findingsPerPr: 2_000,
  inputBytes: 20 * MIB,
  exportBytes: 20 * MIB,
  seriesBuckets: 5_000,
});

let active: ReportLimits = { ...DEFAULT_REPORT_LIMITS };

/** The bounds in force. */
export function reportLimits(): Readonly<ReportLimits> {
  return active;
}

/**
 * Replaces some bounds (tests and benchmarks: a 413 without inserting 30,000 rows); returns a function
 * that restores the previous bounds.
 */
export function setReportLimits(overrides: Partial<ReportLimits>): () => void {
  const previous = active;
  active = { ...active, ...overrides };
  return () => {
    active = previous;
  };
}

/** What each bound is called in a 413 message. */
export const LIMIT_NOUNS: Record<keyof ReportLimits, string> = {
  runs: 'runs',
  heads: 'reviewed heads',
  configs: 'repository configurations',
  ledgerRows: 'publication-ledger rows and comment commands',
  traces: 'traces',
  findings: 'findings',
  findingsPerRun: 'findings in one run',
  findingsPerPr: 'findings in one pull request',
  inputBytes: 'bytes of source text',
  exportBytes: 'bytes of ZIP export',
  seriesBuckets: 'series points',
};
