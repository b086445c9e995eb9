import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceTokens } from '../http/auth.js';
import { sendMethodNotAllowed, sendNoRoute } from '../http/router.js';
import type { Mount } from '../server.js';
import { sendAuthRequired, uiPrincipal } from './auth.js';
import { handleAuth, redirect, type SignInDeps } from './auth-routes.js';
import { proxy } from './proxy.js';
import { readIndex, sendHtml, sendNotBuilt, serveAsset, serveFavicon, wantsHtml } from './static.js';

export type DashboardDeps = SignInDeps & {
  tokens: ServiceTokens;
  /** The SPA build (index.html and assets/). */
  dist: string;
  /** The operator API the proxy forwards to. */
  backendUrl: () => string | null;
};

/** The SPA's views (each answered with index.html; the SPA routes itself). */
const VIEWS = ['pull-requests', 'analytics', 'settings', 'memory'];
const PR_VIEW = /^\/operator\/pull-requests\/[^/]+\/[^/]+\/\d+$/;

function isView(pathname: string): boolean {
  const path = pathname.replace(/\/$/, '');
  return VIEWS.some((view) => path === `/operator/${view}`) || PR_VIEW.test(path);
}

/**
 * The dashboard's HTTP surface (issue 25; docs/dashboard.md), mounted only when
 * `VERDICT_OPERATOR_UI_ENABLED=1`: the views and assets under `/operator` (but never `/operator/api`,
 * the operator API's), the sign-in routes under `/operator/auth`, and the `/api/*` proxy (but never the
 * webhook path `POST /api/github/webhooks`).
 */
export function dashboardMounts(deps: DashboardDeps, webhookPaths: readonly string[]): Mount[] {
  const auth = { token: deps.config.token, sessions: deps.sessions };

  async function handleOperator(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (path.startsWith('/operator/auth/')) return handleAuth(deps, req, res, url);
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
