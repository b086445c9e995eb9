import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ServiceTokens } from '../http/auth.js';
import { BodyTooLargeError, readBody, sendJson } from '../http/router.js';
import { POLICY_MAX_BODY_BYTES } from '../policy/policy.schema.js';
import { OPERATOR_ROUTES } from '../operator/routes.js';
import { uiOrigin, type UiPrincipal } from './auth.js';

/** The largest body an operator route takes (the policy PATCH, 256 KiB): the proxy's body limit. */
export const PROXY_MAX_BODY_BYTES = POLICY_MAX_BODY_BYTES;
/** How long the proxy waits for the backend's answer. */
export const PROXY_TIMEOUT_MS = 60_000;

export type ProxyDeps = {
  tokens: ServiceTokens;
  /** The operator API base (no trailing slash), or null when unknown. */
  backendUrl: () => string | null;
  publicUrl: string | null;
  log: Logger;
};

type TokenChoice = 'operatorRead' | 'operatorCommand' | 'operatorAdmin';

/** The dashboard's backend tokens, the narrowest first. */
const TOKENS: readonly TokenChoice[] = ['operatorRead', 'operatorCommand', 'operatorAdmin'];

/**
 * Which backend token a proxied call uses (operator-api 5.1): the narrowest the operator route's own rule
 * takes (`OPERATOR_ROUTES`; HEAD as GET). `null`: not a proxy route, for a route no dashboard token opens
 * (command updates are the bridge's). A path no operator route has (the reports, an unknown path) is sent
 * on as before the routes were read: GET with the read token (under `keys` the admin token), a mutation
 * with the admin token, none under `commands`.
 */
export function tokenFor(method: string, rest: string): TokenChoice | null {
  const segments = rest.split('/');
  const routed = OPERATOR_ROUTES.find(
    (r) =>
      r.method === (method === 'HEAD' ? 'GET' : method) &&
      r.path.split('/').length === segments.length + 1 &&
      r.path.split('/').every((part, i) => i === 0 || part.startsWith(':') || part === segments[i - 1]),
  );
  if (routed) return TOKENS.find((token) => routed.op.rule.classes.includes(token)) ?? null;
  if (method === 'GET' || method === 'HEAD') return segments[0] === 'keys' ? 'operatorAdmin' : 'operatorRead';
  return segments[0] === 'commands' ? null : 'operatorAdmin';
}

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const METHODS = new Set(['GET', 'HEAD', ...MUTATIONS]);

function refuse(res: ServerResponse, status: number, error: string, message: string): void {
  sendJson(res, status, { ok: false, error, message });
}

/** The `<rest>` of `/api/<rest>` when it is a plain path (no empty, `.` or `..` segment), else null. */
function restOf(pathname: string): string | null {
  const rest = pathname.slice('/api/'.length);
  if (rest.length === 0) return null;
  for (const segment of rest.split('/')) {
    let name: string;
    try {
      name = decodeURIComponent(segment);
    } catch {
      return null;
    }
    if (name === '' || name === '.' || name === '..') return null;
  }
  return rest;
}

/**
 * `/api/<rest>?<query>` → `<backend>/operator/api/<rest>?<query>`, for a signed-in principal. The checks,
 * in order: a proxy route (404 `not_found`), a same-origin mutation (403 `cross_origin_mutation`), a JSON
 * mutation (415 `json_required`), a configured backend (503 `backend_not_configured`: no backend URL or
 * no read token) and token for the operation (503 `admin_backend_not_configured`), the body limit (413),
 * then the backend (502 `backend_unreachable` when the fetch throws). The backend's answer passes
 * through, but a backend 404 is answered `not_found`.
 */
export async function proxy(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  principal: UiPrincipal,
  deps: ProxyDeps,
): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const rest = restOf(url.pathname);
  const choice = rest === null || !METHODS.has(method) ? null : tokenFor(method, rest);
  if (rest === null || choice === null) {
    req.resume();
    return refuse(res, 404, 'not_found', `No dashboard proxy route for ${method} ${url.pathname}`);
  }
  if (MUTATIONS.has(method) && refusedMutation(req, res, principal, deps)) return;
  const configured = backendFor(req, res, deps, choice);
  if (!configured) return;
  const { backend, token } = configured;
  let body: Buffer | undefined;
  if (MUTATIONS.has(method)) {
    try {
      body = await readBody(req, PROXY_MAX_BODY_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        req.resume();
        return refuse(res, 413, 'payload_too_large', 'Request body is too large');
      }
      throw error;
    }
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'x-operator-actor': principal.login,
    accept: typeof req.headers.accept === 'string' ? req.headers.accept : 'application/json',
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const idempotencyKey = req.headers['idempotency-key'];
  if (typeof idempotencyKey === 'string') headers['idempotency-key'] = idempotencyKey;
  const target = `${backend}/operator/api/${rest}${url.search}`;
  let answer: Response;
  let bytes: Buffer;
  try {
    answer = await fetch(target, {
      method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(PROXY_TIMEOUT_MS),
    });
    bytes = Buffer.from(await answer.arrayBuffer());
  } catch (error) {
    deps.log.warn(
      { event: 'dashboard-backend-unreachable', err: error, path: `/operator/api/${rest}` },
      'the dashboard proxy could not reach the operator API',
    );
    return refuse(res, 502, 'backend_unreachable', 'The operator API could not be reached');
  }
  relay(res, answer, bytes, method, rest);
}

/** A mutation from another origin (403) or without JSON (415) is refused: true when it was. */
function refusedMutation(
  req: IncomingMessage,
  res: ServerResponse,
  principal: UiPrincipal,
  deps: ProxyDeps,
): boolean {
  const origin = req.headers.origin;
  const own = uiOrigin(req, deps.publicUrl);
  const sameOrigin =
    typeof origin === 'string' ? own !== null && origin === own : principal.source === 'bearer';
  if (!sameOrigin) {
    req.resume();
    refuse(
      res,
      403,
      'cross_origin_mutation',
      typeof origin === 'string'
        ? `A mutation from origin ${origin} is refused: the dashboard's origin is ${own ?? 'unknown'}`
        : 'A mutation without an Origin header is refused (only the bearer dashboard token may omit it)',
    );
    return true;
  }
  const type = req.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type.trim())) {
    req.resume();
    refuse(res, 415, 'json_required', 'A mutation must send Content-Type: application/json');
    return true;
  }
  return false;
}

/** The backend and the token of `choice`, or null after answering 503 when either is not configured. */
function backendFor(
  req: IncomingMessage,
  res: ServerResponse,
  deps: ProxyDeps,
  choice: TokenChoice,
): { backend: string; token: string } | null {
  const backend = deps.backendUrl();
  const readToken = deps.tokens.operatorRead;
  if (backend === null || !readToken) {
    req.resume();
    refuse(
      res,
      503,
      'backend_not_configured',
      backend === null
        ? 'The dashboard has no operator API to forward to (VERDICT_UI_BACKEND_URL)'
        : 'The dashboard proxy needs VERDICT_OPERATOR_READ_TOKEN to read the operator API',
    );
    return null;
  }
  const token = deps.tokens[choice];
  if (!token) {
    req.resume();
    const variable =
      choice === 'operatorCommand' ? 'VERDICT_OPERATOR_COMMAND_TOKEN' : 'VERDICT_OPERATOR_ADMIN_TOKEN';
    refuse(res, 503, 'admin_backend_not_configured', `This operation needs ${variable} on the dashboard`);
    return null;
  }
  return { backend, token };
}

/** The backend's answer, passed through; a backend 404 is answered `not_found`. */
function relay(res: ServerResponse, answer: Response, bytes: Buffer, method: string, rest: string): void {
  if (answer.status === 404) {
    let message = `The operator API has no ${method} /operator/api/${rest}`;
    try {
      const parsed = JSON.parse(bytes.toString('utf8')) as { message?: unknown };
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      // keep the generic message
    }
    return refuse(res, 404, 'not_found', message);
  }
  const passed: Record<string, string> = {
    'cache-control': 'no-store',
    'content-length': String(bytes.length),
  };
  for (const name of ['content-type', 'content-disposition', 'allow', 'retry-after']) {
    const value = answer.headers.get(name);
    if (value !== null) passed[name] = value;
  }
  res.writeHead(answer.status, passed);
  res.end(method === 'HEAD' ? undefined : bytes);
}
