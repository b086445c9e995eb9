import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

/**
 * A STAND-IN for the dashboard server of issue 25, for the browser tests of the front end only: it serves
 * `web/dist` with the server contract (index.html for the view paths, assets under /operator/assets/), a
 * token sign-in with an in-memory session cookie, and a plain `/api/*` proxy to a real Verdict with the
 * read, command and admin tokens. It is not the real dashboard server (no GitHub OAuth, no stored
 * sessions) and is to be replaced by it.
 */
export type StandInOptions = {
  backend: string;
  uiToken: string;
  tokens: { read: string; admin: string; command: string };
  distDir: string;
};

const VIEW_PATHS = [
  /^\/operator\/?$/,
  /^\/operator\/pull-requests\/?$/,
  /^\/operator\/pull-requests\/[^/]+\/[^/]+\/\d+\/?$/,
  /^\/operator\/(analytics|settings|memory|login)\/?$/,
];
const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export async function startDashboardStandIn(
  opts: StandInOptions,
): Promise<{ url: string; stop(): Promise<void> }> {
  const sessions = new Map<string, { login: string; expiresAt: number }>();
  const sessionOf = (req: IncomingMessage) => {
    const id = /(?:^|;\s*)verdict_session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const s = id ? sessions.get(id) : undefined;
    return s && s.expiresAt > Date.now() ? s : null;
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => json(res, 500, { ok: false, error: 'internal', message: String(err) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const path = url.pathname;
    const method = req.method ?? 'GET';

    if (path === '/operator/auth/session' && method === 'GET') {
      const s = sessionOf(req);
      if (!s) return json(res, 401, { ok: false, error: 'operator_auth_required' });
      return json(res, 200, {
        ok: true,
        login: s.login,
        via: 'token',
        expiresAt: new Date(s.expiresAt).toISOString(),
      });
    }
    if (path === '/operator/auth/token' && method === 'POST') {
      let token = '';
      try {
        token = String((JSON.parse((await readBody(req)).toString()) as { token?: unknown }).token ?? '');
      } catch {
        return json(res, 415, { ok: false, error: 'json_required', message: 'Send JSON' });
      }
      if (!same(token, opts.uiToken)) return json(res, 401, { ok: false, error: 'operator_auth_required' });
      const id = randomBytes(24).toString('hex');
      const session = { login: 'dashboard-token', expiresAt: Date.now() + 3600_000 };
      sessions.set(id, session);
      return json(
        res,
        200,
        {
          ok: true,
          login: session.login,
          via: 'token',
          expiresAt: new Date(session.expiresAt).toISOString(),
        },
        { 'set-cookie': `verdict_session=${id}; HttpOnly; SameSite=Lax; Path=/` },
      );
    }
    if (path === '/operator/auth/logout' && method === 'POST') {
      const id = /(?:^|;\s*)verdict_session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      if (id) sessions.delete(id);
      return json(res, 200, { ok: true }, { 'set-cookie': 'verdict_session=; Max-Age=0; Path=/' });
    }
    if (path === '/operator/auth/github') {
      res.writeHead(302, { location: '/operator/login?error=oauth_not_configured' });
      return res.end();
    }

    if (path.startsWith('/api/')) {
      if (!sessionOf(req)) return json(res, 401, { ok: false, error: 'operator_auth_required' });
      const mutation = method !== 'GET' && method !== 'HEAD';
      if (mutation && !(req.headers['content-type'] ?? '').startsWith('application/json')) {
        return json(res, 415, { ok: false, error: 'json_required', message: 'Mutations must be JSON' });
      }
      const rest = path.slice('/api/'.length);
      const token = !mutation
        ? opts.tokens.read
        : rest.startsWith('commands/')
          ? opts.tokens.command
          : opts.tokens.admin;
      let upstream: Response;
      try {
        upstream = await fetch(`${opts.backend}/operator/api/${rest}${url.search}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            'x-operator-actor': 'dashboard-token',
            ...(mutation ? { 'content-type': 'application/json' } : {}),
          },
          body: mutation ? await readBody(req) : undefined,
        });
      } catch (err) {
        return json(res, 502, { ok: false, error: 'backend_unreachable', message: String(err) });
      }
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
        'cache-control': 'no-store',
      });
      return res.end(Buffer.from(await upstream.arrayBuffer()));
    }

    if (path.startsWith('/operator/assets/')) {
      const file = normalize(join(opts.distDir, 'assets', path.slice('/operator/assets/'.length)));
      if (!file.startsWith(join(opts.distDir, 'assets')))
        return json(res, 404, { ok: false, error: 'not_found' });
      try {
        const body = await readFile(file);
        res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
        return res.end(body);
      } catch {
        return json(res, 404, { ok: false, error: 'not_found' });
      }
    }
    if (method === 'GET' && VIEW_PATHS.some((p) => p.test(path))) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      return res.end(await readFile(join(opts.distDir, 'index.html')));
    }
    return json(res, 404, { ok: false, error: 'not_found', message: 'No such route' });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
