import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { authorize, sendRefusal } from '../http/auth.js';
import { sendJson, type Router } from '../http/router.js';
import { parseReportParams, queryToInput, reportParams, type ReportFilters } from '../reports/params.js';
import type { OperationContext } from '../services/operation.js';
import { asReportError, report, reportExport, reportOperations } from '../services/reports.js';
import { requestContext, type OperatorDeps } from './rest.js';

type Answer = (res: ServerResponse, ctx: OperationContext, filters: ReportFilters) => Promise<void>;

/**
 * A report route over REST: authentication by the report operation's rule (401 `{ok:false,
 * error:"unauthorized"}`, 403 for a key without `read`), then the parameters (each at most once, unknown
 * ones refused), and report errors as `{error, code, message}` (NAMES.md) — never `ok: false`.
 */
function reportRoute(router: Router, path: string, deps: OperatorDeps, answer: Answer): void {
  const auth = { tokens: deps.tokens, apiKeys: deps.store.apiKeys, throttle: deps.throttle };
  router.add(
    'GET',
    path,
    async (req: IncomingMessage, res: ServerResponse, _params, url) => {
      const access = await authorize(req, auth, reportOperations.report.rule);
      req.resume();
      if (!access.ok) return sendRefusal(res, access.refusal);
      try {
        const filters = parseReportParams(queryToInput(url.searchParams));
        await answer(res, requestContext(deps, access.principal, req), filters);
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
    sendJson(res, 200, await report(ctx, filters));
  });
  reportRoute(router, '/operator/api/reports/export', deps, async (res, ctx, filters) => {
    const zip = await reportExport(ctx, filters);
    res.writeHead(200, {
      'content-type': 'application/zip',
      'content-disposition': `attachment; filename="${zip.fileName}"`,
      'content-length': String(zip.bytes),
      'cache-control': 'no-store',
    });
    await pipeline(Readable.from(zip.chunks), res);
  });
}
