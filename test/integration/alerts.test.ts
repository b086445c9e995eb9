import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { raiseAlert, type AlertDeps } from '../../src/alerts/raise.js';
import { loadConfig } from '../../src/config/index.js';
import { handleInstallation } from '../../src/handlers/installation.js';
import { runCatchUp, type CatchUpGitHub } from '../../src/scheduler/catch-up.js';
import { callApi, TOKENS } from '../helpers/operator.js';
import { openTestStore, type TestStore } from '../helpers/store.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { example } from '../helpers/webhooks.js';

const silent = pino({ level: 'silent' });

/** A local HTTP server recording each JSON body; answers with `reply` (status, body). */
async function receiver(reply: (path: string) => [number, unknown]) {
  const seen: Array<{ path: string; body: any }> = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body: JSON.parse(raw) });
      const [status, body] = reply(req.url ?? '');
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('alerts: delivery', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(() => t.cleanup());

  test('every alert to the alert URL; Telegram for a repository that asks; once, unless a delivery failed', async () => {
    let telegramStatus = 500;
    const sink = await receiver((path) =>
      path.startsWith('/bot')
        ? telegramStatus === 200
          ? [200, { ok: true, result: { message_id: 7, chat: { id: -100123 }, date: 1, text: 'x' } }]
          : [500, { ok: false, error_code: 500, description: 'Internal Server Error' }]
        : [204, {}],
    );
    try {
      await t.store.repositories.upsertInstalled('acme/api', 7, { actor: 't', reason: 'installed' });
      await t.store.repositories.configure(
        'acme/api',
        { alerts: { telegram: true, target: '-100123' } },
        { actor: 'op', reason: null },
      );
      const deps: AlertDeps = {
        store: t.store,
        log: silent,
        config: { alertUrl: `${sink.url}/hook`, telegramBotToken: 'bot-token', telegramApiUrl: sink.url },
      };
      const input = {
        kind: 'reviews_failing',
        repo: 'acme/api',
        severity: 'warning' as const,
        message: 'Reviews fail',
      };
      await raiseAlert(deps, input);
      expect(sink.seen.map((s) => s.path)).toEqual(['/hook', '/botbot-token/sendMessage']);
      expect(sink.seen[0]!.body).toMatchObject({
        source: 'verdict alerts',
        alert: { kind: 'reviews_failing', count: 1 },
      });
      expect(sink.seen[1]!.body).toEqual({
        chat_id: '-100123',
        text: 'Verdict warning: Reviews fail\nreviews_failing · acme/api',
      });
      // Telegram refused: the alert stays pending and the next occurrence delivers again.
      telegramStatus = 200;
      await raiseAlert(deps, input);
      expect(sink.seen).toHaveLength(4);
      expect(sink.seen[3]!.body.text).toContain('seen 2 times');
      // Delivered: a third occurrence only counts.
      await raiseAlert(deps, input);
      expect(sink.seen).toHaveLength(4);
      expect((await t.store.alerts.list())[0]).toMatchObject({ count: 3 });
      // A repository that does not ask for Telegram: the alert URL only.
      await raiseAlert(deps, { ...input, repo: 'acme/web' });
      expect(sink.seen.map((s) => s.path).slice(4)).toEqual(['/hook']);
    } finally {
      await sink.close();
    }
  });

  test('installation removed or suspended, a repository removed: alerts raised by the handler', async () => {
    const deps = {
      store: t.store,
      log: silent,
      config: loadConfig({}),
      replies: null as never,
    };
    const deleted = example('installation', 'deleted');
    await t.store.repositories.upsertInstalled(deleted.repositories[0].full_name, deleted.installation.id);
    expect(await handleInstallation(deps, 'installation', deleted)).toBe('installation_removed');
    const removed = example('installation_repositories', 'removed');
    await handleInstallation(deps, 'installation_repositories', removed);
    const alerts = await t.store.alerts.list();
    expect(alerts.map((a) => [a.kind, a.repo, a.severity]).sort()).toEqual(
      [
        ['installation_removed', null, 'critical'],
        ...removed.repositories_removed.map((r: any) => ['repository_access_lost', r.full_name, 'warning']),
      ].sort(),
    );
    expect(alerts.find((a) => a.kind === 'installation_removed')!.message).toContain(
      deleted.installation.account.login,
    );
  });

  test('pr-agent-loop raises webhook_deliveries_failed and redelivery_failed', async () => {
    const now = t.clock.now();
    const github: CatchUpGitHub = {
      deliveries: async () => [
        {
          id: 1,
          guid: 'g1',
          deliveredAt: now - 1000,
          statusCode: 502,
          event: 'pull_request',
          action: 'opened',
        },
        {
          id: 2,
          guid: 'g2',
          deliveredAt: now - 2000,
          statusCode: 502,
          event: 'pull_request',
          action: 'opened',
        },
      ],
      redeliver: async (id) => {
        if (id === 2) throw new Error('GitHub 422 Validation Failed');
      },
      openPullRequests: async () => [],
    };
    await runCatchUp({
      store: t.store,
      github,
      clock: t.clock,
      log: silent,
      alerts: {
        store: t.store,
        log: silent,
        config: { alertUrl: null, telegramBotToken: null, telegramApiUrl: '' },
      },
    });
    const alerts = Object.fromEntries((await t.store.alerts.list()).map((a) => [a.kind, a]));
    expect(alerts.webhook_deliveries_failed).toMatchObject({
      severity: 'warning',
      message: '2 webhook deliveries of the last 72 hours never reached Verdict; 1 were redelivered',
    });
    expect(alerts.redelivery_failed).toMatchObject({
      severity: 'critical',
      message:
        'pr-agent-loop could not recover missed webhooks: redelivery of g2 (pull_request) failed: GitHub 422 Validation Failed',
    });
  });
});

describe('alerts: GET /scm and DELETE /scm/alerts/:id', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict(TOKENS);
  });
  afterAll(() => app.stop());

  test('listed with the repositories; dismissed at the current revision (409 stale, 404 unknown), audited', async () => {
    const { store } = app.verdict;
    const { alert } = await store.alerts.raise({
      kind: 'dead_letters',
      repo: null,
      severity: 'critical',
      message: '3 jobs are dead-lettered',
    });
    await store.alerts.raise({
      kind: 'dead_letters',
      repo: null,
      severity: 'critical',
      message: '4 jobs are dead-lettered',
    });
    const view = await callApi(app.baseUrl, 'GET', '/operator/api/scm', 'read-secret');
    expect(view.status).toBe(200);
    expect(view.body.alerts).toEqual([
      expect.objectContaining({
        id: alert.id,
        kind: 'dead_letters',
        count: 2,
        revision: 2,
        dismissedAt: null,
      }),
    ]);
    const analytics = await callApi(app.baseUrl, 'GET', '/operator/api/analytics', 'read-secret');
    expect(analytics.body.analytics.alerts).toEqual({ open: { info: 0, warning: 0, critical: 1 } });
    const path = `/operator/api/scm/alerts/${alert.id}`;
    expect((await callApi(app.baseUrl, 'DELETE', path, 'read-secret', { revision: 2 })).status).toBe(401);
    const stale = await callApi(app.baseUrl, 'DELETE', path, 'admin-secret', { revision: 1 });
    expect(stale).toMatchObject({
      status: 409,
      body: { ok: false, error: 'revision_conflict', revision: 2 },
    });
    const missing = await callApi(app.baseUrl, 'DELETE', '/operator/api/scm/alerts/alert_x', 'admin-secret', {
      revision: 1,
    });
    expect(missing).toMatchObject({ status: 404, body: { error: 'not_found' } });
    const done = await callApi(app.baseUrl, 'DELETE', path, 'admin-secret', { revision: 2 });
    expect(done).toMatchObject({
      status: 200,
      body: { ok: true, alert: { id: alert.id, revision: 3, dismissedAt: expect.any(String) } },
    });
    const after = await callApi(app.baseUrl, 'GET', '/operator/api/scm', 'read-secret');
    expect(after.body.alerts).toEqual([
      expect.objectContaining({ id: alert.id, dismissedAt: expect.any(String) }),
    ]);
    const audit = await callApi(app.baseUrl, 'GET', '/operator/api/settings/audit', 'read-secret');
    expect(JSON.stringify(audit.body)).toContain('scm.alert.dismiss');
  });
});
