import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DashboardConfig } from '../config/index.js';
import { sendRefusal, throttled, tokensEqual, type ServiceTokens } from '../http/auth.js';
import { clientAddress } from '../http/router.js';
import type { AuthThrottle } from '../http/throttle.js';
import { readJsonValue } from '../http/json.js';
import { sendJson, sendMethodNotAllowed, sendNoRoute } from '../http/router.js';
import type { Mount } from '../server.js';
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
import { proxy } from './proxy.js';
import { readIndex, sendHtml, sendNotBuilt, serveAsset, serveFavicon, wantsHtml } from './static.js';

export type DashboardDeps = {
  config: DashboardConfig;
  /** GitHub's web and REST base URLs (GHE_HOST / GHE_PROTOCOL). */
  github: { webUrl: string; apiUrl: string };
  publicUrl: string | null;
  tokens: ServiceTokens;
  /** Failed sign-ins per client address (429 past the limit), shared with the operator API. */
  throttle?: AuthThrottle | null;
  sessions: UiSessionStore;
  clock: Clock;
  /** The SPA build (index.html and assets/). */
  dist: string;
  /** The operator API the proxy forwards to. */
  backendUrl: () => string | null;
  log: Logger;
};

/** The SPA's views (each answered with index.html; the SPA routes itself). */
const VIEWS = ['pull-requests', 'analytics', 'settings', 'memory'];
const PR_VIEW = /^\/operator\/pull-requests\/[^/]+\/[^/]+\/\d+$/;

function isView(pathname: string): boolean {
  const path = pathname.replace(/\/$/, '');
  return VIEWS.some((view) => path === `/operator/${view}`) || PR_VIEW.test(path);
}

function redirect(res: ServerResponse, location: string, cookies: string[] = []): void {
  res.writeHead(302, {
    location,
    'cache-control': 'no-store',
    ...(cookies.length ? { 'set-cookie': cookies } : {}),
  });
  res.end();
}

/**
 * The dashboard's HTTP surface (issue 25; docs/dashboard.md), mounted only when
 * `VERDICT_OPERATOR_UI_ENABLED=1`: the views and assets under `/operator` (but never `/operator/api`,
 * the operator API's), the sign-in routes under `/operator/auth`, and the `/api/*` proxy (but never the
 * webhook path `POST /api/github/webhooks`).
 */
export function dashboardMounts(deps: DashboardDeps, webhookPaths: readonly string[]): Mount[] {
  const auth = { token: deps.config.token, sessions: deps.sessions };
  const secure = (req: IncomingMessage) => overHttps(req, deps.publicUrl);
  const ttlSeconds = deps.config.sessionTtlMs / 1000;

  async function startSession(
    req: IncomingMessage,
    login: string,
    via: UiSessionVia,
  ): Promise<{ cookie: string; expiresAt: number }> {
    const { token, session } = await deps.sessions.create(login, via, deps.config.sessionTtlMs);
    deps.log.info({ event: 'dashboard-signed-in', login, via }, 'dashboard session started');
    return {
      cookie: cookie(SESSION_COOKIE, token, { maxAgeSeconds: ttlSeconds, secure: secure(req) }),
      expiresAt: session.expiresAt,
    };
  }

  /** A browser mutation of the auth routes from another origin is refused (Origin, when sent, must be ours). */
  function crossOrigin(req: IncomingMessage, res: ServerResponse): boolean {
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

  function redirectUri(req: IncomingMessage): string {
    return `${uiOrigin(req, deps.publicUrl) ?? 'http://localhost'}/operator/auth/github/callback`;
  }

  const clearState = (req: IncomingMessage) =>
    cookie(STATE_COOKIE, '', { maxAgeSeconds: 0, secure: secure(req), path: '/operator/auth' });
  const loginFailed = (res: ServerResponse, req: IncomingMessage, code: SignInError) =>
    redirect(res, `/operator/login?error=${code}`, [clearState(req)]);

  async function handleAuth(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    switch (url.pathname) {
      case '/operator/auth/session': {
        if (method !== 'GET') return sendMethodNotAllowed(req, res, 'GET');
        const who = await uiPrincipal(req, auth);
        if (!who) return sendAuthRequired(res);
        return sendJson(res, 200, {
          ok: true,
          login: who.login,
          via: who.via,
          expiresAt: who.expiresAt === null ? null : new Date(who.expiresAt).toISOString(),
        });
      }
      case '/operator/auth/token': {
        if (method !== 'POST') return sendMethodNotAllowed(req, res, 'POST');
        if (crossOrigin(req, res)) return;
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
        if (!read.ok)
          return sendJson(res, read.status, { ok: false, error: read.error, message: read.message });
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
        const started = await startSession(req, TOKEN_LOGIN, 'token');
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
      case '/operator/auth/logout': {
        if (method !== 'POST') return sendMethodNotAllowed(req, res, 'POST');
        if (crossOrigin(req, res)) return;
        req.resume();
        const token = readCookies(req).get(SESSION_COOKIE);
        if (token) await deps.sessions.delete(token);
        return sendJson(
          res,
          200,
          { ok: true },
          { 'set-cookie': cookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, secure: secure(req) }) },
        );
      }
      case '/operator/auth/github': {
        if (method !== 'GET') return sendMethodNotAllowed(req, res, 'GET');
        const oauth = deps.config.oauth;
        if (!oauth) return loginFailed(res, req, 'github_not_configured');
        const { state, cookieValue } = newState(deps.clock.now(), oauth.clientSecret);
        return redirect(
          res,
          authorizeUrl({ webUrl: deps.github.webUrl, clientId: oauth.clientId }, redirectUri(req), state),
          [
            cookie(STATE_COOKIE, cookieValue, {
              maxAgeSeconds: STATE_TTL_MS / 1000,
              secure: secure(req),
              path: '/operator/auth',
            }),
          ],
        );
      }
      case '/operator/auth/github/callback': {
        if (method !== 'GET') return sendMethodNotAllowed(req, res, 'GET');
        const oauth = deps.config.oauth;
        if (!oauth) return loginFailed(res, req, 'github_not_configured');
        const state = url.searchParams.get('state');
        if (!stateMatches(readCookies(req).get(STATE_COOKIE), state, deps.clock.now(), oauth.clientSecret)) {
          return loginFailed(res, req, 'state_mismatch');
        }
        const code = url.searchParams.get('code');
        if (url.searchParams.has('error') || !code) return loginFailed(res, req, 'github_denied');
        let login: string;
        try {
          login = await signInWithGithub(
            {
              webUrl: deps.github.webUrl,
              apiUrl: deps.github.apiUrl,
              clientId: oauth.clientId,
              clientSecret: oauth.clientSecret,
              allowedLogins: deps.config.allowedLogins,
              allowedOrgs: deps.config.allowedOrgs,
            },
            code,
            redirectUri(req),
          );
        } catch (error) {
          if (!(error instanceof SignInRefused)) throw error;
          deps.log.warn({ event: 'dashboard-sign-in-refused', reason: error.code }, 'GitHub sign-in refused');
          return loginFailed(res, req, error.code);
        }
        const started = await startSession(req, login, 'github');
        return redirect(res, '/operator/pull-requests', [started.cookie, clearState(req)]);
      }
      default:
        return sendNoRoute(req, res, url.pathname);
    }
  }

  async function handleOperator(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (path.startsWith('/operator/auth/')) return handleAuth(req, res, url);
    if (method !== 'GET' && method !== 'HEAD') return sendMethodNotAllowed(req, res, 'GET, HEAD');
    if (path.startsWith('/operator/assets/')) return serveAsset(req, res, deps.dist, path);
    if (path === '/operator/favicon.svg') return serveFavicon(req, res, deps.dist);
    if (path === '/operator' || path === '/operator/') return redirect(res, '/operator/pull-requests');
    const login = path === '/operator/login' || path === '/operator/login/';
    if (!login && !isView(path)) return sendNoRoute(req, res, path);
    const who = login ? null : await uiPrincipal(req, auth);
    if (!login && !who && !wantsHtml(req)) return sendAuthRequired(res);
    const index = await readIndex(deps.dist);
    if (index === null) return sendNotBuilt(req, res);
    // Without a sign-in a browser gets the SPA (it shows its sign-in screen), never data: 401.
    return sendHtml(res, login || who ? 200 : 401, index, method);
  }

  return [
    // Browsers ask for /favicon.ico on their own: the dashboard's icon (SVG) rather than a 404.
    {
      prefix: '/favicon.ico',
      claims: (pathname) => pathname === '/favicon.ico',
      handle: async (req, res) => {
        const method = req.method ?? 'GET';
        if (method !== 'GET' && method !== 'HEAD') return sendMethodNotAllowed(req, res, 'GET, HEAD');
        return serveFavicon(req, res, deps.dist);
      },
    },
    {
      prefix: '/operator',
      claims: (pathname) => pathname !== '/operator/api' && !pathname.startsWith('/operator/api/'),
      handle: handleOperator,
    },
    {
      prefix: '/api',
      claims: (pathname, method) => !(method === 'POST' && webhookPaths.includes(pathname)),
      handle: async (req, res, url) => {
        const who = await uiPrincipal(req, auth);
        if (!who) {
          req.resume();
          return sendAuthRequired(res);
        }
        return proxy(req, res, url, who, {
          tokens: deps.tokens,
          backendUrl: deps.backendUrl,
          publicUrl: deps.publicUrl,
          log: deps.log,
        });
      },
    },
  ];
}
