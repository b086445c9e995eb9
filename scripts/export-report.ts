/**
 * Writes the report export (a ZIP of report.json, findings.csv, reviewed-prs.csv, comments.csv) to a file.
 *
 *   npm run report:export -- --out report.zip [--repo owner/name] [--from 2026-03-01] [--to 2026-03-31]
 *       [--author login] [--team name] [--q text] [--granularity day|week|month]
 *       [--severity P0|P1|P2|P3|info|unknown] [--status open|addressed|not_reobserved|unknown]
 *       [--security all|true|false|unknown] [--url http://127.0.0.1:8787]
 *
 * Without `--url` it reads the store the server uses, from the same environment (`VERDICT_DB_PATH`, or
 * `DATABASE_URL` for PostgreSQL; `loadConfig` in src/config/), so no server needs to run. With `--url`
 * it downloads `GET /operator/api/reports/export` from a running server with the token in
 * `VERDICT_OPERATOR_READ_TOKEN` (or `--token`; a `vdt_…` key with the `read` scope works too). Either
 * way the same parameters, rules and bounds apply. The file is written beside `--out` and renamed into
 * place when complete. Exit 0 on success; 1 with one line on stderr when the report is refused (a bad
 * parameter, `report_too_large`) or fails; 2 on a bad command line.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConfigError, loadConfig } from '../src/config/index.js';
import { ReportError } from '../src/reports/errors.js';
import { buildZip } from '../src/reports/export.js';
import { reportLimits } from '../src/reports/limits.js';
import { parseReportParams, REPORT_PARAMETERS } from '../src/reports/params.js';
import { generateReport } from '../src/reports/report.js';
import { openConfiguredStore } from '../src/store/index.js';

class UsageError extends Error {}

const FILTER_OPTIONS = REPORT_PARAMETERS.filter((p) => p !== 'page' && p !== 'pageSize');

function parseArgs(argv: string[]) {
  const params: Record<string, string> = {};
  let out: string | null = null;
  let url: string | null = null;
  let token: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const match = /^--([A-Za-z]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new UsageError(`unexpected argument ${arg}`);
    const name = match[1]!;
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (name === 'out') out = value;
    else if (name === 'url') url = value;
    else if (name === 'token') token = value;
    else if ((FILTER_OPTIONS as readonly string[]).includes(name)) {
      if (name in params) throw new UsageError(`--${name} is given more than once`);
      params[name] = value;
    } else throw new UsageError(`unknown option --${name} (report options: ${FILTER_OPTIONS.join(', ')})`);
  }
  if (!out) throw new UsageError('--out <file.zip> is required');
  return { params, out, url, token };
}

/** Reads the store directly and writes the ZIP; returns a one-line summary. */
async function fromStore(params: Record<string, string>, file: string): Promise<string> {
  const filters = parseReportParams(params);
  const config = loadConfig(process.env);
  const store = await openConfiguredStore(config);
  try {
    const limits = reportLimits();
    const report = await generateReport(store, filters, { now: Date.now(), paginate: false, limits });
    const zip = await buildZip(report, limits);
    await pipeline(Readable.from(zip.chunks), createWriteStream(file));
    return `${zip.bytes} bytes: ${report.findings.total} finding(s), ${report.reviewedPrs.total} reviewed pull request(s), ${report.comments.total} comment(s)`;
  } finally {
    await store.close();
  }
}

/** Downloads the export from a running server. */
async function fromServer(
  baseUrl: string,
  token: string | null,
  params: Record<string, string>,
  file: string,
): Promise<string> {
  if (!token) throw new UsageError('set VERDICT_OPERATOR_READ_TOKEN (or pass --token) to call a server');
  const url = `${baseUrl.replace(/\/+$/, '')}/operator/api/reports/export?${new URLSearchParams(params)}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200 || !res.body) {
    const text = await res.text();
    let detail = text.slice(0, 500);
    try {
      const body = JSON.parse(text) as { code?: string; error?: string; message?: string };
      detail = `${body.code ?? body.error ?? res.status}: ${body.message ?? ''}`.trim();
    } catch {
      // not JSON: keep the text
    }
    throw new Error(`HTTP ${res.status} ${detail}`);
  }
  await pipeline(
    Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
    createWriteStream(file),
  );
  return `${res.headers.get('content-length') ?? '?'} bytes from ${baseUrl}`;
}

async function main(): Promise<void> {
  const { params, out, url, token } = parseArgs(process.argv.slice(2));
  const partial = `${out}.partial`;
  try {
    const summary = url
      ? await fromServer(url, token ?? process.env.VERDICT_OPERATOR_READ_TOKEN ?? null, params, partial)
      : await fromStore(params, partial);
    await rename(partial, out);
    process.stdout.write(`wrote ${out} (${summary})\n`);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`export-report: ${error.message}\n`);
    process.exit(2);
  }
  const message =
    error instanceof ReportError
      ? `${error.code}: ${error.message}`
      : error instanceof ConfigError
        ? error.message
        : error instanceof Error
          ? error.message
          : String(error);
  process.stderr.write(`export-report: ${message}\n`);
  process.exit(1);
});
