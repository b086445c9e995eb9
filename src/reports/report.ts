import type { Store } from '../store/index.js';
import { buildReport } from './build.js';
import type { Report } from './types.js';
import { reportLimits, type ReportLimits } from './limits.js';
import type { ReportFilters } from './params.js';

export type ReportOptions = {
  now: number;
  /** false for the export: every finding, reviewed PR and comment, no page limits. */
  paginate: boolean;
  limits?: Readonly<ReportLimits>;
};

/**
 * The report service: reads the bounded source history of the repository in scope (413 over a bound),
 * then builds the report. The REST route, the tRPC procedure, the export and the export script all call
 * this one function.
 */
export async function generateReport(
  store: Store,
  filters: ReportFilters,
  opts: ReportOptions,
): Promise<Report> {
  const limits = opts.limits ?? reportLimits();
  const source = await store.reads.reportSource({ repo: filters.repo }, limits);
  return buildReport(source, filters, { now: opts.now, limits, paginate: opts.paginate });
}
