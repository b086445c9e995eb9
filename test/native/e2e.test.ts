import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { createLogger } from '../../src/logger.js';
import { nativeConfig } from '../../src/native/container/env.js';
import { internalClient, type InternalClient } from '../../src/native/container/internal.js';
import { ContainerService } from '../../src/native/container/service.js';
import type { FakeGitHub } from '../helpers/fake-github.js';
import { relay } from '../../scripts/native-relay.js';
import { SandboxService } from '../../src/native/sandbox/service.js';
import { configuredExecutors } from '../../src/validation/executors.js';
import { githubTarball } from '../helpers/tarball.js';
import { example, prComment } from '../helpers/webhooks.js';
import { FakeModel, HEAD, REPO, containerTestEnv, fakeGitHub } from './container/fakes.js';
import {
  DEV_TOKEN,
  internalPost as postInternal,
  leaseFor as holdLease,
  runCommand,
  startIngress,
  until,
  type Harness,
} from './harness.js';

const PASSING = path.resolve('fixtures/validation/passing');

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

function opened(sha: string): any {
  const p = example('pull_request', 'opened');
  p.installation = { id: 77 };
  p.repository.full_name = REPO;
  p.repository.name = 'web';
  p.repository.owner.login = 'acme';
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = sha;
  return p;
}

/**
 * The native runtime end to end, all of it local: the edge worker in workerd (Miniflare: ingress, queue,
 * consumer, lease Durable Object, D1 with the state tables), the review container as a service in this
 * process reaching `state.internal` and `broker.internal` through the worker's dev route, a fake GitHub
 * and a fake OpenAI-compatible model.
 */
describe('native runtime: webhook to published review', () => {
  let h: Harness;
  let github: FakeGitHub;
  let model: FakeModel;
  let container: ContainerService;
  let sandbox: SandboxService;
  let workerUrl = '';

  beforeAll(async () => {
    model = new FakeModel();
    const modelUrl = await model.listen();
    github = fakeGitHub();
    await github.listen();
    const env = { ...containerTestEnv(modelUrl, github), VERDICT_PUBLISH_MODE: 'live', LOG_LEVEL: 'warn' };
    // The worker's origin is known once Miniflare is up; the container is started first (its URL is a binding).
    const internal: InternalClient = (...args) => internalClient(workerUrl, DEV_TOKEN)(...args);
    container = new ContainerService({
      config: nativeConfig(env),
      log: createLogger('warn', undefined, 'json'),
      internal,
      publishMode: 'live',
      maxAttempts: 8,
      sandboxEnabled: true,
    });
    const port = await container.listen(0, '127.0.0.1');
    // Validation: the head's archive on the fake GitHub, the sandbox service (bubblewrap) behind `SANDBOX`.
    github.tarballs.set(HEAD, await githubTarball(PASSING, `acme-web-${HEAD.slice(0, 7)}`));
    sandbox = new SandboxService({
      executors: configuredExecutors(nativeConfig(env).validation),
      log: createLogger('warn', undefined, 'json'),
    });
    const sandboxUrl = `http://127.0.0.1:${await sandbox.listen(0, '127.0.0.1')}`;
    h = await startIngress({
      sandbox: async (request) =>
        fetch(`${sandboxUrl}/run`, { method: 'POST', body: await request.text() }) as unknown as Response,
      consumer: true,
      github: relay,
      bindings: {
        APP_ID: '4242',
        PRIVATE_KEY: privateKey,
        GITHUB_API_URL: `http://${github.host}/api/v3`,
        VERDICT_CONTAINER_URL: `http://127.0.0.1:${port}`,
        VERDICT_PUBLISH_MODE: 'live',
        VERDICT_INTERNAL_DEV_TOKEN: DEV_TOKEN,
        VERDICT_BRIDGE_AUTHORITY: 'live',
      },
    });
    workerUrl = (await h.mf.ready).href;
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await container?.stop();
    await sandbox?.stop();
    await model?.close();
    await github?.close();
  });

  async function outcome(id: string): Promise<any> {
    const db = await h.d1();
    return until(
      () => db.prepare('SELECT * FROM native_deliveries WHERE id = ?').bind(id).first(),
      (row: any) => row?.dispatch_outcome != null,
      1200,
    );
  }

  it('publishes the review through the container and keeps its state in D1; a redelivery is skipped_completed', async () => {
    const id = crypto.randomUUID();
    const posted = await h.post('pull_request', opened(HEAD), { id });
    expect(posted).toMatchObject({ status: 202, body: { accepted: true } });
    const row = await outcome(id);
    expect(row).toMatchObject({ dispatch_outcome: 'dispatched', dispatch_reason: null });

    // On GitHub: one review at the head with the model's finding, and a completed check run.
    const reviews = github.submittedReviews();
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.commit_id).toBe(HEAD);
    expect(JSON.stringify(reviews[0])).toContain('Eviction races with writes');
    expect([...github.checkRuns.values()].map((c) => c.status)).toEqual(['completed']);
    // Validated in the sandbox: the head's archive went container -> sandbox.internal -> sandbox (bubblewrap).
    expect(github.count('GET', new RegExp(`/tarball/${HEAD}$`))).toBe(1);
    expect(reviews[0]!.body).toMatch(/PASSED bubblewrap: npm (run )?test/);
    // The container's token came from broker.internal: GitHub minted it for installation 77 (App JWT).
    expect(github.count('POST', /^\/app\/installations\/77\/access_tokens$/)).toBeGreaterThanOrEqual(1);

    // The review's state was flushed into the worker's D1: the run under the worker's id, its findings.
    const db = await h.d1();
    const native = await db.prepare('SELECT id, status FROM native_runs').all();
    expect(native.results).toEqual([expect.objectContaining({ status: 'completed' })]);
    const runId = native.results[0].id;
    const run = await db
      .prepare('SELECT id, status, repo, head_sha FROM runs WHERE id = ?')
      .bind(runId)
      .first();
    expect(run).toEqual({ id: runId, status: 'completed', repo: REPO, head_sha: HEAD });
    const findings = await db.prepare('SELECT title FROM findings WHERE run_id = ?').bind(runId).all();
    expect(findings.results).toEqual([{ title: 'Eviction races with writes' }]);
    // Installed means reviewed: the repository the delivery named is stored installed and enabled.
    const repo = await db
      .prepare('SELECT installed, installation_id, config FROM repositories WHERE full_name = ?')
      .bind(REPO)
      .first();
    expect(repo).toMatchObject({ installed: 1, installation_id: 77 });
    expect(JSON.parse(repo.config)).toMatchObject({ enabled: true });

    // Another delivery of the same head: the lease says completed, nothing is published again.
    const again = crypto.randomUUID();
    await h.post('pull_request', opened(HEAD), { id: again });
    expect((await outcome(again)).dispatch_outcome).toBe('skipped_completed');
    expect(github.submittedReviews()).toHaveLength(1);
    expect(model.reviewCalls).toBe(1);
  }, 60_000);

  it('a review command on the same head reviews again from the state in D1 and does not repeat the line comment', async () => {
    const comment = prComment('@verdict review', { commentId: 9101, number: 7 });
    comment.repository.full_name = REPO;
    const id = crypto.randomUUID();
    expect((await h.post('issue_comment', comment, { id })).status).toBe(202);
    expect((await outcome(id)).dispatch_outcome).toBe('dispatched');
    expect(model.reviewCalls).toBe(2);
    const db = await h.d1();
    const runs = await db.prepare('SELECT review_key, status FROM runs ORDER BY created_at').all();
    expect(runs.results).toEqual([
      { review_key: `${REPO}#7@${HEAD}`, status: 'completed' },
      { review_key: `${REPO}#7@${HEAD}:comment-9101`, status: 'completed' },
    ]);
    // The first review's thread came back in the bundle: the same finding is not posted as a new comment.
    const inline = github.comments.filter((c) => JSON.stringify(c).includes('Eviction races with writes'));
    expect(inline).toHaveLength(1);
  }, 60_000);

  const bridgeCommand = (kind: string, payload: unknown) => runCommand(h, kind, payload);

  it('retry-publish (3.5): the container publishes the stored result again; a run not analysed is refused', async () => {
    const db = await h.d1();
    const key = `${REPO}#7@${HEAD}`;
    // The publication was lost: GitHub no longer shows the review, the store says it failed.
    github.reviews.clear();
    const { id: runId } = await db.prepare('SELECT id FROM runs WHERE review_key = ?').bind(key).first();
    await db.prepare("UPDATE runs SET publish_status = 'failed' WHERE id = ?").bind(runId).run();
    await db.prepare('DELETE FROM publications WHERE run_id = ?').bind(runId).run();
    const calls = model.reviewCalls;

    const done = await bridgeCommand('retry-publish', { reviewKey: key });
    expect(done.status).toBe('succeeded');
    expect(JSON.parse(done.result)).toEqual({ runId, reviewKey: key, publishStatus: 'published' });
    const reviews = github.submittedReviews();
    expect(reviews).toHaveLength(1);
    expect(JSON.stringify(reviews[0])).toContain('Eviction races with writes');
    expect(model.reviewCalls).toBe(calls); // published from the stored result: no model call
    const run = await db.prepare('SELECT publish_status FROM runs WHERE id = ?').bind(runId).first();
    expect(run.publish_status).toBe('published');

    await db.prepare("UPDATE runs SET analysis_status = 'pending' WHERE id = ?").bind(runId).run();
    const refused = await bridgeCommand('retry-publish', { reviewKey: key });
    expect(refused).toMatchObject({ status: 'failed', error: 'not_analyzed: review run is not analyzed' });
    await db.prepare("UPDATE runs SET analysis_status = 'analysed' WHERE id = ?").bind(runId).run();
    expect(await bridgeCommand('retry-publish', { reviewKey: 'acme/web#7@nope' })).toMatchObject({
      status: 'failed',
      error: 'run_not_found: review run acme/web#7@nope does not exist',
    });
  }, 60_000);

  const read = async (res: { json(): Promise<unknown> }): Promise<any> => res.json();
  const internalPost = (host: string, path: string, body: unknown, token: string | null = DEV_TOKEN) =>
    postInternal(h, host, path, body, token);
  const leaseFor = (runId: string, token: string) => holdLease(h, runId, token, REPO);

  it('serves the internal hosts only with the dev token; without it they are the public 404', async () => {
    const res = await internalPost('state.internal', '/bundle', { runId: 'x', leaseToken: 'y' }, null);
    expect(res.status).toBe(404);
    expect(await read(res)).toEqual({ error: 'not_found' });
    const wrong = await internalPost('state.internal', '/bundle', { runId: 'x', leaseToken: 'y' }, 'nope');
    expect(wrong.status).toBe(404);
  });

  it('refuses an unknown run (404 run_not_found) and a token that does not hold the lease (409 lease_lost)', async () => {
    const unknown = await internalPost('state.internal', '/bundle', { runId: 'missing', leaseToken: 't' });
    expect(unknown.status).toBe(404);
    expect((await read(unknown)).error.code).toBe('run_not_found');
    await leaseFor('run-lease', 'owner-token');
    for (const [host, path, body] of [
      ['state.internal', '/bundle', { runId: 'run-lease', leaseToken: 'other' }],
      ['state.internal', '/flush', { runId: 'run-lease', leaseToken: 'other', final: true, tables: {} }],
      ['broker.internal', '/token', { runId: 'run-lease', leaseToken: 'other', installationId: 77 }],
    ] as const) {
      const res = await internalPost(host, path, body);
      expect(res.status).toBe(409);
      expect((await read(res)).error.code).toBe('lease_lost');
    }
  });

  it('hands the scoped rows to the lease holder and writes a flush all or nothing', async () => {
    await leaseFor('run-flush', 'flush-token');
    const bundle = await read(
      await internalPost('state.internal', '/bundle', { runId: 'run-flush', leaseToken: 'flush-token' }),
    );
    // The migrations' seeded review policy is there, the tables of the contract are all named.
    expect(bundle.tables.review_policies).toHaveLength(1);
    expect(Object.keys(bundle.tables)).toEqual(
      expect.arrayContaining(['runs', 'findings', 'memory_clusters']),
    );

    const run = {
      id: 'run-flush',
      review_key: `${REPO}#7@${'d'.repeat(40)}`,
      repo: REPO,
      pr_number: 7,
      trigger: 'opened',
      status: 'running',
      created_at: 1,
      updated_at: 1,
    };
    // A row naming a column the table does not have: 400, and the valid row beside it is not written.
    const bad = await internalPost('state.internal', '/flush', {
      runId: 'run-flush',
      leaseToken: 'flush-token',
      final: false,
      tables: { runs: { insert: [run] }, findings: { insert: [{ no_such_column: 1 }] } },
    });
    expect(bad.status).toBe(400);
    expect((await read(bad)).error.code).toBe('invalid_flush');
    const db = await h.d1();
    expect(await db.prepare('SELECT id FROM runs WHERE id = ?').bind('run-flush').first()).toBeNull();

    const ok = await internalPost('state.internal', '/flush', {
      runId: 'run-flush',
      leaseToken: 'flush-token',
      final: true,
      tables: { runs: { insert: [run] } },
    });
    expect(ok.status).toBe(200);
    const update = await internalPost('state.internal', '/flush', {
      runId: 'run-flush',
      leaseToken: 'flush-token',
      final: true,
      tables: { runs: { upsert: [{ ...run, status: 'completed', updated_at: 2 }] } },
    });
    expect(update.status).toBe(200);
    expect(
      await db.prepare('SELECT status, updated_at FROM runs WHERE id = ?').bind('run-flush').first(),
    ).toEqual({
      status: 'completed',
      updated_at: 2,
    });
  });

  it('a flushed feedback event stored meanwhile (the reactions step) is kept as stored; the rest is written', async () => {
    await leaseFor('run-event', 'event-token');
    const event = (key: string, up: number) => ({
      event_key: key,
      repo: REPO,
      pr_number: 7,
      comment_id: '700',
      fingerprint: 'f1',
      kind: 'up',
      status: 'counted',
      up,
      down: 0,
      dismissed: 0,
      addressed: 0,
      cluster_id: null,
      context_id: null,
      actor: 'alice',
      head_sha: null,
      answered: 0,
      created_at: 1,
      updated_at: 1,
    });
    const db = await h.d1();
    const stored = event('reaction:900', 1);
    const cols = Object.keys(stored);
    await db
      .prepare(`INSERT INTO memory_feedback (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`)
      .bind(...Object.values(stored))
      .run();
    const flushed = await internalPost('state.internal', '/flush', {
      runId: 'run-event',
      leaseToken: 'event-token',
      final: true,
      tables: {
        memory_feedback: {
          insert: [
            { id: 1, ...event('reaction:900', 0) },
            { id: 2, ...event('reaction:901', 1) },
          ],
        },
      },
    });
    expect(flushed.status).toBe(200);
    const rows = await db
      .prepare(
        "SELECT event_key, up FROM memory_feedback WHERE event_key IN ('reaction:900', 'reaction:901') ORDER BY event_key",
      )
      .all();
    expect(rows.results).toEqual([
      { event_key: 'reaction:900', up: 1 },
      { event_key: 'reaction:901', up: 1 },
    ]);
  });

  it('mints tokens only for the installation of the run (403 installation_mismatch)', async () => {
    await leaseFor('run-token', 'token-token');
    const other = await internalPost('broker.internal', '/token', {
      runId: 'run-token',
      leaseToken: 'token-token',
      installationId: 78,
    });
    expect(other.status).toBe(403);
    expect((await read(other)).error.code).toBe('installation_mismatch');
    const mine = await internalPost('broker.internal', '/token', {
      runId: 'run-token',
      leaseToken: 'token-token',
      installationId: 77,
    });
    expect(mine.status).toBe(200);
    expect(await read(mine)).toEqual({ token: 'ghs_fake', expiresAt: '2099-01-01T00:00:00Z' });
  });
});
