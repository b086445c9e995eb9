import { LIMIT_NOUNS, type ReportLimits } from './limits.js';

/**
 * A refused report (NAMES.md): `{error, code, message}`. A rejected parameter is 400 `invalid_request` /
 * `invalid_parameter`; a report over a bound is 413 with `error` and `code` both `report_too_large`; any
 * other failure is `report_error`.
 */
export class ReportError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ReportError';
  }
}

/** 400 for a rejected parameter, naming it. */
export function invalidParameter(parameter: string, message: string): ReportError {
  return new ReportError(400, 'invalid_request', 'invalid_parameter', message, { parameter });
}

/** 413 for a crossed bound, naming the bound and how to narrow the report. */
export function tooLarge(
  bound: keyof ReportLimits,
  found: number,
  limit: number,
  scope: { repo: string | null },
  hint?: string,
): ReportError {
  const where = scope.repo ? `repository ${scope.repo}` : 'every repository';
  const advice =
    hint ??
    (scope.repo
      ? 'this repository has more history than one report can read'
      : 'narrow the report with repo=owner/name (source history is read per repository; a shorter date range does not shrink it)');
  const what =
    bound === 'exportBytes'
      ? `The export ZIP is larger than ${limit} bytes (${found} bytes so far)`
      : bound === 'seriesBuckets'
        ? `The series would have ${found > limit * 4 ? `more than ${limit * 4}` : found} points (at most ${limit})`
        : `The report would read ${found} ${LIMIT_NOUNS[bound]} of ${where} (at most ${limit})`;
  return new ReportError(413, 'report_too_large', 'report_too_large', `${what}: ${advice}`, {
    bound,
    found,
    limit,
  });
}
