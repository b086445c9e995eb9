import type { Logger } from 'pino';
import { ReportError } from '../reports/errors.js';
import { buildZip, exportFileName } from '../reports/export.js';
import { reportLimits } from '../reports/limits.js';
import { reportParams, type ReportFilters } from '../reports/params.js';
import { generateReport } from '../reports/report.js';
import { defineOperation, OperatorError, READ_OR_KEY, type ServiceContext } from './operation.js';

/** Any failure as a report error: `ReportError`s as they are, anything else 500 `report_error` (logged). */
export function asReportError(error: unknown, log: Logger): ReportError {
  if (error instanceof ReportError) return error;
  log.error({ event: 'report-failed', err: error }, 'the report could not be built');
  return new ReportError(500, 'report_error', 'report_error', 'The report could not be built');
}

/** The report of operator-api 2.7 for the filters of 4.2, one page of each list. Throws `ReportError`s. */
export function report(ctx: Pick<ServiceContext, 'store' | 'now'>, filters: ReportFilters) {
  return generateReport(ctx.store, filters, { now: ctx.now(), paginate: true });
}

/**
 * The export: the same filters, every item (page and pageSize are ignored), as a ZIP of report.json,
 * findings.csv, reviewed-prs.csv and comments.csv, built in memory and at most 20 MiB (413
 * `report_too_large` past that). Throws `ReportError`s.
 */
export async function reportExport(ctx: Pick<ServiceContext, 'store' | 'now'>, filters: ReportFilters) {
  const limits = reportLimits();
  const built = await generateReport(ctx.store, filters, { now: ctx.now(), paginate: false, limits });
  const zip = await buildZip(built, limits);
  return { fileName: exportFileName(built.generatedAt), bytes: zip.bytes, chunks: zip.chunks };
}

export const reportOperations = {
  /**
   * The report as an operation (the tRPC `reports` query): over a source bound, 413 `report_too_large`;
   * the report error's `code` joins the refusal.
   */
  report: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: reportParams,
    async run(ctx, filters) {
      try {
        return await report(ctx, filters);
      } catch (error) {
        const e = asReportError(error, ctx.log);
        throw new OperatorError(e.status, e.error, e.message, { code: e.code });
      }
    },
  }),
};
