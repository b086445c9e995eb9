import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DashboardConfig } from '../config/index.js';
import { sendRefusal, throttled, tokensEqual } from '../http/auth.js';
import { readJsonValue } from '../http/json.js';
import { clientAddress, sendJson, sendMethodNotAllowed, sendNoRoute } from '../http/router.js';
import type { AuthThrottle } from '../http/throttle.js';
import type { UiSessionStore, UiSessionVia } from '../store/ui-sessions.js';
import {
  cookie,
  newState,
  overHttps,
  readCookies,
  sendAuthRequired,
  SESSION_COOKIE,
  STATE_COOKIE,
  STATE_TTL_MS,
  stateMatches,
  TOKEN_LOGIN,
  uiOrigin,
  uiPrincipal,
} from './auth.js';
import { authorizeUrl, signInWithGithub, SignInRefused, type SignInError } from './github.js';

/** What the sign-in routes under `/operator/auth` need (docs/dashboard.md). */
export type SignInDeps = {
  config: DashboardConfig;
  /** GitHub's web and REST base URLs (GHE_HOST / GHE_PROTOCOL). */
  github: { webUrl: string; apiUrl: string };
  publicUrl: string | null;
  /** Failed sign-ins per client address (429 past the limit), shared with the operator API. */
  throttle?: AuthThrottle | null;
  sessions: UiSessionStore;
  clock: Clock;
  log: Logger;
};

export function redirect(res: ServerResponse, location: string, cookies: string[] = []): void {
  res.writeHead(302, {
    location,
    'cache-control': 'no-store',
    ...(cookies.length ? { 'set-cookie': cookies } : {}),
  });
  res.end();
}

async function startSession(
  deps: SignInDeps,
  req: IncomingMessage,
  login: string,
  via: UiSessionVia,
): Promise<{ cookie: string; expiresAt: number }> {
  const { token, session } = await deps.sessions.create(login, via, deps.config.sessionTtlMs);
  deps.log.info({ event: 'dashboard-signed-in', login, via }, 'dashboard session started');
  return {
    cookie: cookie(SESSION_COOKIE, token, {
      maxAgeSeconds: deps.config.sessionTtlMs / 1000,
      secure: overHttps(req, deps.publicUrl),
    }),
    expiresAt: session.expiresAt,
  };
}

/** A browser mutation of the auth routes from another origin is refused (Origin, when sent, must be ours). */
function crossOrigin(deps: SignInDeps, req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin === uiOrigin(req, deps.publicUrl)) return false;
  req.resume();
  sendJson(res, 403, {
    ok: false,
    error: 'cross_origin_mutation',
    message: `A request from origin ${origin} is refused`,
  });
  return true;
}

function redirectUri(deps: SignInDeps, req: IncomingMessage): string {
  return `${uiOrigin(req, deps.publicUrl) ?? 'http://localhost'}/operator/auth/github/callback`;
}

const clearState = (deps: SignInDeps, req: IncomingMessage) =>
  cookie(STATE_COOKIE, '', {
    maxAgeSeconds: 0,
    secure: overHttps(req, deps.publicUrl),
    path: '/operator/auth',
  });
const loginFailed = (deps: SignInDeps, res: ServerResponse, req: IncomingMessage, code: SignInError) =>
  redirect(res, `/operator/login?error=${code}`, [clearState(deps, req)]);

/** Who is signed in (GET). */
async function sessionRoute(deps: SignInDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET') return sendMethodNotAllowed(req, res, 'GET');
  const who = await uiPrincipal(req, { token: deps.config.token, sessions: deps.sessions });
  if (!who) return sendAuthRequired(res);
  return sendJson(res, 200, {
    ok: true,
    login: who.login,
    via: who.via,
    expiresAt: who.expiresAt === null ? null : new Date(who.expiresAt).toISOString(),
  });
}

/** Signs in with the operator token (POST, JSON `{token}`). */
async function tokenRoute(deps: SignInDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'POST') return sendMethodNotAllowed(req, res, 'POST');
  if (crossOrigin(deps, req, res)) return;
  const type = req.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type.trim())) {
    req.resume();
    return sendJson(res, 415, {
      ok: false,
      error: 'json_required',
      message: 'Send Content-Type: application/json',
    });
  }
  const read = await readJsonValue(req, 4096);
  if (!read.ok) return sendJson(res, read.status, { ok: false, error: read.error, message: read.message });
  const presented = (read.value as { token?: unknown } | null)?.token;
  const address = clientAddress(req);
  const wait = deps.throttle?.retryAfter(address) ?? null;
  if (wait !== null) return sendRefusal(res, throttled(wait));
  if (
    deps.config.token === null ||
    typeof presented !== 'string' ||
    !tokensEqual(presented, deps.config.token)
  ) {
    deps.throttle?.failed(address, typeof presented === 'string' ? presented : '');
    return sendAuthRequired(res);
  }
  const started = await startSession(deps, req, TOKEN_LOGIN, 'token');
  return sendJson(
    res,
    200,
    {
      ok: true,
      login: TOKEN_LOGIN,
      via: 'token',
      expiresAt: new Date(started.expiresAt).toISOString(),
    },
    { 'set-cookie': started.cookie },
  );
}

/** Ends the session (POST). */
async function logoutRoute(deps: SignInDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'POST') return sendMethodNotAllowed(req, res, 'POST');
  if (crossOrigin(deps, req, res)) return;
  req.resume();
  const token = readCookies(req).get(SESSION_COOKIE);
  if (token) await deps.sessions.delete(token);
  return sendJson(
    res,
    200,
    { ok: true },
    {
      'set-cookie': cookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, secure: overHttps(req, deps.publicUrl) }),
    },
  );
}

/** Starts the GitHub sign-in: to GitHub with a state cookie. */
async function githubRoute(deps: SignInDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET') return sendMethodNotAllowed(req, res, 'GET');
  const oauth = deps.config.oauth;
  if (!oauth) return loginFailed(deps, res, req, 'github_not_configured');
  const { state, cookieValue } = newState(deps.clock.now(), oauth.clientSecret);
  return redirect(
    res,
    authorizeUrl({ webUrl: deps.github.webUrl, clientId: oauth.clientId }, redirectUri(deps, req), state),
    [
      cookie(STATE_COOKIE, cookieValue, {
        maxAgeSeconds: STATE_TTL_MS / 1000,
        secure: overHttps(req, deps.publicUrl),
        path: '/operator/auth',
      }),
    ],
  );
}

/** GitHub's answer: checks the state, signs in the allowed login, starts a session. */
async function callbackRoute(
  deps: SignInDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET') return sendMethodNotAllowed(req, res, 'GET');
  const oauth = deps.config.oauth;
  if (!oauth) return loginFailed(deps, res, req, 'github_not_configured');
  const state = url.searchParams.get('state');
  if (!stateMatches(readCookies(req).get(STATE_COOKIE), state, deps.clock.now(), oauth.clientSecret)) {
    return loginFailed(deps, res, req, 'state_mismatch');
  }
  const code = url.searchParams.get('code');
  if (url.searchParams.has('error') || !code) return loginFailed(deps, res, req, 'github_denied');
  let login: string;
  try {
    login = await signInWithGithub(
      {
        ...deps.github,
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
        allowedLogins: deps.config.allowedLogins,
        allowedOrgs: deps.config.allowedOrgs,
      },
      code,
      redirectUri(deps, req),
    );
  } catch (error) {
    if (!(error instanceof SignInRefused)) throw error;
    deps.log.warn({ event: 'dashboard-sign-in-refused', reason: error.code }, 'GitHub sign-in refused');
    return loginFailed(deps, res, req, error.code);
  }
  const started = await startSession(deps, req, login, 'github');
  return redirect(res, '/operator/pull-requests', [started.cookie, clearState(deps, req)]);
}

const AUTH_ROUTES: Record<
  string,
  (deps: SignInDeps, req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>
> = {
  '/operator/auth/session': sessionRoute,
  '/operator/auth/token': tokenRoute,
  '/operator/auth/logout': logoutRoute,
  '/operator/auth/github': githubRoute,
  '/operator/auth/github/callback': callbackRoute,
};

/** The sign-in routes under `/operator/auth`. */
export async function handleAuth(
  deps: SignInDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const route = Object.hasOwn(AUTH_ROUTES, url.pathname) ? AUTH_ROUTES[url.pathname] : undefined;
  if (!route) return sendNoRoute(req, res, url.pathname);
  return route(deps, req, res, url);
}
