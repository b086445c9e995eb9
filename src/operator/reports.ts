import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { authorize, type AccessRule } from '../http/auth.js';
import { sendJson, type Router } from '../http/router.js';
import { ReportError } from '../reports/errors.js';
import { buildZip, exportFileName } from '../reports/export.js';
import { reportLimits } from '../reports/limits.js';
import { parseReportParams, queryToInput, reportParams, type ReportFilters } from '../reports/params.js';
import { generateReport } from '../reports/report.js';
import { defineOperation, OperatorError, type OperationContext, type OperatorDeps } from './operation.js';

/** Reports: the read token, or an API key with `read` (operator-api 5.2 rule 2). */
const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };

/** Any failure as a report error: `ReportError`s as they are, anything else 500 `report_error`. */
function asReportError(error: unknown, log: Logger): ReportError {
  if (error instanceof ReportError) return error;
  log.error({ event: 'report-failed', err: error }, 'the report could not be built');
  return new ReportError(500, 'report_error', 'report_error', 'The report could not be built');
}

export const reportOperations = {
  /**
   * `GET /operator/api/reports` and the tRPC `reports` query: the report of operator-api 2.7 for the
   * parameters of 4.2. Over a source bound: 413 `report_too_large`.
   */
  report: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: reportParams,
    async run(ctx, filters) {
      try {
        return await generateReport(ctx.store, filters, { now: ctx.now(), paginate: true });
      } catch (error) {
        const e = asReportError(error, ctx.log);
        throw new OperatorError(e.status, e.error, e.message, { code: e.code });
      }
    },
  }),
};

type Answer = (res: ServerResponse, ctx: OperationContext, filters: ReportFilters) => Promise<void>;

/**
 * A report route over REST: authentication as every operator route (401 `{ok:false, error:"unauthorized"}`,
 * 403 for a key without `read`), then the parameters (each at most once, unknown ones refused), and report
 * errors as `{error, code, message}` (NAMES.md) — never `ok: false`.
 */
function reportRoute(router: Router, path: string, deps: OperatorDeps, answer: Answer): void {
  const auth = { tokens: deps.tokens, apiKeys: deps.store.apiKeys };
  router.add(
    'GET',
    path,
    async (req: IncomingMessage, res: ServerResponse, _params, url) => {
      const access = await authorize(req, auth, READ_OR_KEY);
      req.resume();
      if (!access.ok) {
        const headers: Record<string, string> =
          access.refusal.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
        return sendJson(res, access.refusal.status, access.refusal.body, headers);
      }
      try {
        const filters = parseReportParams(queryToInput(url.searchParams));
        const ctx: OperationContext = {
          ...deps,
          principal: access.principal,
          idempotencyKey: null,
          origin: '',
        };
        await answer(res, ctx, filters);
      } catch (error) {
        const e = asReportError(error, deps.log);
        if (res.headersSent) {
          // The ZIP is built before its headers are sent, so only a broken connection lands here.
          deps.log.warn({ event: 'report-export-aborted', err: error }, 'report export stopped mid-stream');
          res.destroy();
          return;
        }
        sendJson(res, e.status, { error: e.error, code: e.code, message: e.message });
      }
    },
    { input: reportParams, source: 'query' },
  );
}

/** `GET /operator/api/reports` and `GET /operator/api/reports/export` (operator-api 4.2). */
export function registerReportRoutes(router: Router, deps: OperatorDeps): void {
  reportRoute(router, '/operator/api/reports', deps, async (res, ctx, filters) => {
    const report = await generateReport(ctx.store, filters, { now: ctx.now(), paginate: true });
    sendJson(res, 200, report);
  });

  // The export: the same filters, every item (page and pageSize are accepted and ignored), as a ZIP of
  // report.json, findings.csv, reviewed-prs.csv and comments.csv, at most 20 MiB.
  reportRoute(router, '/operator/api/reports/export', deps, async (res, ctx, filters) => {
    const limits = reportLimits();
    const report = await generateReport(ctx.store, filters, { now: ctx.now(), paginate: false, limits });
    const zip = await buildZip(report, limits);
    res.writeHead(200, {
      'content-type': 'application/zip',
      'content-disposition': `attachment; filename="${exportFileName(report.generatedAt)}"`,
      'content-length': String(zip.bytes),
      'cache-control': 'no-store',
    });
    await pipeline(Readable.from(zip.chunks), res);
  });
}
