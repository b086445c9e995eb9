import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerToken, tokensEqual } from '../http/auth.js';
import { forwardedProto, sendJson } from '../http/router.js';
import type { UiSessionStore, UiSessionVia } from '../store/ui-sessions.js';

export const SESSION_COOKIE = 'verdict_session';
export const STATE_COOKIE = 'verdict_oauth_state';
/** The login a session opened with the dashboard token carries (and the actor the proxy sends for it). */
export const TOKEN_LOGIN = 'operator-ui-token';
/** How long a GitHub sign-in may take between the redirect and the callback. */
export const STATE_TTL_MS = 10 * 60_000;

/** Who is using the dashboard: a session (cookie), or the bearer dashboard token. */
export type UiPrincipal = {
  login: string;
  via: UiSessionVia;
  /** `bearer`: the request itself carried the dashboard token (no cookie, not a browser session). */
  source: 'session' | 'bearer';
  expiresAt: number | null;
};

export type AuthDeps = {
  token: string | null;
  sessions: UiSessionStore;
};

/** The cookies of a request (the first value of each name). */
export function readCookies(req: IncomingMessage): Map<string, string> {
  const cookies = new Map<string, string>();
  const header = req.headers.cookie;
  if (typeof header !== 'string') return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/** Whether the request reached us over HTTPS (a proxy's x-forwarded-proto, or an https public URL). */
export function overHttps(req: IncomingMessage, publicUrl: string | null): boolean {
  return forwardedProto(req) === 'https' || (publicUrl?.toLowerCase().startsWith('https://') ?? false);
}

/** The dashboard's own origin: the public URL's, else the one the request was addressed to. */
export function uiOrigin(req: IncomingMessage, publicUrl: string | null): string | null {
  if (publicUrl) return new URL(publicUrl).origin;
  const host = req.headers.host;
  if (typeof host !== 'string' || host.length === 0) return null;
  try {
    return new URL(`${overHttps(req, null) ? 'https' : 'http'}://${host}`).origin;
  } catch {
    return null;
  }
}

/** A `Set-Cookie` value: HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS. */
export function cookie(
  name: string,
  value: string,
  opts: { maxAgeSeconds: number; secure: boolean; path?: string },
): string {
  const parts = [
    `${name}=${value}`,
    `Path=${opts.path ?? '/'}`,
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${Math.max(0, Math.floor(opts.maxAgeSeconds))}`,
  ];
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}

/**
 * Who the request is: a live session of its `verdict_session` cookie, else the bearer dashboard token
 * (compared in constant time); null when neither. Fails closed: no configured token opens nothing.
 */
export async function uiPrincipal(req: IncomingMessage, deps: AuthDeps): Promise<UiPrincipal | null> {
  const presented = bearerToken(req);
  if (presented !== null && deps.token !== null && tokensEqual(presented, deps.token)) {
    return { login: TOKEN_LOGIN, via: 'token', source: 'bearer', expiresAt: null };
  }
  const sessionToken = readCookies(req).get(SESSION_COOKIE);
  if (sessionToken && /^[A-Za-z0-9_-]{20,100}$/.test(sessionToken)) {
    const session = await deps.sessions.find(sessionToken);
    if (session) {
      return { login: session.login, via: session.via, source: 'session', expiresAt: session.expiresAt };
    }
  }
  return null;
}

export const AUTH_REQUIRED_MESSAGE =
  'Sign in to the dashboard: a session (Sign in with GitHub, or POST /operator/auth/token), or Authorization: Bearer <VERDICT_OPERATOR_UI_TOKEN>';

/** 401 `operator_auth_required` (review-engine 5 item 3). */
export function sendAuthRequired(res: ServerResponse): void {
  sendJson(
    res,
    401,
    { ok: false, error: 'operator_auth_required', message: AUTH_REQUIRED_MESSAGE },
    { 'www-authenticate': 'Bearer' },
  );
}

// --- The OAuth `state`: a random value, in a signed short-lived cookie (no server memory to share). ---

function stateKey(clientSecret: string): Buffer {
  return createHmac('sha256', 'verdict-oauth-state').update(clientSecret, 'utf8').digest();
}

function sign(payload: string, clientSecret: string): string {
  return createHmac('sha256', stateKey(clientSecret)).update(payload, 'utf8').digest('base64url');
}

/** A new state and its cookie value (`<state>.<expiresAt>.<hmac>`). */
export function newState(now: number, clientSecret: string): { state: string; cookieValue: string } {
  const state = randomBytes(24).toString('base64url');
  const payload = `${state}.${now + STATE_TTL_MS}`;
  return { state, cookieValue: `${payload}.${sign(payload, clientSecret)}` };
}

/** Whether the callback's `state` is the one of the signed, unexpired state cookie. */
export function stateMatches(
  cookieValue: string | undefined,
  state: string | null,
  now: number,
  clientSecret: string,
): boolean {
  if (!cookieValue || !state) return false;
  const parts = cookieValue.split('.');
  if (parts.length !== 3) return false;
  const [expected, expiresAt, mac] = parts as [string, string, string];
  if (!tokensEqual(mac, sign(`${expected}.${expiresAt}`, clientSecret))) return false;
  if (!/^\d+$/.test(expiresAt) || Number(expiresAt) <= now) return false;
  return tokensEqual(state, expected);
}
