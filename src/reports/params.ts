import { z } from 'zod';
import { invalidParameter } from './errors.js';
import { CONTROL_CHARACTER_MESSAGE, hasControlCharacter } from '../http/text.js';

/** Report `schema` (NAMES.md). */
export const REPORT_SCHEMA = 'verdict.reports.v1';

export const GRANULARITIES = ['day', 'week', 'month'] as const;
/** Most severe first: the report's findings are sorted in this order. */
export const REPORT_SEVERITIES = ['P0', 'P1', 'P2', 'P3', 'info', 'unknown'] as const;
export const FINDING_STATUSES = ['open', 'addressed', 'not_reobserved', 'unknown'] as const;
export const SECURITY_FILTERS = ['all', 'true', 'false', 'unknown'] as const;

export type Granularity = (typeof GRANULARITIES)[number];
export type ReportSeverity = (typeof REPORT_SEVERITIES)[number];
export type FindingStatus = (typeof FINDING_STATUSES)[number];

export const MAX_TEXT_PARAM = 300;
export const MAX_PAGE = 100_000;
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 25;

const REPO = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

/** Text: at most 300 characters, no control characters; empty means "not given". */
const textParam = z
  .string({ error: 'must be text' })
  .max(MAX_TEXT_PARAM, `at most ${MAX_TEXT_PARAM} characters`)
  .refine((s) => !hasControlCharacter(s), CONTROL_CHARACTER_MESSAGE)
  .transform((s) => (s.trim() === '' ? null : s.trim()));

/** A real UTC calendar day `YYYY-MM-DD` (report parameters, `GET /settings/usage`). */
export const dayParam = z
  .string({ error: 'must be a date YYYY-MM-DD' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((s) => {
    const ms = Date.parse(`${s}T00:00:00Z`);
    return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === s;
  }, 'must be a real calendar date');

/** An integer in range, as a number (tRPC) or decimal digits (query string). */
const intParam = (min: number, max: number) =>
  z
    .union([z.number(), z.string()], { error: `must be an integer from ${min} to ${max}` })
    .transform((v, ctx) => {
      const n = typeof v === 'number' ? v : /^\d{1,7}$/.test(v) ? Number(v) : NaN;
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

/** Every parameter of operator-api 4.2, in the order the report echoes them; unknown ones are refused. */
const parameters = z.strictObject({
  repo: z
    .string({ error: 'must be owner/name' })
    .max(MAX_TEXT_PARAM, `at most ${MAX_TEXT_PARAM} characters`)
    .regex(REPO, 'must be owner/name')
    .optional(),
  author: textParam.optional(),
  team: textParam.optional(),
  q: textParam.optional(),
  from: dayParam.optional(),
  to: dayParam.optional(),
  granularity: oneOf(GRANULARITIES).optional(),
  severity: oneOf(REPORT_SEVERITIES).optional(),
  status: oneOf(FINDING_STATUSES).optional(),
  security: oneOf(SECURITY_FILTERS).optional(),
  page: intParam(1, MAX_PAGE).optional(),
  pageSize: intParam(1, MAX_PAGE_SIZE).optional(),
});

export const REPORT_PARAMETERS = parameters.keyof().options;

/**
 * The report parameters (operator-api 4.2), shared by the REST routes and the tRPC facade. Duplicates are
 * refused by `queryToInput` before this runs.
 */
export const reportParams = parameters
  .refine((p) => p.from === undefined || p.to === undefined || p.from <= p.to, {
    message: 'must not be after to',
    path: ['from'],
  })
  .transform((p) => ({
    repo: p.repo ?? null,
    author: p.author ?? null,
    team: p.team ?? null,
    q: p.q ?? null,
    from: p.from ?? null,
    to: p.to ?? null,
    granularity: p.granularity ?? 'day',
    severity: p.severity ?? null,
    status: p.status ?? null,
    security: p.security ?? 'all',
    page: p.page ?? 1,
    pageSize: p.pageSize ?? DEFAULT_PAGE_SIZE,
  }));

/** The validated parameters, with defaults filled in (echoed by the report). */
export type ReportFilters = z.output<typeof reportParams>;

/**
 * A query string as the operation's input: each parameter at most once (a repeated parameter throws
 * `invalid_parameter` naming it). Unknown names are left for the schema to refuse.
 */
export function queryToInput(search: URLSearchParams): Record<string, string> {
  const input: Record<string, string> = {};
  for (const [key, value] of search) {
    if (Object.prototype.hasOwnProperty.call(input, key)) {
      throw invalidParameter(
        key,
        `Invalid parameter ${key}: given more than once (each parameter may appear at most once)`,
      );
    }
    input[key] = value;
  }
  return input;
}

/**
 * Validates the parameters: the filters, or a 400 `invalid_parameter` naming the first bad one (NAMES.md).
 */
export function parseReportParams(input: unknown): ReportFilters {
  const parsed = reportParams.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw invalidParameter('query', 'Invalid parameters');
  if (issue.code === 'unrecognized_keys') {
    const name = String(issue.keys[0] ?? 'query');
    throw invalidParameter(name, `Unknown parameter ${name}: it is not a report parameter`);
  }
  const name = issue.path.length > 0 ? issue.path.map(String).join('.') : 'query';
  throw invalidParameter(name, `Invalid parameter ${name}: ${issue.message}`);
}
