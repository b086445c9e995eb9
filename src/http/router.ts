import type { IncomingMessage, ServerResponse } from 'node:http';

export type Params = Record<string, string>;
export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  url: URL,
) => Promise<void> | void;

/** What a route declares about its input, for the OpenAPI document. */
export type RouteMeta = { input: import('zod').ZodType; source: 'query' | 'body' | 'params+body' | 'params' };

type Route = { method: string; parts: string[]; handler: RouteHandler; meta?: RouteMeta };

/** A tiny path router: literal segments and `:name` parameters (decoded). */
export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: RouteHandler, meta?: RouteMeta): this {
    this.routes.push({
      method: method.toUpperCase(),
      parts: pattern.split('/').filter(Boolean),
      handler,
      meta,
    });
    return this;
  }

  /** Every registered route, in registration order (for the OpenAPI document). */
  list(): Array<{ method: string; pattern: string; meta?: RouteMeta }> {
    return this.routes.map((r) => ({ method: r.method, pattern: '/' + r.parts.join('/'), meta: r.meta }));
  }

  /** Finds the handler; `methodNotAllowed` when the path exists under another method. */
  match(
    method: string,
    pathname: string,
  ): { handler: RouteHandler; params: Params } | { methodNotAllowed: true; allow: string[] } | null {
    const segments = pathname.split('/').filter(Boolean);
    const allow: string[] = [];
    for (const route of this.routes) {
      const params = matchParts(route.parts, segments);
      if (!params) continue;
      if (route.method === method.toUpperCase()) return { handler: route.handler, params };
      allow.push(route.method);
    }
    return allow.length > 0 ? { methodNotAllowed: true, allow } : null;
  }
}

function matchParts(parts: string[], segments: string[]): Params | null {
  if (parts.length !== segments.length) return null;
  const params: Params = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const segment = segments[i]!;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(segment);
      } catch {
        return null;
      }
    } else if (part !== segment) {
      return null;
    }
  }
  return params;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** 404 `not_found` for a path no route answers; the body is drained unread. */
export function sendNoRoute(req: IncomingMessage, res: ServerResponse, pathname: string): void {
  req.resume();
  sendJson(res, 404, { ok: false, error: 'not_found', message: `No route for ${req.method} ${pathname}` });
}

/** 405 `method_not_allowed` naming the methods `allow` the path takes; the body is drained unread. */
export function sendMethodNotAllowed(req: IncomingMessage, res: ServerResponse, allow: string): void {
  req.resume();
  sendJson(res, 405, { ok: false, error: 'method_not_allowed', message: `Use ${allow}` }, { allow });
}

/** Sends JSON that is already serialized. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Request body is too large (limit ${limit} bytes)`);
  }
}

/** The client closed the connection (or the server's request timeout did) before the body was read. */
export class ClientAbortedError extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('the client closed the request before its body was read');
  }
}

/** True for the errors of a request the client (or the request timeout) ended before it was read. */
export function isClientAbort(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return error instanceof ClientAbortedError || (e?.code === 'ECONNRESET' && e?.message === 'aborted');
}

export type BodyLease = {
  /** Holds `total` bytes in all for this request; false (nothing taken) when the budget lacks them. */
  ensure(total: number): boolean;
  release(): void;
};

export class BodyBudgetExceededError extends Error {
  constructor() {
    super('too many request-body bytes in flight');
  }
}

/**
 * Reads a request body up to `limit` bytes. Refuses early on a declared Content-Length over the limit
 * and stops buffering as soon as the stream passes it, so an oversized body is never held in memory.
 * With a `lease`, the body's bytes are taken from a budget as they arrive (never the declared length
 * ahead of them): past the budget it rejects with BodyBudgetExceededError. A request closed before its
 * end rejects with ClientAbortedError.
 */
export function readBody(req: IncomingMessage, limit: number, lease?: BodyLease): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new BodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (error: Error) => {
      done = true;
      chunks.length = 0;
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) return fail(new BodyTooLargeError(limit));
      if (lease && !lease.ensure(size)) return fail(new BodyBudgetExceededError());
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (error) => {
      if (done) return;
      fail(isClientAbort(error) ? new ClientAbortedError() : error);
    });
    req.on('close', () => {
      if (!done) fail(new ClientAbortedError());
    });
  });
}

/** The scheme a proxy in front says the client used (the first `x-forwarded-proto` value), or null. */
export function forwardedProto(req: IncomingMessage): string | null {
  const raw = req.headers['x-forwarded-proto'];
  return (Array.isArray(raw) ? raw[0] : raw)?.split(',')[0]?.trim().toLowerCase() || null;
}

/** The address a request came from (the socket's peer; an IPv4-mapped IPv6 address as IPv4). */
export function clientAddress(req: IncomingMessage): string {
  const raw = req.socket.remoteAddress ?? 'unknown';
  return raw.startsWith('::ffff:') ? raw.slice(7) : raw;
}
