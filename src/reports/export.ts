import type { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { Report, ReportComment, ReportFinding, ReportPr } from './types.js';
import { csvTable, type CsvColumn } from './csv.js';
import { tooLarge } from './errors.js';
import type { ReportLimits } from './limits.js';

export const FINDING_COLUMNS: CsvColumn<ReportFinding>[] = [
  ['id', (f) => f.id],
  ['key', (f) => f.key],
  ['repo', (f) => f.repo],
  ['pr_number', (f) => f.prNumber],
  ['pr_title', (f) => f.prTitle],
  ['author', (f) => f.author],
  ['fingerprint', (f) => f.fingerprint],
  ['severity', (f) => f.severity],
  ['stored_severity', (f) => f.storedSeverity],
  ['category', (f) => f.category],
  ['security', (f) => (f.security === null ? 'unknown' : f.security)],
  ['status', (f) => f.status],
  ['status_reason', (f) => f.statusReason],
  ['title', (f) => f.title],
  ['body', (f) => f.body],
  ['path', (f) => f.path],
  ['line', (f) => f.line],
  ['outside_diff', (f) => f.outsideDiff],
  ['first_seen_at', (f) => f.firstSeenAt],
  ['last_seen_at', (f) => f.lastSeenAt],
  ['occurrences', (f) => f.occurrences],
  ['first_run_id', (f) => f.firstRunId],
  ['last_run_id', (f) => f.lastRunId],
  ['resolution_run_id', (f) => f.resolution?.runId],
  ['resolution_at', (f) => f.resolution?.at],
  ['resolution_disposition', (f) => f.resolution?.disposition],
  ['resolution_evidence_paths', (f) => f.resolution?.evidence.map((e) => e.path ?? '').join(' ')],
];

export const PR_COLUMNS: CsvColumn<ReportPr>[] = [
  ['repo', (p) => p.repo],
  ['number', (p) => p.number],
  ['title', (p) => p.title],
  ['author', (p) => p.author],
  ['state', (p) => p.state],
  ['head_sha', (p) => p.headSha],
  ['runs', (p) => p.runs],
  ['reviews', (p) => p.reviews],
  ['first_reviewed_at', (p) => p.firstReviewedAt],
  ['last_reviewed_at', (p) => p.lastReviewedAt],
  ['latest_run_id', (p) => p.latestReview.runId],
  ['latest_head_sha', (p) => p.latestReview.headSha],
  ['latest_verdict', (p) => p.latestReview.verdict],
  ['latest_confidence', (p) => p.latestReview.confidence],
  ['latest_analysis_status', (p) => p.latestReview.analysisStatus],
  ['coverage', (p) => p.latestReview.coverage],
  ['findings', (p) => p.findings.total],
  ['open', (p) => p.findings.open],
  ['addressed', (p) => p.findings.addressed],
  ['not_reobserved', (p) => p.findings.not_reobserved],
  ['unknown', (p) => p.findings.unknown],
];

export const COMMENT_COLUMNS: CsvColumn<ReportComment>[] = [
  ['id', (c) => c.id],
  ['source', (c) => c.source],
  ['kind', (c) => c.kind],
  ['repo', (c) => c.repo],
  ['pr_number', (c) => c.prNumber],
  ['run_id', (c) => c.runId],
  ['origin', (c) => c.origin],
  ['author', (c) => c.author],
  ['mode', (c) => c.mode],
  ['status', (c) => c.status],
  ['verb', (c) => c.verb],
  ['created_at', (c) => c.createdAt],
  ['body', (c) => c.body],
  ['body_truncated', (c) => c.bodyTruncated],
  ['body_length', (c) => c.bodyLength],
];

/**
 * The export ZIP (yazl, deflate), its members in the order of NAMES.md: `report.json` (the whole report,
 * every item, no page limits) and three CSVs. It is compressed into memory, at most `limits.exportBytes`
 * (20 MiB) of ZIP: past that it stops at once and throws 413 `report_too_large`. Building first means an
 * oversized export is refused with a JSON error before any header is sent, never cut off mid-download;
 * the caller then streams the chunks with a Content-Length.
 */
export async function buildZip(
  report: Report,
  limits: Readonly<ReportLimits>,
  mtime = new Date(report.generatedAt),
): Promise<{ chunks: Buffer[]; bytes: number }> {
  const members: Array<[name: string, data: Buffer]> = [
    ['report.json', Buffer.from(JSON.stringify(report), 'utf8')],
    ['findings.csv', csvTable(FINDING_COLUMNS, report.findings.items)],
    ['reviewed-prs.csv', csvTable(PR_COLUMNS, report.reviewedPrs.items)],
    ['comments.csv', csvTable(COMMENT_COLUMNS, report.comments.items)],
  ];
  const zip = new ZipFile();
  for (const [name, data] of members) zip.addBuffer(data, name, { mtime, compress: true });
  zip.end();
  const stream = zip.outputStream as Readable;
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    bytes += buffer.length;
    if (bytes > limits.exportBytes) {
      stream.destroy();
      throw tooLarge(
        'exportBytes',
        bytes,
        limits.exportBytes,
        { repo: report.filters.repo },
        'the ZIP passed this size while it was being built; narrow the export with repo, from/to, severity, status or q',
      );
    }
    chunks.push(buffer);
  }
  return { chunks, bytes };
}

/** `verdict-report-20260301T120000Z.zip` (the generation time, UTC). */
export function exportFileName(generatedAt: string): string {
  const stamp = generatedAt.replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
  return `verdict-report-${stamp}.zip`;
}
