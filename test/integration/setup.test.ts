import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { readAppYml } from '../../src/setup/manifest.js';
import type { ProcessEnv } from '../../src/config/index.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

/**
 * The first-run App registration (docs/setup.md) against a local fake GitHub: the root page's manifest
 * form, the callback's state check, the code exchange and the `.env` it writes.
 */

const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEfake\nline2\n-----END RSA PRIVATE KEY-----\n';

type Conversion = { status: number; body: unknown };

/** A fake GitHub serving `POST /api/v3/app-manifests/:code/conversions` (what GHE_HOST's base URL implies). */
class FakeGitHub {
  readonly calls: string[] = [];
  answers = new Map<string, Conversion>();
  private server!: Server;
  host = '';

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      this.calls.push(`${req.method} ${req.url}`);
      const match = /^\/api\/v3\/app-manifests\/([^/]+)\/conversions$/.exec(req.url ?? '');
      const answer = req.method === 'POST' && match ? this.answers.get(match[1]!) : undefined;
      const { status, body } = answer ?? { status: 404, body: { message: 'Not Found' } };
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.host = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function createdApp(id: number) {
  return {
    id,
    slug: 'verdict-test',
    name: 'Verdict <test>',
    html_url: `https://github.example/apps/verdict-test`,
    pem: PEM,
    webhook_secret: 'whsec123',
    client_id: 'Iv1.abc123',
    client_secret: 'cs0123456789abcdef',
  };
}

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The form of the root page: its action and the manifest it posts. */
async function manifestForm(base: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/`, { headers });
  const page = await res.text();
  const action = /<form action="([^"]*)" method="post">/.exec(page)?.[1];
  const manifest = /<input type="hidden" name="manifest" value="([^"]*)"\s*\/?>/.exec(page)?.[1];
  return {
    res,
    page,
    action: action === undefined ? undefined : unescape(action),
    manifest: manifest === undefined ? undefined : (JSON.parse(unescape(manifest)) as Record<string, any>),
    state: action === undefined ? '' : (new URL(unescape(action)).searchParams.get('state') ?? ''),
  };
}

describe('first run without App credentials: registering the App from app.yml', () => {
  const github = new FakeGitHub();
  let dir: string;
  let envFile: string;
  let app: RunningVerdict | null = null;

  const start = async (env: ProcessEnv = {}, opts: { now?: () => number } = {}) => {
    app = await startVerdict(
      { GHE_HOST: github.host, GHE_PROTOCOL: 'http', ...env },
      { envFile, ...(opts.now ? { clock: { now: opts.now } } : {}) },
    );
    return app;
  };

  beforeAll(() => github.start());
  afterAll(() => github.stop());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'verdict-setup-'));
    envFile = join(dir, '.env');
    github.calls.length = 0;
    github.answers.clear();
  });
  afterEach(async () => {
    await app?.stop();
    app = null;
    rmSync(dir, { recursive: true, force: true });
  });

  test("the root page offers the manifest form for the user's account, built from app.yml and this server's address", async () => {
    const { baseUrl } = await start();
    const { res, page, action, manifest, state } = await manifestForm(baseUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain(`form-action http://${github.host}`);
    expect(action).toBe(`http://${github.host}/settings/apps/new?state=${state}`);
    expect(state).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const yml = readAppYml();
    expect(manifest).toEqual({
      name: yml.name,
      url: yml.url,
      description: yml.description,
      hook_attributes: { url: `${baseUrl}/github/webhooks`, active: true },
      redirect_url: `${baseUrl}/setup/callback`,
      callback_urls: [`${baseUrl}/operator/auth/github/callback`],
      public: yml.public,
      default_permissions: yml.default_permissions,
      default_events: yml.default_events,
    });
    expect(manifest!.default_permissions).toEqual({
      pull_requests: 'write',
      checks: 'write',
      contents: 'read',
      issues: 'write',
      metadata: 'read',
    });
    // A webhook URL on this machine is one GitHub cannot reach: the page says what to set first.
    expect(page).toContain('WEBHOOK_PROXY_URL');
    // Nothing on the page comes from another host.
    expect(page).not.toMatch(/<(script|link|img)\b/);
    // A new state on every visit.
    expect((await manifestForm(baseUrl)).state).not.toBe(state);
  });

  test('with GH_ORG the form registers the App on that organisation; VERDICT_PUBLIC_URL names the URLs', async () => {
    const { baseUrl } = await start({
      GH_ORG: 'acme-inc',
      VERDICT_PUBLIC_URL: 'https://verdict.example.com/',
    });
    const { page, action, manifest, state } = await manifestForm(baseUrl);
    expect(page).not.toContain('WEBHOOK_PROXY_URL');
    expect(action).toBe(`http://${github.host}/organizations/acme-inc/settings/apps/new?state=${state}`);
    expect(manifest!.hook_attributes.url).toBe('https://verdict.example.com/github/webhooks');
    expect(manifest!.redirect_url).toBe('https://verdict.example.com/setup/callback');
    expect(manifest!.callback_urls).toEqual(['https://verdict.example.com/operator/auth/github/callback']);
  });

  test("the callback exchanges the code and writes the App's five variables into .env, keeping the other lines", async () => {
    writeFileSync(
      envFile,
      '# my settings\nOPENAI_API_KEY=sk-keep\nAPP_ID=1\nPRIVATE_KEY="-----BEGIN OLD-----\nold\n-----END OLD-----"\nVERDICT_RUNNER_PROVIDER=openai\n',
      { mode: 0o644 },
    );
    github.answers.set('code-ok', { status: 201, body: createdApp(4242) });
    const { baseUrl } = await start();
    const { state } = await manifestForm(baseUrl);
    const res = await fetch(`${baseUrl}/setup/callback?code=code-ok&state=${state}`);
    const page = await res.text();
    expect(res.status).toBe(200);
    expect(github.calls).toEqual(['POST /api/v3/app-manifests/code-ok/conversions']);
    expect(page).toContain('The GitHub App was created');
    expect(page).toContain('href="https://github.example/apps/verdict-test"');
    expect(page).toContain('Verdict &lt;test&gt;');
    expect(page).not.toContain('Verdict <test>');
    expect(page).toContain('npm start');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');

    const text = readFileSync(envFile, 'utf8');
    expect(text).toBe(
      [
        '# my settings',
        'OPENAI_API_KEY=sk-keep',
        'APP_ID=4242',
        `PRIVATE_KEY="${PEM.replace(/\n/g, '\\n')}"`,
        'VERDICT_RUNNER_PROVIDER=openai',
        'WEBHOOK_SECRET=whsec123',
        'GITHUB_CLIENT_ID=Iv1.abc123',
        'GITHUB_CLIENT_SECRET=cs0123456789abcdef',
        '',
      ].join('\n'),
    );
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    // What `npm start` reads back (process.loadEnvFile, as the e2e start test's process does).
    const env: Record<string, string> = {};
    const { parseEnv } = await import('node:util');
    Object.assign(env, (parseEnv as (s: string) => Record<string, string>)(text));
    expect(env.PRIVATE_KEY).toBe(PEM);
    expect(env.APP_ID).toBe('4242');

    // The state was used: the same callback again is refused and writes nothing.
    github.answers.set('code-ok', { status: 201, body: createdApp(9999) });
    const again = await fetch(`${baseUrl}/setup/callback?code=code-ok&state=${state}`);
    expect(again.status).toBe(400);
    expect(readFileSync(envFile, 'utf8')).toBe(text);
    expect(github.calls).toHaveLength(1);
    // Until the restart the root page says so instead of offering a second registration.
    const root = await (await fetch(`${baseUrl}/`)).text();
    expect(root).toContain('The GitHub App was created');
    expect(root).not.toContain('<form');
  });

  test('a wrong or expired state is refused with 400 and nothing is written or asked of GitHub', async () => {
    let now = 1_000_000;
    github.answers.set('code-ok', { status: 201, body: createdApp(1) });
    const { baseUrl } = await start({}, { now: () => now });
    const { state } = await manifestForm(baseUrl);
    for (const query of [
      'code=code-ok&state=not-the-state',
      'code=code-ok',
      `code=code-ok&state=${state}x`,
    ]) {
      const res = await fetch(`${baseUrl}/setup/callback?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(await res.text()).toContain('Nothing was written');
    }
    now += 60 * 60 * 1000;
    const expired = await fetch(`${baseUrl}/setup/callback?code=code-ok&state=${state}`);
    expect(expired.status).toBe(400);
    expect(existsSync(envFile)).toBe(false);
    expect(github.calls).toEqual([]);
  });

  test("a failed conversion shows GitHub's error and writes nothing", async () => {
    writeFileSync(envFile, 'KEEP=1\n');
    github.answers.set('code-bad', { status: 404, body: { message: 'Not Found <gone>' } });
    const { baseUrl } = await start();
    const { state } = await manifestForm(baseUrl);
    const res = await fetch(`${baseUrl}/setup/callback?code=code-bad&state=${state}`);
    const page = await res.text();
    expect(res.status).toBe(502);
    expect(page).toContain('HTTP 404');
    expect(page).toContain('Not Found &lt;gone&gt;');
    expect(page).toContain('Nothing was written');
    expect(readFileSync(envFile, 'utf8')).toBe('KEEP=1\n');

    // An answer without the credentials is a failure too.
    github.answers.set('code-odd', {
      status: 201,
      body: { id: 5, html_url: 'https://github.example/apps/x' },
    });
    const second = await manifestForm(baseUrl);
    const odd = await fetch(`${baseUrl}/setup/callback?code=code-odd&state=${second.state}`);
    expect(odd.status).toBe(502);
    expect(await odd.text()).toContain('pem');
    expect(readFileSync(envFile, 'utf8')).toBe('KEEP=1\n');
  });

  test('without VERDICT_PUBLIC_URL, a Host that does not name this machine gets no form (DNS rebinding)', async () => {
    const { baseUrl } = await start();
    const port = new URL(baseUrl).port;
    const get = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${baseUrl}/`, { headers: { host } }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const evil = await get(`evil.example:${port}`);
    expect(evil.status).toBe(400);
    expect(evil.body).not.toContain('<form');
    const local = await get(`localhost:${port}`);
    expect(local.status).toBe(200);
    expect(local.body).toContain(`http://localhost:${port}/setup/callback`);
  });

  test('a client that is not on this machine (through a proxy) is refused unless VERDICT_SETUP_ALLOW_REMOTE=1', async () => {
    const { baseUrl } = await start();
    const proxied = { 'x-forwarded-for': '203.0.113.7' };
    const root = await manifestForm(baseUrl, proxied);
    expect(root.res.status).toBe(403);
    expect(root.page).toContain('VERDICT_SETUP_ALLOW_REMOTE=1');
    expect(root.action).toBeUndefined();
    const callback = await fetch(`${baseUrl}/setup/callback?code=x&state=y`, { headers: proxied });
    expect(callback.status).toBe(403);
    await app!.stop();
    app = null;

    const allowed = await start({ VERDICT_SETUP_ALLOW_REMOTE: '1' });
    const open = await manifestForm(allowed.baseUrl, proxied);
    expect(open.res.status).toBe(200);
    expect(open.action).toContain('/settings/apps/new?state=');
  });

  test('with App credentials the root page is not served and the setup routes are 404', async () => {
    const { baseUrl } = await start({ APP_ID: '123', PRIVATE_KEY: PEM });
    for (const path of ['/', '/setup/callback?code=a&state=b']) {
      const res = await fetch(`${baseUrl}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
      expect(((await res.json()) as { error: string }).error).toBe('not_found');
    }
  });
});
