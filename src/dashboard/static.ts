import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { sendJson } from '../http/router.js';

/** Content types of the files a Vite build writes (anything else is served as bytes). */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Headers of every dashboard page: no framing, no sniffing, no referrer to other hosts. */
export const PAGE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'content-security-policy': "frame-ancestors 'none'",
};

function notFound(res: ServerResponse, pathname: string): void {
  sendJson(res, 404, { ok: false, error: 'not_found', message: `No route for ${pathname}` });
}

/**
 * The file under `root` a URL path below it names, or null: each segment is decoded once and must be a
 * plain name (no `.`, `..`, empty segment, slash, backslash or NUL), and the resolved path must stay
 * inside `root`.
 */
export function safeJoin(root: string, rest: string): string | null {
  const segments = rest.split('/');
  const names: string[] = [];
  for (const raw of segments) {
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name)) return null;
    names.push(name);
  }
  const base = resolve(root);
  const full = resolve(base, ...names);
  return full.startsWith(base + sep) ? full : null;
}

/**
 * `GET|HEAD /operator/assets/<path>`: a file of `<dist>/assets/`, public, cached for a year (Vite names
 * them by content hash). A traversal attempt or a missing file answers 404.
 */
export async function serveAsset(
  req: IncomingMessage,
  res: ServerResponse,
  dist: string,
  pathname: string,
): Promise<void> {
  const rest = pathname.slice('/operator/assets/'.length);
  const file = rest.length > 0 ? safeJoin(resolve(dist, 'assets'), rest) : null;
  if (file === null) return notFound(res, pathname);
  let body: Buffer;
  try {
    const info = await stat(file);
    if (!info.isFile()) return notFound(res, pathname);
    body = await readFile(file);
  } catch {
    return notFound(res, pathname);
  }
  res.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': body.length,
    'cache-control': 'public, max-age=31536000, immutable',
    'x-content-type-options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * The dashboard's icon, `web/dist/favicon.svg` (from `web/public/`), for `/operator/favicon.svg` and the
 * `/favicon.ico` browsers ask for on their own; 404 when the dashboard was not built.
 */
export async function serveFavicon(req: IncomingMessage, res: ServerResponse, dist: string): Promise<void> {
  let body: Buffer;
  try {
    body = await readFile(resolve(dist, 'favicon.svg'));
  } catch {
    return notFound(res, new URL(req.url ?? '/', 'http://localhost').pathname);
  }
  res.writeHead(200, {
    'content-type': CONTENT_TYPES['.svg']!,
    'content-length': body.length,
    'cache-control': 'public, max-age=86400',
    'x-content-type-options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The SPA's index.html, or null when the dashboard was not built. */
export async function readIndex(dist: string): Promise<Buffer | null> {
  try {
    return await readFile(resolve(dist, 'index.html'));
  } catch {
    return null;
  }
}

/** Whether a request is a browser navigation (it accepts HTML). */
export function wantsHtml(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && /\btext\/html\b/i.test(accept);
}

export function sendHtml(res: ServerResponse, status: number, body: Buffer | string, method = 'GET'): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': bytes.length,
    'cache-control': 'no-store',
    ...PAGE_HEADERS,
  });
  res.end(method === 'HEAD' ? undefined : bytes);
}

export const NOT_BUILT_MESSAGE =
  'The dashboard was not built: run `npm run build:web` (it writes web/dist), then reload.';

/** 503: `web/dist` is missing; a page for a browser, JSON for anything else. */
export function sendNotBuilt(req: IncomingMessage, res: ServerResponse): void {
  if (wantsHtml(req)) {
    sendHtml(
      res,
      503,
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Verdict dashboard not built</title></head>` +
        `<body><h1>The dashboard was not built</h1><p>Run <code>npm run build:web</code> (it writes ` +
        `<code>web/dist</code>), then reload this page.</p></body></html>`,
      req.method,
    );
    return;
  }
  sendJson(res, 503, { ok: false, error: 'dashboard_not_built', message: NOT_BUILT_MESSAGE });
}
