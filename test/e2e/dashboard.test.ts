import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { seedDashboard } from '../helpers/dashboard-seed.js';
import { TOKENS } from '../helpers/operator.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

/**
 * The operator dashboard's front end (issue 25) in Debian's Chromium: the built app (`web/dist`, made by
 * `npm run build:web`) served by the real dashboard server (src/dashboard: sessions, the /api proxy),
 * over a seeded store.
 * One screenshot per view lands in `test-artifacts/`.
 */
const ROOT = process.cwd();
const DIST = join(ROOT, 'web', 'dist');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const CHROMIUM = '/usr/bin/chromium';
const UI_TOKEN = 'ui-secret';

// Skipped on a machine without Chromium or without a build, never in CI (.ci/run installs and builds both).
const ready = existsSync(CHROMIUM) && existsSync(join(DIST, 'index.html'));
const maybe = ready || process.env.CI ? describe : describe.skip;

maybe('operator dashboard in a browser', () => {
  let app: RunningVerdict;
  let ui: { url: string };
  let github: Server;
  let githubUrl: string;
  let browser: Browser;
  let page: Page;
  const foreign: string[] = [];
  let tracedKey: string;

  const admin = (path: string, init: RequestInit = {}, token = TOKENS.VERDICT_OPERATOR_ADMIN_TOKEN) =>
    fetch(`${app.baseUrl}/operator/api/${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // A local fake of GitHub's OAuth: authorize redirects straight back with a code (as after the user
    // clicked "Authorize"), the code is exchanged for a token, and /user names the signed-in login.
    github = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/login/oauth/authorize') {
        const back = new URL(
          url.searchParams.get('redirect_uri') ?? `${ui.url}/operator/auth/github/callback`,
        );
        back.searchParams.set('code', 'code-mona');
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        res.writeHead(302, { location: back.href }).end();
      } else if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'gho_mona', token_type: 'bearer', scope: '' }));
      } else if (url.pathname === '/api/v3/user') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ login: 'mona', id: 1 }));
      } else res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
    });
    await new Promise<void>((r) => github.listen(0, '127.0.0.1', r));
    githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
    app = await startVerdict(
      {
        ...TOKENS,
        VERDICT_OPERATOR_UI_ENABLED: '1',
        VERDICT_OPERATOR_UI_TOKEN: UI_TOKEN,
        GHE_HOST: new URL(githubUrl).host,
        GHE_PROTOCOL: 'http',
        GITHUB_CLIENT_ID: 'Iv1.testlab',
        GITHUB_CLIENT_SECRET: 'secret',
        VERDICT_UI_ALLOWED_LOGINS: 'mona',
      },
      { uiDist: DIST },
    );
    ({ tracedKey } = await seedDashboard(app.verdict.store));
    ui = { url: app.baseUrl };
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('request', (r) => {
      if (!r.url().startsWith(ui.url) && !r.url().startsWith('data:') && !r.url().startsWith(githubUrl))
        foreign.push(r.url());
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    github?.closeAllConnections();
    await new Promise((r) => github?.close(r));
  });

  test('signs in with the token form (a wrong token is refused)', async () => {
    await page.goto(`${ui.url}/operator/pull-requests`);
    await page.getByRole('link', { name: 'Sign in with GitHub' }).waitFor();
    expect(await page.getByRole('link', { name: 'Sign in with GitHub' }).getAttribute('href')).toBe(
      '/operator/auth/github',
    );
    await page.getByLabel('Dashboard token').fill('wrong');
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.getByText('That token was not accepted.').waitFor();
    await shot('login');
    await page.getByLabel('Dashboard token').fill(UI_TOKEN);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.getByRole('heading', { name: 'Pull requests' }).waitFor();
    await page.getByText('operator-ui-token').waitFor();
    // The page names its icon, and the icon (like the /favicon.ico a browser may ask for) is served.
    const href = await page.locator('link[rel="icon"]').getAttribute('href');
    const icons = [];
    for (const path of [href!, '/favicon.ico']) {
      const answer = await page.evaluate(
        (p) => fetch(p).then((r) => [r.status, r.headers.get('content-type')]),
        path,
      );
      icons.push([path, ...answer]);
    }
    expect(icons).toEqual([
      ['/operator/favicon.svg', 200, 'image/svg+xml'],
      ['/favicon.ico', 200, 'image/svg+xml'],
    ]);
  });

  test('signs in with GitHub through the OAuth flow (a local fake GitHub)', async () => {
    const other = await browser.newPage();
    await other.goto(`${ui.url}/operator/pull-requests`);
    await other.getByRole('link', { name: 'Sign in with GitHub' }).click();
    await other.getByRole('heading', { name: 'Pull requests' }).waitFor();
    const session = await other.evaluate(() => fetch('/operator/auth/session').then((r) => r.json()));
    expect(session).toMatchObject({ ok: true, login: 'mona', via: 'github' });
    const cookies = await other.context().cookies();
    expect(cookies.find((c) => c.name === 'verdict_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Lax',
    });
    await other.close();
  });

  test('a refused sign-in says why', async () => {
    const other = await browser.newPage();
    await other.goto(`${ui.url}/operator/login?error=not_allowed`);
    await other.getByText(/not on the list of operators/).waitFor();
    await other.close();
  });

  test('finds a pull request by search and opens its trace waterfall', async () => {
    await page.getByRole('row').nth(25).waitFor({ state: 'attached' });
    expect(await page.getByText(/Page 1 of 2/).count()).toBe(1);
    await page.getByLabel('Search').fill('flux');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/q=flux/);
    const link = page.getByRole('link', { name: /acme\/api#7 Cache the flux capacitor/ });
    await link.waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    await shot('pull-requests');
    await link.click();
    await page.waitForURL(/\/operator\/pull-requests\/acme\/api\/7$/);
    await page.getByText('Stale read after invalidation').waitFor();
    await page.getByText('src/cache.ts:12-14').waitFor();
    // The run's validation: its outcome and the failing command the pull request introduced.
    await page.getByText('FAILED bubblewrap: npm run test (exit 1)').waitFor();
    await page.getByText('npm run test · introduced by this pull request').waitFor();
    expect(await page.getByRole('link', { name: 'review 1234567' }).getAttribute('href')).toBe(
      'https://github.com/acme/api/pull/7#pullrequestreview-1234567',
    );
    await page.getByRole('button', { name: /Trace review/ }).click();
    const waterfall = page.getByRole('table', { name: 'Spans of trace trace-7' });
    await waterfall.waitFor();
    await waterfall.getByText('$0.0421').waitFor();
    await waterfall.getByText('12,000 / 900').waitFor();
    expect(await waterfall.locator('.wf-bar').count()).toBe(6);
    await waterfall.getByText('$0.0965').waitFor(); // the total of the three model spans
    await shot('pull-request');
  });

  test('requeues the run after confirmation and follows the command to its end', async () => {
    await page.getByRole('button', { name: 'Requeue…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Requeue this review?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await app.verdict.store.commands.list({ limit: 10 })).length).toBe(0);

    await page.getByRole('button', { name: 'Requeue…' }).click();
    await dialog.getByRole('button', { name: 'Requeue', exact: true }).click();
    const status = page.locator('.command-status');
    await status.getByText('queued').waitFor();
    const id = await status.getAttribute('data-command-id');
    const [command] = await app.verdict.store.commands.list({ limit: 10 });
    expect(command).toMatchObject({ id, kind: 'requeue', reviewKey: tracedKey, status: 'queued' });

    // The command bridge's part, done by hand: the page polls the command until it has finished.
    const bridge = TOKENS.VERDICT_OPERATOR_BRIDGE_TOKEN;
    for (const s of ['running', 'succeeded']) {
      const res = await admin(
        `commands/${id}`,
        { method: 'PATCH', body: JSON.stringify({ status: s }) },
        bridge,
      );
      expect(res.status).toBe(200);
    }
    await status.getByText('succeeded').waitFor({ timeout: 15_000 });
  });

  test('changes a setting, shows a validation error at its field, and resolves a revision conflict', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    const limit = page.getByLabel('File change limit');
    await limit.fill('800');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText(/Saved: revision/).waitFor();
    const saved = (await (await admin('settings', {}, TOKENS.VERDICT_OPERATOR_READ_TOKEN)).json()) as any;
    expect(saved.settings.fileChangeLimit).toBe(800);

    // The API's validation error lands next to its field.
    await limit.fill('0');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('#fileChangeLimit-error').waitFor();

    // A filter rule from the builder.
    await limit.fill('900');
    await page.getByRole('button', { name: 'Add rule' }).first().click();
    await page.locator('#filters-0-0-values').fill('release/*');

    // Another writer saves first.
    const other = await admin('settings', {
      method: 'PATCH',
      body: JSON.stringify({ revision: saved.revision, settings: { commentHeader: 'From another writer' } }),
    });
    expect(other.status).toBe(200);
    await page.getByLabel('Strictness').selectOption('high');
    await page.getByRole('button', { name: 'Save policy' }).click();
    const conflict = page.getByRole('alert').filter({ hasText: 'Someone saved the policy first' });
    await conflict.waitFor();
    await conflict.getByText('"From another writer"').waitFor();
    await shot('settings-conflict');
    await conflict.getByRole('button', { name: /Reapply my edits/ }).click();
    expect(await page.getByLabel('Comment header').inputValue()).toBe('From another writer');
    expect(await page.getByLabel('Strictness').inputValue()).toBe('high');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText(/Saved: revision/).waitFor();
    const after = (await (await admin('settings', {}, TOKENS.VERDICT_OPERATOR_READ_TOKEN)).json()) as any;
    expect(after.settings).toMatchObject({
      commentHeader: 'From another writer',
      strictness: 'high',
      fileChangeLimit: 900,
      filters: [{ conditions: [{ field: 'targetBranch', operator: 'is', values: ['release/*'] }] }],
    });
    await shot('settings');

    // Disable a repository.
    await page.getByRole('button', { name: 'Enable acme/api' }).click();
    await page.getByRole('button', { name: 'Disable acme/api' }).waitFor();
    expect((await app.verdict.store.repositories.get('acme/api'))?.config).toMatchObject({ enabled: true });
  });

  test('draws the analytics charts', async () => {
    await page.getByRole('link', { name: 'Analytics' }).click();
    const canvas = page.locator('figure[data-chart="reviews"] canvas');
    await canvas.waitFor();
    await page.locator('figure[data-chart="spend"] canvas').waitFor();
    expect(Number(await canvas.getAttribute('data-points'))).toBeGreaterThan(0);
    // Something was drawn: the canvas has pixels that are not transparent.
    const painted = await canvas.evaluate((c: any) => {
      const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
      return n;
    });
    expect(painted).toBeGreaterThan(500);
    await page.getByText('the model did not answer in 600 s').waitFor();
    // Feedback on line comments, per repository: posted, addressed, dismissed, 👍, 👎, addressed rate.
    const feedback = page.getByRole('row', { name: /^acme\/api / });
    await feedback.waitFor();
    expect(await feedback.locator('td').allTextContents()).toEqual(['4', '1', '1', '1', '1', '25%']);
    await shot('analytics');
  });

  test('shows memory and the Test Lab runs with their cases', async () => {
    await page.getByRole('link', { name: 'Memory & Test Lab' }).click();
    await page.getByText('none recorded').first().waitFor();
    await page.getByRole('button', { name: /replay corpus/ }).click();
    await page.getByText('off-by-one').waitFor();
    await page.getByText('caught bug-1').waitFor();
    await shot('memory');
  });

  test('fits a phone-width screen', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${ui.url}/operator/pull-requests`);
    await page.getByRole('link', { name: /acme\/api#7/ }).waitFor();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('pull-requests-phone');
    await page.goto(`${ui.url}/operator/pull-requests/acme/api/7`);
    await page.getByText('Stale read after invalidation').waitFor();
    expect(
      await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
    ).toBeLessThanOrEqual(0);
    await shot('pull-request-phone');
  });

  test('signs out, and a 401 returns to the sign-in screen', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Dashboard token').waitFor();
    expect(foreign).toEqual([]);
  });
});
