import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { isClientAbort, Router, sendJson, sendMethodNotAllowed, sendNoRoute } from './http/router.js';

export type Mount = {
  prefix: string;
  /** When given, a path under the prefix is this mount's only if it answers true (else the router's). */
  claims?: (pathname: string, method: string) => boolean;
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;
};

/**
 * Composes the HTTP surface: routes (health, webhooks, operator API, queue) on one router, plus
 * prefix mounts (tRPC, dashboard). Unknown paths answer 404 JSON; a thrown handler answers 500; a
 * request the client closed before it was read is logged at debug. A client has `requestTimeoutMs` to
 * send a whole request (checked every second), then it is answered 408 and its connection closed.
 */
export function createHttpServer(
  router: Router,
  mounts: Mount[],
  log: Logger,
  opts: { requestTimeoutMs: number } = { requestTimeoutMs: 10_000 },
): Server {
  router.add('GET', '/health', (_req, res) => sendJson(res, 200, { ok: true, service: 'verdict' }));
  const serverOptions = {
    requestTimeout: opts.requestTimeoutMs,
    headersTimeout: opts.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, opts.requestTimeoutMs),
  };
  const server = createServer(serverOptions, (req, res) => {
    // Stopping: this answer is the connection's last (keep-alive clients cannot hold the server open).
    if (draining.has(server)) res.setHeader('connection', 'close');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const done = (p: Promise<void> | void) =>
      Promise.resolve(p).catch((error) => {
        if (isClientAbort(error)) {
          log.debug(
            { event: 'client-aborted', path: url.pathname },
            'the client closed the request before it was read',
          );
          res.destroy();
          return;
        }
        log.error({ event: 'http-handler-failed', err: error, path: url.pathname }, 'request failed');
        if (!res.headersSent)
          sendJson(res, 500, { ok: false, error: 'internal_error', message: 'Internal server error' });
        else res.destroy();
      });
    const mount = mounts.find(
      (m) =>
        (url.pathname === m.prefix || url.pathname.startsWith(m.prefix + '/')) &&
        (m.claims?.(url.pathname, req.method ?? 'GET') ?? true),
    );
    if (mount) return void done(mount.handle(req, res, url));
    const found = router.match(req.method ?? 'GET', url.pathname);
    if (!found) return sendNoRoute(req, res, url.pathname);
    if ('methodNotAllowed' in found) return sendMethodNotAllowed(req, res, found.allow.join(', '));
    done(found.handler(req, res, found.params, url));
  });
  return server;
}

/** Servers that are stopping: their answers close their connections. */
const draining = new WeakSet<Server>();

/** How long a stopping server waits for in-flight requests before it closes every connection. */
export const DRAIN_MS = 10_000;

/**
 * Stops a server within a bounded time (issue 37): it stops accepting connections, closes the idle
 * keep-alive ones, answers every request still in flight or arriving on an open connection with
 * `Connection: close`, and after `drainMs` closes whatever connection is left. Resolves when the server has
 * closed.
 */
export async function drainServer(server: Server, drainMs = DRAIN_MS): Promise<void> {
  draining.add(server);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), drainMs);
  timer.unref();
  try {
    await closed;
  } finally {
    clearTimeout(timer);
  }
}
