import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { ManualClock } from '../../src/clock.js';
import { requestReview } from '../../src/review/request.js';
import { callApi, TOKENS } from '../helpers/operator.js';
import { review } from '../helpers/review-harness.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, example, postWebhook } from '../helpers/webhooks.js';

/**
 * Every command kind end to end: created through the real HTTP API, executed by the command bridge,
 * visible with its final status and result through GET. GitHub is nock'd.
 */
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const ENV = {
  ...TOKENS,
  APP_ID: '123',
  PRIVATE_KEY: privateKey,
  VERDICT_PUBLISH_MODE: 'shadow',
  VERDICT_GITHUB_RETRIES: '0',
};
const API = 'https://api.github.com';
const HEAD = 'c'.repeat(40);
const admin = TOKENS.VERDICT_OPERATOR_ADMIN_TOKEN;

let app: RunningVerdict;
beforeEach(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  app = await startVerdict(ENV);
});
afterEach(async () => {
  await app.stop();
  nock.cleanAll();
  nock.enableNetConnect();
});

const api = (method: string, path: string, token: string, body?: unknown) =>
  callApi(app.baseUrl, method, `/operator/api${path}`, token, body);
const get = (path: string) => api('GET', path, TOKENS.VERDICT_OPERATOR_READ_TOKEN);
const post = (path: string, body: unknown, token = TOKENS.VERDICT_OPERATOR_COMMAND_TOKEN) =>
  api('POST', path, token, body);

async function commandAfterBridge(id: string) {
  const pass = await app.verdict.bridge.runOnce();
  expect(pass.dryRun).toBe(false);
  const res = await get(`/commands/${encodeURIComponent(id)}`);
  expect(res.status).toBe(200);
  return res.body.command;
}

async function storedPr(number: number, installationId: number | null = 42) {
  const { store } = app.verdict;
  await store.pullRequests.upsert({
    repo: 'acme/web',
    number,
    headSha: HEAD,
    installationId,
    title: 'Cache',
  });
  return requestReview(store, {
    owner: 'acme',
    repo: 'web',
    number,
    headSha: HEAD,
    installationId,
    trigger: 'opened',
  });
}

describe('the command bridge executes what the operator API queued', () => {
  test('requeue by repo and number: a new run of the stored head with an operator variant', async () => {
    const first = await storedPr(5);
    const created = await post('/commands/requeue', { repo: 'acme/web', number: 5 });
    expect(created.status).toBe(202);
    const done = await commandAfterBridge(created.body.command.id);
    expect(done).toMatchObject({ status: 'succeeded', error: null });
    expect(done.result.reviewKey).toMatch(new RegExp(`^acme/web#5@${HEAD}:operator-\\d+$`));
    expect(done.result).toMatchObject({ outcome: 'enqueued', headSha: HEAD });
    expect(done.result.runId).not.toBe(first.run.id);
    const run = await app.verdict.store.runs.get(done.result.runId);
    expect(run).toMatchObject({ status: 'queued', trigger: 'operator_requeue', installationId: 42 });
    const job = await app.verdict.store.jobs.get(done.result.jobId);
    expect(job).toMatchObject({ queue: 'reviews', status: 'waiting' });
    expect((job!.payload as any).runId).toBe(run!.id);
    // The PR detail shows both runs.
    const detail = (await get('/pr?repo=acme/web&number=5')).body;
    expect(detail.data.runs).toHaveLength(2);
  });

  test('requeue by the exact review key with a variant; refusals end failed with a reason', async () => {
    const first = await storedPr(6);
    const byKey = await post('/commands/requeue', { reviewKey: first.run.reviewKey, variant: 'rerun-1' });
    const unknownPr = await post('/commands/requeue', { repo: 'acme/web', number: 999 });
    await storedPr(7, null);
    const noInstallation = await post('/commands/requeue', { repo: 'acme/web', number: 7 });
    const done = await commandAfterBridge(byKey.body.command.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { reviewKey: `acme/web#6@${HEAD}:rerun-1`, variant: 'rerun-1' },
    });
    expect(await commandAfterBridge(unknownPr.body.command.id)).toMatchObject({
      status: 'failed',
      error: 'no stored head for acme/web#999',
      result: { code: 'pr_not_found' },
    });
    expect(await commandAfterBridge(noInstallation.body.command.id)).toMatchObject({
      status: 'failed',
      error: 'cannot requeue acme/web#7: the installation id is missing',
      result: { code: 'installation_missing' },
    });
  });

  test('retry-publish: refused for a run that is not analysed, published (shadow) for an analysed one', async () => {
    const { run } = await storedPr(8);
    const early = await post('/commands/retry-publish', { reviewKey: run.reviewKey });
    expect(await commandAfterBridge(early.body.command.id)).toMatchObject({
      status: 'failed',
      error: 'review run is not analyzed',
      result: { code: 'not_analyzed' },
    });
    const { store } = app.verdict;
    await store.runs.recordAnalysis(
      { runId: run.id, reviewKey: run.reviewKey, repo: 'acme/web', prNumber: 8, headSha: HEAD },
      {
        analysisStatus: 'analysed',
        verdict: 'clear',
        confidence: 5,
        result: { output: review({ verdict: 'clear', confidenceScore: 5, findings: [] }) },
      },
      [],
      store.findings,
    );
    const again = await post('/commands/retry-publish', { reviewKey: run.reviewKey });
    expect(await commandAfterBridge(again.body.command.id)).toMatchObject({
      status: 'succeeded',
      // No semantic coverage was recorded for this run, so the merge status is CAUTION, not CLEAR.
      result: { runId: run.id, publishStatus: 'shadowed', mergeStatus: 'CAUTION', event: 'COMMENT' },
    });
    const ledger = await store.publications.listForPr('acme/web', 8);
    expect(ledger.some((p) => p.kind === 'review' && p.status === 'shadowed')).toBe(true);
    // An analysed run without an installation id (review-engine 7.5).
    const orphan = (await storedPr(9, null)).run;
    await store.runs.recordAnalysis(
      { runId: orphan.id, reviewKey: orphan.reviewKey, repo: 'acme/web', prNumber: 9, headSha: HEAD },
      { analysisStatus: 'analysed', verdict: 'clear', confidence: 5, result: { output: review() } },
      [],
      store.findings,
    );
    const noInstallation = await post('/commands/retry-publish', { reviewKey: orphan.reviewKey });
    expect(await commandAfterBridge(noInstallation.body.command.id)).toMatchObject({
      status: 'failed',
      error: 'cannot retry publish because the installation id is missing',
      result: { code: 'installation_missing' },
    });
    const missing = await post('/commands/retry-publish', { reviewKey: `acme/web#8@${'d'.repeat(40)}` });
    expect(await commandAfterBridge(missing.body.command.id)).toMatchObject({
      status: 'failed',
      result: { code: 'run_not_found' },
    });
  });

  test('replay-webhook: a processed delivery needs force; with force it is processed again', async () => {
    const payload = example('installation', 'created');
    const sent = await postWebhook(app.baseUrl, 'installation', payload);
    expect(sent.status).toBe(202);
    const { store } = app.verdict;
    const processed = await eventually(async () => {
      const d = await store.deliveries.get(sent.deliveryId);
      return d?.status === 'processed' ? d : null;
    });
    expect(await store.repositories.get('Codertocat/Hello-World')).toMatchObject({ installed: true });
    // Forget what the delivery did, so that its replay is visible.
    await store.db.knex('repositories').where({ full_name: 'Codertocat/Hello-World' }).del();

    const refused = await post('/commands/replay-webhook', { deliveryId: sent.deliveryId });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ ok: false, error: 'force_required' });
    expect(await store.commands.list()).toEqual([]);

    const forced = await post('/commands/replay-webhook', { deliveryId: sent.deliveryId, force: true });
    expect(forced.status).toBe(202);
    const done = await commandAfterBridge(forced.body.command.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      result: {
        deliveryId: sent.deliveryId,
        event: 'installation',
        previousStatus: 'processed',
        status: 'processed',
        outcome: 'repositories_synced',
        forced: true,
      },
    });
    expect(await store.repositories.get('Codertocat/Hello-World')).toMatchObject({
      installed: true,
      installationId: payload.installation.id,
    });
    expect((await store.deliveries.get(sent.deliveryId))!.processedAt!).toBeGreaterThanOrEqual(
      processed.processedAt!,
    );

    // A delivery that was never recorded fails in the bridge (review-engine 7.5).
    const unknown = await post('/commands/replay-webhook', { deliveryId: 'never-seen' });
    expect(unknown.status).toBe(202);
    expect(await commandAfterBridge(unknown.body.command.id)).toMatchObject({
      status: 'failed',
      error: 'webhook delivery never-seen is not recorded in this store',
      result: { code: 'delivery_not_found' },
    });
  });

  test('replay-webhook: a delivery processed after the command was queued is refused in the bridge without force', async () => {
    const sent = await postWebhook(app.baseUrl, 'installation', example('installation', 'created'));
    const { store } = app.verdict;
    await eventually(async () => (await store.deliveries.get(sent.deliveryId))?.status === 'processed');
    const id = 'replay-late';
    await store.commands.create({
      id,
      kind: 'replay-webhook',
      payload: { deliveryId: sent.deliveryId, force: false },
      deliveryId: sent.deliveryId,
      actor: 'test',
    });
    expect(await commandAfterBridge(id)).toMatchObject({
      status: 'failed',
      result: { code: 'force_required' },
    });
  });

  test('POST /scm/sync: the bridge lists the installations and their repositories and upserts them', async () => {
    const { store } = app.verdict;
    await store.repositories.upsertInstalled('acme/old', 1);
    await store.repositories.upsertInstalled('acme/web', 1);
    // An operator's choice is kept by the sync; repositories without configuration are enabled.
    await store.repositories.configure('acme/web', { enabled: false }, { actor: 'admin', reason: null });
    const github = nock(API)
      .get('/app/installations')
      .query({ per_page: '100' })
      .reply(200, [
        { id: 1, account: { login: 'acme' }, suspended_at: null },
        { id: 2, account: { login: 'octo' }, suspended_at: null },
        { id: 3, account: { login: 'paused' }, suspended_at: '2026-01-01T00:00:00Z' },
      ])
      .post('/app/installations/1/access_tokens')
      .reply(201, { token: 'ghs_one', expires_at: '2099-01-01T00:00:00Z' })
      .get('/installation/repositories')
      .query({ per_page: '100' })
      .reply(
        200,
        { total_count: 2, repositories: [{ full_name: 'acme/web' }] },
        {
          link: `<${API}/installation/repositories?per_page=100&page=2>; rel="next"`,
        },
      )
      .get('/installation/repositories')
      .query({ per_page: '100', page: '2' })
      .reply(200, { total_count: 2, repositories: [{ full_name: 'acme/api' }] })
      .post('/app/installations/2/access_tokens')
      .reply(201, { token: 'ghs_two', expires_at: '2099-01-01T00:00:00Z' })
      .get('/installation/repositories')
      .query({ per_page: '100' })
      .reply(200, { total_count: 1, repositories: [{ full_name: 'octo/tools' }] });

    const created = await post('/scm/sync', {}, admin);
    expect(created.status).toBe(202);
    expect(created.body.command).toMatchObject({ kind: 'sync-repositories', status: 'queued' });
    const done = await commandAfterBridge(created.body.command.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { installations: 3, repositories: 3, added: ['acme/api', 'octo/tools'], removed: ['acme/old'] },
    });
    expect(github.pendingMocks()).toEqual([]);
    const repos = (await get('/repos')).body;
    const installed = repos.repos
      .filter((r: any) => r.installed)
      .map((r: any) => [r.fullName, r.installationId]);
    expect(installed).toEqual([
      ['acme/api', 1],
      ['acme/web', 1],
      ['octo/tools', 2],
    ]);
    const enabled = Object.fromEntries(repos.repos.map((r: any) => [r.fullName, r.config?.enabled ?? null]));
    expect(enabled).toEqual({ 'acme/api': true, 'acme/web': false, 'octo/tools': true, 'acme/old': null });
    // The generic PATCH never moves a sync command: the bridge owns it.
    const patched = await api(
      'PATCH',
      `/commands/${created.body.command.id}`,
      TOKENS.VERDICT_OPERATOR_BRIDGE_TOKEN,
      {
        status: 'succeeded',
      },
    );
    expect(patched.status).toBe(409);
  });

  test('sync fails with a clear reason when GitHub refuses', async () => {
    nock(API).get('/app/installations').query(true).reply(401, { message: 'Bad credentials' });
    const created = await post('/scm/sync', {}, admin);
    const done = await commandAfterBridge(created.body.command.id);
    expect(done.status).toBe('failed');
    expect(done.error).toContain('Bad credentials');
    expect(done.result).toEqual({ code: 'execution_error' });
  });
});

describe('bridge authority and the scheduler in the server', () => {
  test('shadow authority plans and leaves commands queued; sync without App credentials fails', async () => {
    await app.stop();
    app = await startVerdict({ ...TOKENS, VERDICT_CRON_AUTHORITY: 'shadow' });
    const created = await post('/scm/sync', {}, admin);
    const pass = await app.verdict.bridge.runOnce();
    expect(pass).toEqual({
      authority: 'shadow',
      dryRun: true,
      planned: [expect.objectContaining({ id: created.body.command.id, kind: 'sync-repositories' })],
    });
    expect((await app.verdict.store.commands.get(created.body.command.id))!.status).toBe('queued');
    await app.stop();
    app = await startVerdict({ ...TOKENS });
    const again = await post('/scm/sync', {}, admin);
    expect(await commandAfterBridge(again.body.command.id)).toMatchObject({
      status: 'failed',
      result: { code: 'app_credentials_missing' },
    });
  });

  test('the server schedules the bridge every minute, the watchdog, pr-agent-loop and maintenance (UTC); analytics shows them', async () => {
    await app.stop();
    // The scheduler waits on the runtime's timers: on a manual clock no tick comes by itself while the
    // test runs the jobs (a real minute turning over mid-test would run the bridge a second time).
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 10, 0, 30));
    app = await startVerdict({ ...TOKENS, VERDICT_SCHEDULER: '1' }, { timers: clock });
    const { scheduler, store } = app.verdict;
    expect(scheduler.startedAt).toBe(clock.now());
    expect(scheduler.jobs).toEqual([
      { name: 'command-bridge', expression: '* * * * *' },
      { name: 'watchdog', expression: '3-59/15 * * * *' },
      { name: 'pr-agent-loop', expression: '2-59/15 * * * *' },
      { name: 'nightly-audit', expression: '30 22,23 * * *' },
      { name: 'maintenance', expression: '17 * * * *' },
    ]);
    await store.repositories.upsertInstalled('acme/web', 9);
    await store.pullRequests.upsert({ repo: 'acme/web', number: 3, headSha: HEAD, installationId: 9 });
    const created = await post('/commands/requeue', { repo: 'acme/web', number: 3 });
    const tick = await scheduler.runNow('command-bridge');
    expect(tick).toMatchObject({ status: 'ok', artifact: { authority: 'live', executed: 1, succeeded: 1 } });
    expect((await store.commands.get(created.body.command.id))!.status).toBe('succeeded');
    await scheduler.runNow('maintenance');
    // A stale artifact is what the watchdog reports.
    await store.scheduler.setArtifact('maintenance', JSON.stringify({ generatedAt: 'not a date' }));
    const watchdog = await scheduler.runNow('watchdog');
    expect(watchdog).toMatchObject({
      status: 'ok',
      artifact: {
        messages: ['maintenance artifact has an invalid generatedAt: "not a date"'],
        alert: 'disabled',
      },
    });
    const { body } = await get('/analytics');
    expect(body.analytics.scheduler.watchdog.messages).toEqual([
      'maintenance artifact has an invalid generatedAt: "not a date"',
    ]);
    expect(body.analytics.scheduler.jobs.map((j: any) => [j.name, j.lastStatus, j.runs])).toEqual([
      ['command-bridge', 'ok', 1],
      ['maintenance', 'ok', 1],
      ['watchdog', 'ok', 1],
    ]);
    // At the minute the bridge ticks by itself.
    clock.advance(30_000);
    await scheduler.idle();
    expect(await store.scheduler.get('command-bridge')).toMatchObject({
      runs: 2,
      artifact: { generatedAt: '2026-01-01T10:01:00.000Z' },
    });
  });
});

describe('Test Lab', () => {
  test('lists the saved harness records and shows one; an unknown id is 404', async () => {
    const saved = await app.verdict.store.harness.save({
      id: 'harness_1',
      name: 'baseline',
      reviewKey: `acme/web#1@${HEAD}`,
      runId: 'run_1',
      repo: 'acme/web',
      prNumber: 1,
      actor: 'cli:test',
      record: { verdict: 'clear', findings: [] },
    });
    expect((await get('/test-lab')).body).toEqual({ ok: true, runs: [{ kind: 'harness', ...saved }] });
    expect((await get('/test-lab/harness_1')).body).toEqual({ ok: true, run: { kind: 'harness', ...saved } });
    expect((await get('/test-lab/nope')).status).toBe(404);
  });
});
