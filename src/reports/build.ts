import { formatDay } from './calendar.js';
import type { ReportSource, SourceComment, SourcePr } from '../store/report-source.js';
import { reportNotes } from './notes.js';
import { REPORT_SCHEMA, REPORT_SEVERITIES, type ReportFilters } from './params.js';
import { buildRankings } from './rankings.js';
import { scopeSource } from './scope.js';
import { buildSeries } from './series.js';
import { comparePeriods, periodOf, reviewedPrsOf, summarise, traceSummary, windowOf } from './summary.js';
import { cmp, iso, paginate, prKeyOf } from './tally.js';
import type {
  BuildOptions,
  FindingCore,
  Report,
  ReportComment,
  ReportFinding,
  ReportSummary,
} from './types.js';

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

/**
 * Builds the report object (operator-api 2.7) from the loaded source history: pure, no I/O. Throws a
 * 413 `ReportError` when the series would have more points than the bound allows.
 */
export function buildReport(source: ReportSource, filters: ReportFilters, opts: BuildOptions): Report {
  const prs = new Map<string, SourcePr>();
  for (const pr of source.prs) prs.set(prKeyOf(pr.repo, pr.number), pr);
  const scope = scopeSource(source, filters, prs);
  const window = windowOf(filters);
  const current = periodOf(scope, window);
  const summaryBase = summarise(current);
  const { reviewedPrs, verdicts, coverage } = reviewedPrsOf(current, prs);
  const summary: ReportSummary = { ...summaryBase, verdicts, traces: traceSummary(source, current) };
  const series = buildSeries(current, filters, window, opts.limits);
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
    coverage,
    findings: findingsList,
    reviewedPrs,
    comments: commentsList,
    prs,
    seriesClipped: series.clipped,
    claimsWithoutEvidence: scope.claimsWithoutEvidence,
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
      from: series.from === null ? null : formatDay(series.from),
      to: series.to === null ? null : formatDay(series.to),
      bounded: filters.from !== null && filters.to !== null,
    },
    source: sourceBlock(source),
    summary,
    comparison: comparePeriods(filters, window, scope, summaryBase),
    series: series.series,
    rankings: buildRankings(current, reviewedPrs, source),
    coverage,
    notes,
    findings: paginate(findingsList, filters, opts.paginate, toReportFinding),
    reviewedPrs: paginate(reviewedPrs, filters, opts.paginate),
    comments: paginate(commentsList, filters, opts.paginate, toReportComment),
  };
}

/** What the report was built from. */
function sourceBlock(source: ReportSource): Report['source'] {
  return {
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
  };
}
