import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { PROXY_MAX_BODY_BYTES } from '../../src/dashboard/proxy.js';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import type { ProcessEnv } from '../../src/config/index.js';
import { TOKENS } from '../helpers/operator.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

/**
 * The dashboard's server side (issue 25): the gate, the views and assets, the two ways in, sessions, and
 * the /api/* proxy with the codes of operator-api section 7. GitHub is a local fake OAuth server.
 */

const UI_TOKEN = 'ui-secret-token';
const INDEX = '<!doctype html><html><body><div id="app">verdict-spa</div></body></html>';

let root: string;
let dist: string;
const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>';
const running: RunningVerdict[] = [];
const servers: Server[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'verdict-ui-'));
  dist = join(root, 'dist');
  mkdirSync(join(dist, 'assets'), { recursive: true });
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log("spa");');
  writeFileSync(join(dist, 'assets', 'index-abc123.css'), 'body{margin:0}');
  writeFileSync(join(dist, 'assets', 'font.woff2'), Buffer.from([0x77, 0x4f, 0x46, 0x32]));
  writeFileSync(join(dist, 'favicon.svg'), FAVICON);
  writeFileSync(join(root, 'secret.txt'), 'do not serve');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function start(env: ProcessEnv = {}, opts: Parameters<typeof startVerdict>[1] = {}): Promise<string> {
  const r = await startVerdict(
    { ...TOKENS, VERDICT_OPERATOR_UI_ENABLED: '1', VERDICT_OPERATOR_UI_TOKEN: UI_TOKEN, ...env },
    { uiDist: dist, ...opts },
  );
  running.push(r);
  return r.baseUrl;
}

function listen(server: Server): Promise<string> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

const bearer = (token = UI_TOKEN) => ({ authorization: `Bearer ${token}` });

/** The `name=value` of a Set-Cookie header of `name`. */
function setCookie(res: Response, name: string): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
}

/** `POST /operator/auth/token` with `token`, from the dashboard's own origin unless `headers` say otherwise. */
function postToken(base: string, token = UI_TOKEN, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/operator/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base, ...headers },
    body: JSON.stringify({ token }),
  });
}

async function tokenSession(base: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await postToken(base, UI_TOKEN, headers);
  expect(res.status).toBe(200);
  return setCookie(res, 'verdict_session')!.split(';')[0]!;
}

/** `[label, status, error code]` of an answer (the label names the failing case of a loop). */
async function refusalOf(label: string, res: Response): Promise<[string, number, string]> {
  return [label, res.status, ((await res.json()) as { error: string }).error];
}

async function expectAuthRequired(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(await res.json()).toMatchObject({ ok: false, error: 'operator_auth_required' });
}

/** A raw GET (no client-side normalisation of the path). */
function rawGet(base: string, path: string): Promise<IncomingMessage> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: 'GET' }, (res) => {
      res.resume();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the gate', () => {
  test('disabled: the dashboard paths are not routed (404 as any unknown path); the operator API stays', async () => {
    const base = await start({ VERDICT_OPERATOR_UI_ENABLED: '0' });
    for (const path of [
      '/operator/pull-requests',
      '/operator/login',
      '/operator/assets/index-abc123.js',
      '/operator/auth/session',
      '/api/settings',
    ]) {
      const res = await fetch(`${base}${path}`, { headers: bearer() });
      expect(await refusalOf(path, res)).toEqual([path, 404, 'not_found']);
    }
    const api = await fetch(`${base}/operator/api/repos`, {
      headers: bearer(TOKENS.VERDICT_OPERATOR_READ_TOKEN),
    });
    expect(api.status).toBe(200);
  });

  test('enabled: the operator API and the webhook path under /api are untouched', async () => {
    const base = await start();
    const api = await fetch(`${base}/operator/api/repos`, {
      headers: bearer(TOKENS.VERDICT_OPERATOR_READ_TOKEN),
    });
    expect(api.status).toBe(200);
    const hook = await fetch(`${base}/api/github/webhooks`, { method: 'POST', body: '{}' });
    const body = (await hook.json()) as { error?: string };
    expect(body.error).not.toBe('operator_auth_required');
    expect(hook.status).not.toBe(200);
  });
});

describe('views and assets', () => {
  test('the views serve index.html with the bearer dashboard token', async () => {
    const base = await start();
    for (const view of [
      'pull-requests',
      'pull-requests/acme/widgets/42',
      'analytics',
      'settings',
      'memory',
    ]) {
      const res = await fetch(`${base}/operator/${view}`, { headers: bearer() });
      expect([view, res.status, res.headers.get('content-type')]).toEqual([
        view,
        200,
        'text/html; charset=utf-8',
      ]);
      expect(await res.text()).toBe(INDEX);
    }
    expect((await fetch(`${base}/operator/pull-requests/acme/widgets`, { headers: bearer() })).status).toBe(
      404,
    );
  });

  test('/operator/login and the assets are public; assets have their content types and a long cache', async () => {
    const base = await start();
    const login = await fetch(`${base}/operator/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toBe(INDEX);
    const cases: Array<[string, string]> = [
      ['index-abc123.js', 'text/javascript; charset=utf-8'],
      ['index-abc123.css', 'text/css; charset=utf-8'],
      ['font.woff2', 'font/woff2'],
    ];
    for (const [file, type] of cases) {
      const res = await fetch(`${base}/operator/assets/${file}`);
      expect([file, res.status, res.headers.get('content-type')]).toEqual([file, 200, type]);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      await res.arrayBuffer();
    }
    expect((await fetch(`${base}/operator/assets/missing.js`)).status).toBe(404);
  });

  test('the icon: /operator/favicon.svg and the /favicon.ico browsers ask for on their own, no sign-in needed', async () => {
    const base = await start();
    for (const path of ['/favicon.ico', '/operator/favicon.svg']) {
      const res = await fetch(`${base}${path}`);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, 'image/svg+xml']);
      expect(await res.text()).toBe(FAVICON);
    }
    expect((await fetch(`${base}/favicon.ico`, { method: 'POST' })).status).toBe(405);
    const unbuilt = await start({}, { uiDist: join(root, 'not-built') });
    expect((await fetch(`${unbuilt}/favicon.ico`)).status).toBe(404);
  });

  test('path traversal out of assets/ is refused', async () => {
    const base = await start();
    for (const path of [
      '/operator/assets/..%2findex.html',
      '/operator/assets/..%2f..%2fsecret.txt',
      '/operator/assets/%2e%2e/%2e%2e/secret.txt',
      '/operator/assets/..%5c..%5csecret.txt',
      '/operator/assets/../../secret.txt',
      '/operator/assets/%00.js',
    ]) {
      const res = await rawGet(base, path);
      expect([path, res.statusCode]).toEqual([path, 404]);
    }
  });

  test('web/dist missing: the views answer 503 saying to run npm run build:web', async () => {
    const base = await start({}, { uiDist: join(root, 'not-built') });
    const json = await fetch(`${base}/operator/pull-requests`, { headers: bearer() });
    expect(json.status).toBe(503);
    expect(await json.json()).toMatchObject({ ok: false, error: 'dashboard_not_built' });
    const page = await fetch(`${base}/operator/login`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('npm run build:web');
  });
});

describe('401 operator_auth_required (fail closed)', () => {
  test('no token, a wrong token, and no token configured', async () => {
    const base = await start();
    await expectAuthRequired(await fetch(`${base}/operator/pull-requests`));
    await expectAuthRequired(await fetch(`${base}/operator/analytics`, { headers: bearer('wrong') }));
    await expectAuthRequired(await fetch(`${base}/api/settings`));
    await expectAuthRequired(await fetch(`${base}/api/settings`, { headers: bearer('wrong') }));
    await expectAuthRequired(await fetch(`${base}/operator/auth/session`));
    // The operator API's own tokens do not open the dashboard.
    await expectAuthRequired(
      await fetch(`${base}/api/settings`, { headers: bearer(TOKENS.VERDICT_OPERATOR_READ_TOKEN) }),
    );

    const closed = await start({ VERDICT_OPERATOR_UI_TOKEN: '' });
    await expectAuthRequired(await fetch(`${closed}/operator/settings`, { headers: bearer('') }));
    await expectAuthRequired(await fetch(`${closed}/operator/settings`, { headers: bearer(UI_TOKEN) }));
    await expectAuthRequired(await postToken(closed));
  });

  test('a browser navigation without sign-in gets the SPA with 401, never data', async () => {
    const base = await start();
    const res = await fetch(`${base}/operator/settings`, { headers: { accept: 'text/html,*/*' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe(INDEX);
    await expectAuthRequired(await fetch(`${base}/api/settings`, { headers: { accept: 'text/html' } }));
  });

  test('an expired session is refused and deleted', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const base = await start({ VERDICT_UI_SESSION_TTL_HOURS: '12' }, { clock });
    const session = await tokenSession(base);
    const live = await fetch(`${base}/operator/auth/session`, { headers: { cookie: session } });
    expect(await live.json()).toEqual({
      ok: true,
      login: 'operator-ui-token',
      via: 'token',
      expiresAt: new Date(Date.UTC(2026, 0, 1, 12)).toISOString(),
    });
    clock.advance(12 * 3_600_000);
    await expectAuthRequired(await fetch(`${base}/operator/auth/session`, { headers: { cookie: session } }));
    await expectAuthRequired(await fetch(`${base}/api/settings`, { headers: { cookie: session } }));
    const rows = await running[0]!.verdict.store.db.knex('ui_sessions').count({ n: '*' });
    expect(Number(rows[0]!.n)).toBe(0);
  });
});

describe('token sessions, cookies and logout', () => {
  test('the cookie is HttpOnly, SameSite=Lax, Path=/, Secure only behind HTTPS; stored hashed', async () => {
    const base = await start();
    const plain = await postToken(base);
    const cookie = setCookie(plain, 'verdict_session')!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    const value = cookie.split(';')[0]!.split('=')[1]!;
    expect(Buffer.from(value, 'base64url')).toHaveLength(32);
    const ids = await running[0]!.verdict.store.db.knex('ui_sessions').select('id');
    expect(ids.map((r: { id: string }) => r.id)).not.toContain(value);
    expect(ids[0].id).toMatch(/^[0-9a-f]{64}$/);

    const https = await postToken(base, UI_TOKEN, {
      'x-forwarded-proto': 'https',
      origin: base.replace('http:', 'https:'),
    });
    expect(setCookie(https, 'verdict_session')).toMatch(/; Secure/);

    const publicHttps = await start({ VERDICT_PUBLIC_URL: 'https://verdict.example.com' });
    const viaPublic = await postToken(publicHttps, UI_TOKEN, { origin: 'https://verdict.example.com' });
    expect(setCookie(viaPublic, 'verdict_session')).toMatch(/; Secure/);
  });

  test('a wrong token makes no session; a session opens the views; logout deletes it', async () => {
    const base = await start();
    await expectAuthRequired(await postToken(base, 'wrong'));
    const session = await tokenSession(base);
    expect((await fetch(`${base}/operator/memory`, { headers: { cookie: session } })).status).toBe(200);
    const out = await fetch(`${base}/operator/auth/logout`, {
      method: 'POST',
      headers: { cookie: session, origin: base },
    });
    expect(out.status).toBe(200);
    expect(setCookie(out, 'verdict_session')).toMatch(/Max-Age=0/);
    await expectAuthRequired(await fetch(`${base}/operator/auth/session`, { headers: { cookie: session } }));
    await expectAuthRequired(await fetch(`${base}/operator/memory`, { headers: { cookie: session } }));
  });
});

/** A fake GitHub: the OAuth token exchange, /user and /user/orgs. */
async function fakeGithub(): Promise<{ host: string; requests: string[] }> {
  const users: Record<string, { login: string; orgs: string[] }> = {
    'alice-code': { login: 'Alice', orgs: [] },
    'bob-code': { login: 'bob', orgs: ['Acme'] },
    'carol-code': { login: 'carol', orgs: ['other-org'] },
  };
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && req.url === '/login/oauth/access_token') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
        if (req.headers.accept !== 'application/json') return send(406, {});
        if (body.client_id !== 'client-1' || body.client_secret !== 'client-secret-1') {
          return send(200, { error: 'incorrect_client_credentials' });
        }
        if (!users[body.code!]) return send(200, { error: 'bad_verification_code' });
        return send(200, { access_token: `tok-${body.code}`, token_type: 'bearer' });
      }
      const token = /^Bearer tok-(.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const user = token ? users[token] : undefined;
      if (!user) return send(401, { message: 'Bad credentials' });
      if (req.url === '/api/v3/user') return send(200, { login: user.login, id: 1 });
      if (req.url?.startsWith('/api/v3/user/orgs'))
        return send(
          200,
          user.orgs.map((login) => ({ login })),
        );
      return send(404, { message: 'Not Found' });
    });
  });
  return { host: await listen(server), requests };
}

async function signIn(base: string, code: string, tamper?: (state: string) => string): Promise<Response> {
  const go = await fetch(`${base}/operator/auth/github`, { redirect: 'manual' });
  expect(go.status).toBe(302);
  const location = new URL(go.headers.get('location')!);
  const state = location.searchParams.get('state')!;
  const stateCookie = setCookie(go, 'verdict_oauth_state')!.split(';')[0]!;
  const query = new URLSearchParams({ code, state: tamper ? tamper(state) : state });
  return fetch(`${base}/operator/auth/github/callback?${query.toString()}`, {
    redirect: 'manual',
    headers: { cookie: stateCookie },
  });
}

describe('Sign in with GitHub (a local fake GitHub)', () => {
  const oauthEnv = (host: string, extra: ProcessEnv = {}): ProcessEnv => ({
    GHE_HOST: host,
    GHE_PROTOCOL: 'http',
    GITHUB_CLIENT_ID: 'client-1',
    GITHUB_CLIENT_SECRET: 'client-secret-1',
    ...extra,
  });

  test('an allowed login signs in end to end; the session says who', async () => {
    const github = await fakeGithub();
    const base = await start(oauthEnv(github.host, { VERDICT_UI_ALLOWED_LOGINS: 'someone, alice' }));
    const go = await fetch(`${base}/operator/auth/github`, { redirect: 'manual' });
    const location = new URL(go.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(`http://${github.host}/login/oauth/authorize`);
    expect(location.searchParams.get('client_id')).toBe('client-1');
    expect(location.searchParams.get('redirect_uri')).toBe(`${base}/operator/auth/github/callback`);
    expect(location.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(setCookie(go, 'verdict_oauth_state')).toMatch(/HttpOnly; SameSite=Lax/);

    const back = await signIn(base, 'alice-code');
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe('/operator/pull-requests');
    const session = setCookie(back, 'verdict_session')!.split(';')[0]!;
    const who = await fetch(`${base}/operator/auth/session`, { headers: { cookie: session } });
    expect(await who.json()).toMatchObject({ ok: true, login: 'Alice', via: 'github' });
    expect(github.requests).toEqual(['POST /login/oauth/access_token', 'GET /api/v3/user']);
  });

  test('a state mismatch is refused before any call to GitHub', async () => {
    const github = await fakeGithub();
    const base = await start(oauthEnv(github.host, { VERDICT_UI_ALLOWED_LOGINS: 'alice' }));
    const back = await signIn(base, 'alice-code', (state) => `${state}x`);
    expect(back.headers.get('location')).toBe('/operator/login?error=state_mismatch');
    expect(setCookie(back, 'verdict_session')).toBeUndefined();
    const noCookie = await fetch(`${base}/operator/auth/github/callback?code=alice-code&state=abc`, {
      redirect: 'manual',
    });
    expect(noCookie.headers.get('location')).toBe('/operator/login?error=state_mismatch');
    expect(github.requests).toEqual([]);
  });

  test('org members are allowed; a refused org and a never-allowed login get no session', async () => {
    const github = await fakeGithub();
    const base = await start(oauthEnv(github.host, { VERDICT_UI_ALLOWED_ORGS: 'acme' }));
    const bob = await signIn(base, 'bob-code');
    expect(bob.headers.get('location')).toBe('/operator/pull-requests');
    for (const code of ['carol-code', 'alice-code']) {
      const refused = await signIn(base, code);
      expect([code, refused.headers.get('location')]).toEqual([code, '/operator/login?error=not_allowed']);
      expect(setCookie(refused, 'verdict_session')).toBeUndefined();
    }
    const rows = await running[0]!.verdict.store.db.knex('ui_sessions').select('login');
    expect(rows.map((r: { login: string }) => r.login)).toEqual(['bob']);
  });

  test('with neither list set nobody is allowed; a bad code and a missing client fail to the login page', async () => {
    const github = await fakeGithub();
    const base = await start(oauthEnv(github.host));
    expect((await signIn(base, 'alice-code')).headers.get('location')).toBe(
      '/operator/login?error=not_allowed',
    );
    expect((await signIn(base, 'nobody-code')).headers.get('location')).toBe(
      '/operator/login?error=exchange_failed',
    );
    const noClient = await start({ GHE_HOST: github.host, GHE_PROTOCOL: 'http' });
    const go = await fetch(`${noClient}/operator/auth/github`, { redirect: 'manual' });
    expect(go.headers.get('location')).toBe('/operator/login?error=github_not_configured');
  });
});

describe('the /api/* proxy', () => {
  const json = (base: string, body: unknown, extra: Record<string, string> = {}) => ({
    headers: { 'content-type': 'application/json', origin: base, ...extra },
    body: JSON.stringify(body),
  });

  test('a proxied read and a proxied settings PATCH against this server', async () => {
    const base = await start();
    const session = await tokenSession(base);
    const read = await fetch(`${base}/api/settings`, { headers: { cookie: session } });
    expect(read.status).toBe(200);
    const doc = (await read.json()) as { ok: boolean; revision: number };
    expect(doc.ok).toBe(true);
    const patch = await fetch(`${base}/api/settings`, {
      method: 'PATCH',
      ...json(base, { revision: doc.revision, settings: { autoEnableNewRepos: false } }, { cookie: session }),
    });
    expect(patch.status).toBe(200);
    expect(await patch.json()).toMatchObject({ ok: true, revision: doc.revision + 1 });
    const stale = await fetch(`${base}/api/settings`, {
      method: 'PATCH',
      ...json(base, { revision: doc.revision, settings: { autoEnableNewRepos: true } }, { cookie: session }),
    });
    expect(stale.status).toBe(409);
  });

  test('the PATCH reaches the backend with the admin token and the actor; reads use the read token', async () => {
    const seen: Array<{ method: string; url: string; auth?: string; actor?: string; body: string }> = [];
    const backend = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method!,
          url: req.url!,
          auth: req.headers.authorization,
          actor: req.headers['x-operator-actor'] as string | undefined,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    const host = await listen(backend);
    const github = await fakeGithub();
    const base = await start({
      VERDICT_UI_BACKEND_URL: `http://${host}`,
      GHE_HOST: github.host,
      GHE_PROTOCOL: 'http',
      GITHUB_CLIENT_ID: 'client-1',
      GITHUB_CLIENT_SECRET: 'client-secret-1',
      VERDICT_UI_ALLOWED_LOGINS: 'alice',
    });
    const session = setCookie(await signIn(base, 'alice-code'), 'verdict_session')!.split(';')[0]!;
    await fetch(`${base}/api/settings`, {
      method: 'PATCH',
      ...json(base, { revision: 1, settings: {} }, { cookie: session }),
    });
    await fetch(`${base}/api/snapshot?q=fix&repo=acme%2Fwidgets`, { headers: { cookie: session } });
    await fetch(`${base}/api/commands/requeue`, {
      method: 'POST',
      ...json(base, { reviewKey: 'k' }, { cookie: session, 'idempotency-key': 'cmd-1' }),
    });
    await fetch(`${base}/api/keys`, { headers: { cookie: session } });
    expect(seen.map(({ method, url, auth, actor }) => [method, url, auth, actor])).toEqual([
      ['PATCH', '/operator/api/settings', 'Bearer admin-secret', 'Alice'],
      ['GET', '/operator/api/snapshot?q=fix&repo=acme%2Fwidgets', 'Bearer read-secret', 'Alice'],
      ['POST', '/operator/api/commands/requeue', 'Bearer command-secret', 'Alice'],
      ['GET', '/operator/api/keys', 'Bearer admin-secret', 'Alice'],
    ]);
    expect(JSON.parse(seen[0]!.body)).toEqual({ revision: 1, settings: {} });
  });

  test('503 backend_not_configured without the read token; 503 admin_backend_not_configured without the admin token', async () => {
    const noRead = await start({ VERDICT_OPERATOR_READ_TOKEN: '' });
    const a = await fetch(`${noRead}/api/settings`, { headers: bearer() });
    expect(a.status).toBe(503);
    // The answer names the variable to set (the dashboard shows the message).
    expect(await a.json()).toMatchObject({
      ok: false,
      error: 'backend_not_configured',
      message: expect.stringContaining('VERDICT_OPERATOR_READ_TOKEN'),
    });

    const noAdmin = await start({ VERDICT_OPERATOR_ADMIN_TOKEN: '', VERDICT_OPERATOR_COMMAND_TOKEN: '' });
    const session = await tokenSession(noAdmin);
    for (const [method, path, variable] of [
      ['PATCH', '/api/settings', 'VERDICT_OPERATOR_ADMIN_TOKEN'],
      ['POST', '/api/commands/requeue', 'VERDICT_OPERATOR_COMMAND_TOKEN'],
      ['GET', '/api/keys', 'VERDICT_OPERATOR_ADMIN_TOKEN'],
    ] as const) {
      const res = await fetch(`${noAdmin}${path}`, {
        method,
        ...(method === 'GET' ? { headers: { cookie: session } } : json(noAdmin, {}, { cookie: session })),
      });
      const body = (await res.clone().json()) as { message: string };
      expect(body.message).toContain(variable);
      expect(await refusalOf(path, res)).toEqual([path, 503, 'admin_backend_not_configured']);
    }
    // Reads still work.
    expect((await fetch(`${noAdmin}/api/settings`, { headers: { cookie: session } })).status).toBe(200);
  });

  test('502 backend_unreachable when the backend fetch throws', async () => {
    const closed = createServer();
    const host = await new Promise<string>((resolve) =>
      closed.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(closed.address() as AddressInfo).port}`)),
    );
    await new Promise((resolve) => closed.close(resolve));
    const base = await start({ VERDICT_UI_BACKEND_URL: `http://${host}` });
    const res = await fetch(`${base}/api/settings`, { headers: bearer() });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ ok: false, error: 'backend_unreachable' });
  });

  test('403 cross_origin_mutation and 415 json_required', async () => {
    const base = await start();
    const session = await tokenSession(base);
    const evil = await fetch(`${base}/api/settings`, {
      method: 'PATCH',
      headers: { cookie: session, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ ok: false, error: 'cross_origin_mutation' });
    // A session mutation without Origin is refused; the bearer dashboard token may omit it.
    const noOrigin = await fetch(`${base}/api/commands/requeue`, {
      method: 'POST',
      headers: { cookie: session, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noOrigin.status).toBe(403);
    const script = await fetch(`${base}/api/commands/requeue`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ reviewKey: 'acme/widgets#1@abc' }),
    });
    expect(script.status).not.toBe(403);

    const text = await fetch(`${base}/api/settings`, {
      method: 'PATCH',
      headers: { cookie: session, origin: base, 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ ok: false, error: 'json_required' });
    const form = await fetch(`${base}/api/commands/requeue`, {
      method: 'POST',
      headers: { cookie: session, origin: base },
      body: new URLSearchParams({ reviewKey: 'x' }),
    });
    expect(form.status).toBe(415);
  });

  test('413 payload_too_large: a body over the largest operator route body never reaches the backend', async () => {
    let requests = 0;
    const backend = createServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    const host = await listen(backend);
    const base = await start({ VERDICT_UI_BACKEND_URL: `http://${host}` });
    const session = await tokenSession(base);
    const body = JSON.stringify({
      revision: 0,
      settings: { customInstructions: 'x'.repeat(PROXY_MAX_BODY_BYTES) },
    });
    const res = await fetch(`${base}/api/settings`, {
      method: 'PATCH',
      headers: { cookie: session, origin: base, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, error: 'payload_too_large' });
    // Just under the limit the same request is forwarded.
    const fits = await fetch(`${base}/api/settings`, {
      method: 'PATCH',
      headers: { cookie: session, origin: base, 'content-type': 'application/json' },
      body: JSON.stringify({ revision: 0, settings: {} }),
    });
    expect(fits.status).toBe(200);
    expect(requests).toBe(1);
  });

  test('404 not_found: no proxy route, or the backend has no such endpoint', async () => {
    const base = await start();
    const session = await tokenSession(base);
    for (const [method, path] of [
      ['GET', '/api/no-such-thing'],
      ['GET', '/api/traces/missing-trace'],
      ['PATCH', '/api/commands/cmd-1'],
      ['GET', '/api'],
    ] as const) {
      const res = await fetch(`${base}${path}`, {
        method,
        ...(method === 'GET' ? { headers: { cookie: session } } : json(base, {}, { cookie: session })),
      });
      expect(await refusalOf(path, res)).toEqual([path, 404, 'not_found']);
    }
  });
});
