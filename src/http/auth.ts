import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './router.js';
import { hasControlCharacter } from './text.js';
import { clientAddress } from './router.js';
import { THROTTLED_MESSAGE, type AuthThrottle } from './throttle.js';

/**
 * The static service-token classes of operator-api 5.1. Classes are not hierarchical: a route accepts
 * exactly the classes it lists, and the admin token is no master key.
 */
export type TokenClass =
  | 'operatorRead'
  | 'operatorAdmin'
  | 'operatorCommand'
  | 'operatorBridge'
  | 'queueAdmin'
  | 'queueEnqueue'
  | 'queueWorker';

/** Configured tokens; null (or empty) means the class is closed: nothing authenticates as it. */
export type ServiceTokens = Partial<Record<TokenClass, string | null>>;

/** The bearer token of a request, or null. */
export function bearerToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * Constant-time comparison: both sides are hashed first, so neither the content nor the length of the
 * configured token leaks through timing.
 */
export function tokensEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** Attribution the token holder supplies in `x-operator-actor` (never from a JSON body). */
export function operatorActor(req: IncomingMessage): string {
  const raw = req.headers['x-operator-actor'];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  return value && value.length <= 200 && !hasControlCharacter(value) ? value : 'service-admin';
}

/** Who is calling: a static service token of a class, or a scoped API key. */
export type Principal =
  | { kind: 'token'; tokenClass: TokenClass; actor: string }
  | { kind: 'key'; keyId: string; scopes: readonly string[]; actor: string };

/** A route's access rule: the static classes it accepts, and the API-key scope that also opens it. */
export type AccessRule = { classes: readonly TokenClass[]; scope?: string };

export type KeyAuthenticator = {
  authenticate(token: string): Promise<{ id: string; scopes: readonly string[] } | null>;
};

/** Why a request was refused: the status and body operator-api 5.1 and 5.2 give. */
export type Refusal = {
  status: 401 | 403 | 429;
  body: { ok: false; error: string; message?: string };
  /** `Retry-After` (seconds) of a 429. */
  retryAfter?: number;
};

/**
 * Authenticates a request against a route's rule (operator-api 5.1, 5.2) without answering: a principal,
 * or the refusal: 401 `unauthorized` for a missing, mismatched, unknown or revoked credential; 403
 * `forbidden` for a valid API key outside its scope (a key never opens a route without a scope, e.g. key
 * management). Shared by the REST routes and the tRPC facade.
 */
export async function authorize(
  req: IncomingMessage,
  deps: AuthDeps,
  rule: AccessRule,
): Promise<{ ok: true; principal: Principal } | { ok: false; refusal: Refusal }> {
  const presented = bearerToken(req);
  if (presented === null) return { ok: false, refusal: UNAUTHORIZED };
  const address = clientAddress(req);
  const wait = deps.throttle?.retryAfter(address) ?? null;
  if (wait !== null) return { ok: false, refusal: throttled(wait) };
  const result = await checkToken(req, deps, rule, presented);
  if (!result.ok && result.refusal.status === 401) deps.throttle?.failed(address, presented);
  return result;
}

/** What authenticates a request: the static tokens, the API keys, and the failed-attempt throttle. */
export type AuthDeps = {
  tokens: ServiceTokens;
  apiKeys?: KeyAuthenticator | null;
  throttle?: AuthThrottle | null;
};

const UNAUTHORIZED: Refusal = { status: 401, body: { ok: false, error: 'unauthorized' } };

/** 429 for an address with too many failed authentications (src/http/throttle.ts). */
export function throttled(retryAfter: number): Refusal {
  return {
    status: 429,
    body: { ok: false, error: 'too_many_requests', message: THROTTLED_MESSAGE },
    retryAfter,
  };
}

async function checkToken(
  req: IncomingMessage,
  deps: AuthDeps,
  rule: AccessRule,
  presented: string,
): Promise<{ ok: true; principal: Principal } | { ok: false; refusal: Refusal }> {
  const unauthorized = UNAUTHORIZED;
  // The first class of the rule whose configured token is presented. Every class is compared (no early
  // exit) so timing does not reveal which one matched.
  let tokenClass: TokenClass | null = null;
  for (const cls of rule.classes) {
    const expected = deps.tokens[cls];
    if (typeof expected === 'string' && expected.length > 0 && tokensEqual(presented, expected)) {
      tokenClass ??= cls;
    }
  }
  if (tokenClass) return { ok: true, principal: { kind: 'token', tokenClass, actor: operatorActor(req) } };
  if (presented.startsWith('vdt_') && deps.apiKeys) {
    const key = await deps.apiKeys.authenticate(presented);
    if (!key) return { ok: false, refusal: unauthorized };
    if (rule.scope === undefined || !key.scopes.includes(rule.scope)) {
      return {
        ok: false,
        refusal: {
          status: 403,
          body: { ok: false, error: 'forbidden', message: 'This API key is not allowed here' },
        },
      };
    }
    return {
      ok: true,
      principal: { kind: 'key', keyId: key.id, scopes: key.scopes, actor: `api-key:${key.id}` },
    };
  }
  return { ok: false, refusal: unauthorized };
}

/** Answers a refusal of `authorize` (a 401 with `www-authenticate: Bearer`). */
export function sendRefusal(res: ServerResponse, refusal: Refusal): void {
  const headers: Record<string, string> =
    refusal.status === 401
      ? { 'www-authenticate': 'Bearer' }
      : refusal.retryAfter !== undefined
        ? { 'retry-after': String(refusal.retryAfter) }
        : {};
  sendJson(res, refusal.status, refusal.body, headers);
}

/** `authorize`, answering the refusal itself; the principal, or null once it has answered. */
export async function guard(
  req: IncomingMessage,
  res: ServerResponse,
  deps: AuthDeps,
  rule: AccessRule,
): Promise<Principal | null> {
  const result = await authorize(req, deps, rule);
  if (result.ok) return result.principal;
  sendRefusal(res, result.refusal);
  return null;
}
