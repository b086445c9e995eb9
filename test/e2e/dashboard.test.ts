import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { seedDashboard } from '../helpers/dashboard-seed.js';
import { TOKENS } from '../helpers/operator.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

/**
 * The operator dashboard's front end (issue 25) in Debian's Chromium: the built app (`web/dist`, made by
 * `npm run build:web`) served by the real dashboard server (src/dashboard: sessions, the /api proxy),
 * over a seeded store. The local fake GitHub answers the OAuth sign-in and, for the memory preview, the
 * GitHub App's calls (an installation token, a pull request, its files, the base tree and an instruction
 * file).
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
  const read = (path: string) => admin(path, {}, TOKENS.VERDICT_OPERATOR_READ_TOKEN);
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // The GitHub App's side, for the memory preview of acme/api#7 (installation 1, from the seed): the
    // shapes of GitHub's REST answers, with only the fields Verdict reads.
    const json = (res: ServerResponse, status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const appRoutes: Record<string, (res: ServerResponse) => void> = {
      'POST /api/v3/app/installations/1/access_tokens': (res) =>
        json(res, 201, { token: 'ghs_e2e', expires_at: '2099-01-01T00:00:00Z' }),
      'GET /api/v3/repos/acme/api/pulls/7': (res) =>
        json(res, 200, {
          number: 7,
          state: 'open',
          title: 'Cache the flux capacitor readings',
          body: 'Fixes #12; see also acme/api#3.',
          draft: false,
          user: { login: 'doc' },
          labels: [],
          head: { sha: '7'.padStart(40, '0'), ref: 'flux-cache' },
          base: { ref: 'main', sha: 'b'.repeat(40), repo: { default_branch: 'main' } },
          changed_files: 2,
        }),
      'GET /api/v3/repos/acme/api/pulls/7/files': (res) =>
        json(
          res,
          200,
          ['src/cache.ts', 'docs/flux.md'].map((filename) => ({
            sha: 'c'.repeat(40),
            filename,
            status: 'modified',
            additions: 1,
            deletions: 1,
            changes: 2,
            patch: '@@ -1 +1 @@\n-a\n+b',
          })),
        ),
      'GET /api/v3/repos/acme/api/git/trees/main': (res) =>
        json(res, 200, {
          sha: 'f'.repeat(40),
          url: '',
          truncated: false,
          tree: ['AGENTS.md', 'src/cache.ts', 'docs/flux.md'].map((path) => ({
            path,
            mode: '100644',
            type: 'blob',
            sha: 'f'.repeat(40),
            size: 9,
          })),
        }),
      // The linked issues: #12 an issue, #3 a pull request (not given to a review, so not listed).
      'GET /api/v3/repos/acme/api/issues/12': (res) =>
        json(res, 200, { id: 12, number: 12, state: 'open', title: 'Readings drift', body: 'They drift.' }),
      'GET /api/v3/repos/acme/api/issues/3': (res) =>
        json(res, 200, {
          id: 3,
          number: 3,
          state: 'open',
          title: 'A PR',
          body: '',
          pull_request: { url: 'u' },
        }),
      'GET /api/v3/repos/acme/api/contents/AGENTS.md': (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('Log every request id.');
      },
    };
    // A local fake of GitHub's OAuth: authorize redirects straight back with a code (as after the user
    // clicked "Authorize"), the code is exchanged for a token, and /user names the signed-in login.
    github = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const appRoute = appRoutes[`${req.method} ${url.pathname}`];
      if (appRoute) {
        appRoute(res);
        return;
      }
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
        // The GitHub App (on the fake GitHub above), for the memory preview.
        APP_ID: '123',
        PRIVATE_KEY: generateKeyPairSync('rsa', {
          modulusLength: 2048,
          privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
          publicKeyEncoding: { type: 'spki', format: 'pem' },
        }).privateKey,
        VERDICT_GITHUB_RETRIES: '0',
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
    // The URL changes before the filtered page arrives (the link is on the unfiltered page too): wait for
    // the table to hold the one match, then check it.
    await page.locator('tbody tr').nth(1).waitFor({ state: 'detached' });
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
    // The effective state beside the policy: this server has no executor (its environment has no PATH).
    expect(await page.getByTestId('server-validation').textContent()).toContain(
      'off on this server: no executor is available',
    );
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

  test('an open alert shows as a badge and in the Alerts panel, and is dismissed there', async () => {
    const { store } = app.verdict;
    const { alert } = await store.alerts.raise({
      kind: 'reviews_failing',
      repo: 'acme/api',
      severity: 'critical',
      message: 'The last 3 reviews of acme/api failed',
    });
    await page.goto(`${ui.url}/operator/analytics`);
    const badge = page.getByRole('link', { name: '1 open alert' });
    await badge.waitFor();
    const panel = page.locator('#alerts');
    await panel.getByText('The last 3 reviews of acme/api failed').waitFor();
    await panel.getByRole('button', { name: 'Dismiss' }).click();
    await panel.getByText('No open alert.').waitFor();
    expect((await store.alerts.get(alert.id))?.dismissedAt).toEqual(expect.any(String));
    await page.reload();
    await page.locator('#alerts').getByText('No open alert.').waitFor();
    expect(await page.getByRole('link', { name: /open alert/ }).count()).toBe(0);
  });

  test('memory: creates a context (a bad glob refused at its field), edits it through a revision conflict, disables and enables it, filters', async () => {
    const { store } = app.verdict;
    await page.getByRole('link', { name: 'Memory & Test Lab' }).click();
    await page.getByRole('heading', { name: 'Contexts' }).waitFor();
    await page.getByText(/^No context yet\./).waitFor();

    await page.getByRole('button', { name: 'New context' }).click();
    const create = page.getByRole('form', { name: 'New context' });
    await create.getByLabel('Repository').fill('acme/api');
    await create.getByLabel('Paths').fill('src/**\n\nsrc//cache.ts');
    await create.getByLabel('Title').fill('Log through the logger');
    await create.getByLabel('Body').fill('Never console.log in src/; use log.info.');
    await create.getByRole('button', { name: 'Create context' }).click();
    // The API's message lands at the field it names, quoting the glob (blank lines are not sent).
    await create
      .locator('#ctx-paths-error')
      .filter({ hasText: /^Invalid field paths\.1: .+ \(“src\/\/cache\.ts”\)$/ })
      .waitFor();
    expect((await store.memory.counts()).contexts).toBe(0);
    await create.getByLabel('Paths').fill('src/**');
    await create.getByRole('button', { name: 'Create context' }).click();
    await page.getByText('Created “Log through the logger” (revision 1).').waitFor();
    const [created] = await store.memory.listContexts({ limit: 10 });
    const id = created!.id;
    expect(created).toMatchObject({
      repo: 'acme/api',
      paths: ['src/**'],
      title: 'Log through the logger',
      body: 'Never console.log in src/; use log.info.',
      enabled: true,
      source: 'operator',
      createdBy: 'operator-ui-token',
      revision: 1,
    });
    const row = page.locator(`tr[data-context-id="${id}"]`);
    await row.getByText('by operator-ui-token').waitFor();
    await row.locator('.badge-operator').waitFor();

    // Edit it while another writer saves first: the conflict shows the newer value, and reloading it
    // drops the edit; the edit made again on the newer revision is saved.
    await row.getByRole('button', { name: 'Edit “Log through the logger”' }).click();
    const edit = page.getByRole('form', { name: /^Edit context/ });
    await edit.getByLabel('Body').fill('Use log.info with the request id.');
    const other = await admin(`memory/contexts/${id}`, {
      method: 'PATCH',
      body: JSON.stringify({ revision: 1, title: 'Log through log.info' }),
    });
    expect(other.status).toBe(200);
    await edit.getByRole('button', { name: 'Save context' }).click();
    const conflict = edit.getByRole('alert').filter({ hasText: 'Someone changed this context first' });
    await conflict.waitFor();
    await conflict.getByRole('cell', { name: 'Log through log.info' }).waitFor();
    await conflict.getByRole('cell', { name: 'Use log.info with the request id.' }).waitFor();
    await shot('memory-conflict');
    await conflict.getByRole('button', { name: 'Reload revision 2' }).click();
    expect(await edit.getByLabel('Title').inputValue()).toBe('Log through log.info');
    expect(await edit.getByLabel('Body').inputValue()).toBe('Never console.log in src/; use log.info.');
    expect((await store.memory.getContext(id))?.body).toBe('Never console.log in src/; use log.info.');
    await edit.getByLabel('Body').fill('Use log.info with the request id.');
    await edit.getByLabel('Paths').fill('src/**\nlib/*.ts');
    await edit.getByRole('button', { name: 'Save context' }).click();
    await page.getByText('Saved “Log through log.info”: revision 3.').waitFor();
    expect(await store.memory.getContext(id)).toMatchObject({
      title: 'Log through log.info',
      body: 'Use log.info with the request id.',
      paths: ['src/**', 'lib/*.ts'],
      revision: 3,
    });

    await row.getByRole('button', { name: 'Disable “Log through log.info”' }).click();
    await row.getByRole('button', { name: 'Enable “Log through log.info”' }).waitFor();
    expect(await store.memory.getContext(id)).toMatchObject({ enabled: false, revision: 4 });
    await row.getByRole('button', { name: 'Enable “Log through log.info”' }).click();
    await row.getByRole('button', { name: 'Disable “Log through log.info”' }).waitFor();
    expect(await store.memory.getContext(id)).toMatchObject({ enabled: true, revision: 5 });

    // Filters: text, and a repository the API refuses, with its message at the field.
    const filters = page.getByRole('search', { name: 'Filter contexts' });
    await filters.getByLabel('Text').fill('nothing like this');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No context matches.').waitFor();
    await filters.getByLabel('Text').fill('REQUEST ID');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await row.waitFor();
    await filters.getByLabel('Repository').fill('acme');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page
      .locator('#ctx-filter-repo-error')
      .getByText('Invalid parameter repo:', { exact: false })
      .waitFor();
    await filters.getByRole('button', { name: 'Clear' }).click();
    await row.waitFor();
  });

  test('memory: writes and replaces a knowledge document, sets a cluster to suppress and another to keep', async () => {
    const { store } = app.verdict;
    await page.getByRole('button', { name: 'New document' }).click();
    const create = page.getByRole('form', { name: 'New knowledge document' });
    await create.getByLabel('Repository').fill('acme/api');
    await create.getByLabel('Path').fill('/src');
    await create.getByLabel('Title').fill('The cache');
    await create.getByLabel('Body').fill('Entries expire after 60 s; invalidate before writing.');
    await create.getByRole('button', { name: 'Create document' }).click();
    await create.locator('#kn-path-error').getByText('Invalid field path:', { exact: false }).waitFor();
    await create.getByLabel('Path').fill('src');
    await create.getByRole('button', { name: 'Create document' }).click();
    await page.getByText('Created “The cache” (acme/api src): revision 1.').waitFor();
    const opened = page.getByRole('article', { name: 'Knowledge document acme/api src' });
    await opened.getByText('Entries expire after 60 s; invalidate before writing.').waitFor();
    expect(await store.memory.getKnowledge('acme/api', 'src')).toMatchObject({
      title: 'The cache',
      body: 'Entries expire after 60 s; invalidate before writing.',
      revision: 1,
    });

    // Replace it at the revision read.
    await opened.getByRole('button', { name: 'Replace…' }).click();
    const replace = page.getByRole('form', { name: 'Replace acme/api src' });
    expect(await replace.getByLabel('Title').inputValue()).toBe('The cache');
    await replace.getByLabel('Body').fill('Entries expire after 30 s; invalidate before writing.');
    await replace.getByRole('button', { name: 'Replace document' }).click();
    await page.getByText('Replaced “The cache” (acme/api src): revision 2.').waitFor();
    await opened.getByText('Entries expire after 30 s; invalidate before writing.').waitFor();

    // A new document where one exists is a conflict (nothing overwritten) until the operator chooses.
    await page.getByRole('button', { name: 'New document' }).click();
    await create.getByLabel('Repository').fill('acme/api');
    await create.getByLabel('Path').fill('src');
    await create.getByLabel('Body').fill('Something else.');
    await create.getByRole('button', { name: 'Create document' }).click();
    const exists = create.getByRole('alert').filter({ hasText: 'This document exists already' });
    await exists.getByText('Entries expire after 30 s', { exact: false }).waitFor();
    expect((await store.memory.getKnowledge('acme/api', 'src'))?.revision).toBe(2);
    await exists.getByRole('button', { name: 'Reload revision 2' }).click();
    await page
      .getByRole('form', { name: 'Replace acme/api src' })
      .getByRole('button', { name: 'Cancel' })
      .click();

    // Clusters with their feedback; one set to suppress, the one withheld by its feedback set to keep.
    const clusters = page.getByRole('table', { name: 'Clusters' });
    const nulls = clusters.locator('tr', { hasText: 'Null checks on lookups' });
    const naming = clusters.locator('tr', { hasText: 'Naming nits' });
    await nulls.getByText('withheld: dismissed at least twice, no thumbs-up').waitFor();
    const count = (row: typeof nulls, what: string) =>
      row.locator('dl.feedback > div', { hasText: what }).locator('dd').textContent();
    expect([
      await count(nulls, 'dismissed'),
      await count(nulls, 'up'),
      await count(nulls, 'addressed'),
    ]).toEqual(['2', '0', '1']);
    expect(await count(naming, 'up')).toBe('3');
    await naming.getByText('findings like these are posted').waitFor();
    await naming.getByLabel('Action of “Naming nits”').selectOption('suppress');
    await page.getByText('“Naming nits” is now suppress (revision 2).').waitFor();
    await naming.getByText('findings like these are withheld').waitFor();
    await nulls.getByLabel('Action of “Null checks on lookups”').selectOption('keep');
    await page.getByText('“Null checks on lookups” is now keep (revision 2).').waitFor();
    await nulls.getByText('findings like these are posted').waitFor();
    const stored = await store.memory.listClusters({ repo: 'acme/api', limit: 10 });
    expect(Object.fromEntries(stored.map((c) => [c.label, [c.action, c.revision]]))).toEqual({
      'Naming nits': ['suppress', 2],
      'Null checks on lookups': ['keep', 2],
    });

    // The clusters' repository filter: another repository has none; Clear lists them again.
    const filter = page.getByRole('search', { name: 'Filter clusters' });
    await filter.getByLabel('Repository').fill('acme/other');
    await filter.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No cluster matches.').waitFor();
    await filter.getByRole('button', { name: 'Clear' }).click();
    await naming.waitFor();
    expect(await filter.getByLabel('Repository').inputValue()).toBe('');
  });

  test('memory: previews what a review of a pull request would be given (the fake GitHub), then deletes the context', async () => {
    const { store } = app.verdict;
    const integrations = page.locator('.integrations');
    await integrations.locator('li', { hasText: 'Linked issues' }).locator('.badge-enabled').waitFor();
    const form = page.getByRole('form', { name: "Preview a review's memory" });
    await form.getByLabel('Repository').fill('acme/api');
    await form.getByLabel('Pull request number').fill('seven');
    await form.getByRole('button', { name: 'Run preview' }).click();
    await page.locator('#pv-number-error').getByText('Invalid field number:', { exact: false }).waitFor();
    await form.getByLabel('Pull request number').fill('99');
    await form.getByRole('button', { name: 'Run preview' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'Not found on GitHub.' })
      .getByText(/acme\/api#99/)
      .waitFor();

    await form.getByLabel('Pull request number').fill('7');
    await form.getByRole('button', { name: 'Run preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview of acme/api#7' });
    await preview.getByText('Cache the flux capacitor readings').waitFor();
    const [context] = await store.memory.listContexts({ limit: 10 });
    const [naming] = (await store.memory.listClusters({ repo: 'acme/api', limit: 10 })).filter(
      (c) => c.action === 'suppress',
    );
    const items = async (title: string) =>
      (await preview.locator('.preview-lists > div', { hasText: title }).locator('li').allTextContents()).map(
        (t) => t.trim(),
      );
    expect(await items('Contexts')).toEqual([`Log through log.info ${context!.id}`]);
    expect(await items('Knowledge')).toEqual(['src']);
    expect(await items('Linked issues')).toEqual(['#12']);
    expect(await items('Instruction files')).toEqual(['AGENTS.md']);
    expect(await items('Suppressed clusters')).toEqual([`Naming nits ${naming!.id}`]);
    const leftOut = preview.locator('.preview-left-out');
    await leftOut.getByText('The prompt budget left nothing out.').waitFor();
    expect((await leftOut.locator('li').allTextContents()).map((t) => t.trim())).toEqual([
      '#3: pull request',
    ]);
    await preview.scrollIntoViewIfNeeded();
    await shot('memory-preview');

    // Delete the context, after a cancelled first try.
    const row = page.locator(`tr[data-context-id="${context!.id}"]`);
    await row.getByRole('button', { name: 'Delete “Log through log.info”' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this context?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await store.memory.getContext(context!.id)).not.toBeNull();
    await row.getByRole('button', { name: 'Delete “Log through log.info”' }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('Deleted “Log through log.info”.').waitFor();
    await row.waitFor({ state: 'detached' });
    expect(await store.memory.getContext(context!.id)).toBeNull();
    const audit = (await (await read('settings/audit?q=memory.')).json()) as any;
    expect(audit.entries.map((e: any) => e.action)).toEqual(
      expect.arrayContaining(['memory.context.create', 'memory.context.update', 'memory.context.delete']),
    );
  });

  test('shows the Test Lab runs with their cases', async () => {
    await page.getByRole('button', { name: /replay corpus/ }).click();
    await page.getByText('off-by-one').waitFor();
    await page.getByText('caught bug-1').waitFor();
    await shot('memory');
  });

  test('the preview without the GitHub App explains what is missing (a second Verdict, no App credentials)', async () => {
    const bare = await startVerdict(
      { ...TOKENS, VERDICT_OPERATOR_UI_ENABLED: '1', VERDICT_OPERATOR_UI_TOKEN: UI_TOKEN },
      { uiDist: DIST },
    );
    const other = await browser.newPage();
    try {
      await other.goto(`${bare.baseUrl}/operator/memory`);
      await other.getByLabel('Dashboard token').fill(UI_TOKEN);
      await other.getByRole('button', { name: 'Sign in with token' }).click();
      await other.getByRole('heading', { name: 'Contexts' }).waitFor();
      const linked = other.locator('.integrations li', { hasText: 'Linked issues' });
      await linked.locator('.badge-disabled').waitFor();
      const form = other.getByRole('form', { name: "Preview a review's memory" });
      await form.getByLabel('Repository').fill('acme/api');
      await form.getByLabel('Pull request number').fill('7');
      await form.getByRole('button', { name: 'Run preview' }).click();
      const explained = other
        .getByRole('alert')
        .filter({ hasText: "The preview needs the GitHub App's credentials." });
      await explained.getByText('(503 app_credentials_missing)', { exact: false }).waitFor();
      await explained.getByText('APP_ID', { exact: true }).waitFor();
      await other.screenshot({ path: join(ARTIFACTS, 'memory-preview-no-app.png'), fullPage: true });
    } finally {
      await other.close();
      await bare.stop();
    }
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
    await page.goto(`${ui.url}/operator/memory`);
    await page.getByRole('table', { name: 'Clusters' }).waitFor();
    expect(
      await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
    ).toBeLessThanOrEqual(0);
    await shot('memory-phone');
  });

  test('signs out, and a 401 returns to the sign-in screen', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Dashboard token').waitFor();
    expect(foreign).toEqual([]);
  });
});
