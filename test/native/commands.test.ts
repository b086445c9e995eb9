import { generateKeyPairSync } from 'node:crypto';
import { runCommand, startIngress, until, type Harness } from './harness.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

const API = 'https://api.github.test';
const HEAD = 'c'.repeat(40);
const OLD_HEAD = 'b'.repeat(40);

const githubCalls: string[] = [];
/** Installation 2's token request answers 404 while this is set (an installation GitHub does not know). */
let installationTwoGone = false;
let installationsRefused = false;

/** GitHub's App and installation endpoints of a repository sync, as the REST API answers them. */
function github(request: Request): Response {
  const url = new URL(request.url);
  const path = `${url.pathname}${url.search}`;
  const auth = request.headers.get('authorization') ?? '';
  githubCalls.push(`${request.method} ${path}`);
  if (path === '/app/installations?per_page=100' && auth.startsWith('Bearer ')) {
    if (installationsRefused) return Response.json({ message: 'Bad credentials' }, { status: 401 });
    return Response.json([
      { id: 1, account: { login: 'acme' }, suspended_at: null },
      { id: 2, account: { login: 'octo' }, suspended_at: null },
      { id: 3, account: { login: 'paused' }, suspended_at: '2026-01-01T00:00:00Z' },
    ]);
  }
  const token = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(url.pathname);
  if (request.method === 'POST' && token) {
    if (token[1] === '2' && installationTwoGone)
      return Response.json({ message: 'Not Found' }, { status: 404 });
    return Response.json({ token: `ghs_${token[1]}`, expires_at: '2030-01-01T00:00:00Z' }, { status: 201 });
  }
  if (path === '/installation/repositories?per_page=100' && auth === 'token ghs_1') {
    return Response.json(
      { total_count: 2, repositories: [{ full_name: 'acme/web' }] },
      { headers: { link: `<${API}/installation/repositories?per_page=100&page=2>; rel="next"` } },
    );
  }
  if (path === '/installation/repositories?per_page=100&page=2' && auth === 'token ghs_1') {
    return Response.json({ total_count: 2, repositories: [{ full_name: 'acme/api' }] });
  }
  if (path === '/installation/repositories?per_page=100' && auth === 'token ghs_2') {
    return Response.json({ total_count: 1, repositories: [{ full_name: 'octo/tools' }] });
  }
  return Response.json({ message: 'Not Found' }, { status: 404 });
}

let h: Harness;
beforeAll(async () => {
  h = await startIngress({
    github,
    bindings: {
      VERDICT_BRIDGE_AUTHORITY: 'live',
      APP_ID: '4242',
      PRIVATE_KEY: privateKey,
      GITHUB_API_URL: API,
    },
  });
  const worker: any = await h.mf.getWorker('verdict');
  await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() }); // creates the schema
});
afterAll(() => h.close());
beforeEach(() => {
  githubCalls.length = 0;
  installationTwoGone = false;
  installationsRefused = false;
});

type SeedRun = {
  id: string;
  key: string;
  repo: string;
  pr: number;
  head: string;
  status?: string;
  installation?: number | null;
  at: string;
};

async function seedRun(harness: Harness, r: SeedRun): Promise<void> {
  const db = await harness.d1();
  await db
    .prepare(
      `INSERT INTO native_runs (id, review_key, repo, pr_number, head_sha, trigger, status, installation_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'opened', ?, ?, ?, ?)`,
    )
    .bind(r.id, r.key, r.repo, r.pr, r.head, r.status ?? 'completed', r.installation ?? null, r.at, r.at)
    .run();
}

const count = async (harness: Harness, sql: string, ...binds: unknown[]): Promise<number> =>
  (
    await (
      await harness.d1()
    )
      .prepare(`SELECT COUNT(*) AS n FROM ${sql}`)
      .bind(...binds)
      .first()
  ).n;

const messagesOf = async (deliveryId: string | null) =>
  (await h.seen()).filter((m) => m.deliveryId === deliveryId);

describe('native command bridge: requeue', () => {
  beforeAll(async () => {
    // acme/web#5: an older head, then the stored head HEAD (the PR's latest run here), of installation 77.
    await seedRun(h, {
      id: 'run-old',
      key: `acme/web#5@${OLD_HEAD}`,
      repo: 'acme/web',
      pr: 5,
      head: OLD_HEAD,
      installation: 77,
      at: '2026-01-01T10:00:00.000Z',
    });
    await seedRun(h, {
      id: 'run-head',
      key: `acme/web#5@${HEAD}:comment-9`,
      repo: 'acme/web',
      pr: 5,
      head: HEAD,
      installation: 77,
      at: '2026-01-01T11:00:00.000Z',
    });
  });

  it('by repo and number: a new run of the stored head under an operator variant, sent to the review queue', async () => {
    const runs = await count(h, 'native_runs');
    const done = await runCommand(h, 'requeue', { repo: 'acme/web', number: 5 });
    expect(done.status).toBe('succeeded');
    const result = JSON.parse(done.result);
    expect(result.variant).toMatch(/^operator-\d+$/);
    expect(result).toEqual({
      outcome: 'enqueued',
      reviewKey: `acme/web#5@${HEAD}:${result.variant}`,
      runId: expect.any(String),
      jobId: null,
      headSha: HEAD,
      variant: result.variant,
      deliveryId: expect.stringMatching(/^requeue:cmd-/),
    });
    expect(await count(h, 'native_runs')).toBe(runs + 1);
    const run = await (
      await h.d1()
    )
      .prepare(
        'SELECT review_key, status, trigger, installation_id, delivery_id FROM native_runs WHERE id = ?',
      )
      .bind(result.runId)
      .first();
    expect(run).toEqual({
      review_key: result.reviewKey,
      status: 'queued',
      trigger: 'operator_requeue',
      installation_id: 77,
      delivery_id: result.deliveryId,
    });
    const [message] = await until(
      () => messagesOf(result.deliveryId),
      (m) => m.length > 0,
    );
    expect(message.event).toBe('pull_request');
    expect(JSON.parse(message.body)).toEqual({
      action: 'operator_requeue',
      number: 5,
      pull_request: { number: 5, head: { sha: HEAD } },
      repository: { full_name: 'acme/web' },
      installation: { id: 77 },
      variant: result.variant,
    });
    // Recorded as a delivery, so that a replay-webhook command can send it again.
    expect(await count(h, 'native_deliveries WHERE id = ? AND body IS NOT NULL', result.deliveryId)).toBe(1);
  });

  it('by a review key with a variant; the same request again is already_queued, and queued again once its run failed', async () => {
    const key = `acme/web#5@${HEAD}:comment-9`;
    const first = await runCommand(h, 'requeue', { reviewKey: key, variant: 'rerun-1' });
    expect(first.status).toBe('succeeded');
    const queued = JSON.parse(first.result);
    expect(queued).toMatchObject({ outcome: 'enqueued', reviewKey: `acme/web#5@${HEAD}:rerun-1` });
    expect(
      await until(
        () => messagesOf(queued.deliveryId),
        (m) => m.length === 1,
      ),
    ).toHaveLength(1);

    const again = JSON.parse((await runCommand(h, 'requeue', { reviewKey: key, variant: 'rerun-1' })).result);
    expect(again).toMatchObject({ outcome: 'already_queued', runId: queued.runId, deliveryId: null });

    const db = await h.d1();
    const setStatus = (status: string) =>
      db.prepare('UPDATE native_runs SET status = ? WHERE id = ?').bind(status, queued.runId).run();
    await setStatus('failed');
    const revived = JSON.parse(
      (await runCommand(h, 'requeue', { reviewKey: key, variant: 'rerun-1' })).result,
    );
    expect(revived).toMatchObject({ outcome: 'enqueued', runId: queued.runId });
    expect(
      await until(
        () => messagesOf(revived.deliveryId),
        (m) => m.length === 1,
      ),
    ).toHaveLength(1);
    expect(
      await db.prepare('SELECT status FROM native_runs WHERE id = ?').bind(queued.runId).first(),
    ).toEqual({ status: 'queued' });

    for (const status of ['completed', 'skipped']) {
      await setStatus(status);
      const done = JSON.parse(
        (await runCommand(h, 'requeue', { reviewKey: key, variant: 'rerun-1' })).result,
      );
      expect(done).toMatchObject({ outcome: 'already_reviewed', runId: queued.runId, deliveryId: null });
    }
  });

  it('a review key without a run of its own, naming the stored head', async () => {
    const done = await runCommand(h, 'requeue', { reviewKey: `acme/web#5@${HEAD}`, variant: 'again' });
    expect(done.status).toBe('succeeded');
    expect(JSON.parse(done.result)).toMatchObject({
      outcome: 'enqueued',
      reviewKey: `acme/web#5@${HEAD}:again`,
      headSha: HEAD,
    });
  });

  it('refuses invalid payloads and targets it cannot find, queueing nothing', async () => {
    await seedRun(h, {
      id: 'run-noinst',
      key: `acme/lost#1@${HEAD}`,
      repo: 'acme/lost',
      pr: 1,
      head: HEAD,
      at: '2026-01-01T11:00:00.000Z',
    });
    const runs = await count(h, 'native_runs');
    const messages = (await h.seen()).length;
    const refusals: Array<[unknown, string]> = [
      [{}, 'invalid_command: requeue needs a reviewKey, or repo plus number'],
      [
        { repo: 'acme/web', number: 'five' },
        'invalid_command: requeue needs a reviewKey, or repo plus number',
      ],
      [{ reviewKey: 'not-a-key' }, 'invalid_command: not-a-key is not a review key'],
      [
        { repo: 'acme/web', number: 5, variant: 'no spaces' },
        'invalid_command: the variant must be 1 to 100 letters, digits, dots, dashes or underscores',
      ],
      [{ repo: 'acme/web', number: 999 }, 'pr_not_found: no stored head for acme/web#999'],
      [
        { reviewKey: `acme/web#5@${'d'.repeat(40)}` },
        `review_not_found: no stored review acme/web#5@${'d'.repeat(40)}, and dddddddddddd is not the stored head of acme/web#5`,
      ],
      [
        { repo: 'acme/lost', number: 1 },
        'installation_missing: cannot requeue acme/lost#1: the installation id is missing',
      ],
    ];
    for (const [payload, error] of refusals) {
      expect(await runCommand(h, 'requeue', payload)).toMatchObject({
        status: 'failed',
        error,
        result: null,
      });
    }
    expect(await count(h, 'native_runs')).toBe(runs);
    expect((await h.seen()).length).toBe(messages);
  });

  it('takes the installation from the stored repository when the run has none', async () => {
    const db = await h.d1();
    await db
      .prepare(
        `INSERT INTO repositories (full_name, owner, name, installation_id, installed, created_at, updated_at)
         VALUES ('acme/lost', 'acme', 'lost', 88, 1, 1, 1)`,
      )
      .run();
    const done = await runCommand(h, 'requeue', { repo: 'acme/lost', number: 1 });
    expect(done.status).toBe('succeeded');
    const { deliveryId } = JSON.parse(done.result);
    const [message] = await until(
      () => messagesOf(deliveryId),
      (m) => m.length > 0,
    );
    expect(JSON.parse(message.body).installation).toEqual({ id: 88 });
  });
});

describe('native command bridge: sync-repositories', () => {
  const repos = async () =>
    (
      await (
        await h.d1()
      )
        .prepare('SELECT full_name, installation_id, installed, config FROM repositories ORDER BY full_name')
        .all()
    ).results;

  beforeAll(async () => {
    const db = await h.d1();
    await db.prepare('DELETE FROM repositories').run();
    const repo = (name: string, config: string | null) =>
      db
        .prepare(
          `INSERT INTO repositories (full_name, owner, name, installation_id, installed, config, created_at, updated_at)
           VALUES (?, 'acme', ?, 1, 1, ?, 1, 1)`,
        )
        .bind(`acme/${name}`, name, config)
        .run();
    await repo('old', null);
    await repo('web', '{"enabled":false}'); // an operator's choice: kept by the sync
  });

  it('fails without changing anything when an installation cannot be listed', async () => {
    const before = await repos();
    installationTwoGone = true;
    const done = await runCommand(h, 'sync-repositories', {});
    expect(done).toMatchObject({
      status: 'failed',
      error: 'execution_error: installation token: GitHub answered 404',
    });
    expect(await repos()).toEqual(before);
    installationsRefused = true;
    expect(await runCommand(h, 'sync-repositories', {})).toMatchObject({
      status: 'failed',
      error: 'execution_error: GET /app/installations: GitHub answered 401',
    });
    expect(await repos()).toEqual(before);
  });

  it('records every repository of the installations not suspended; one GitHub no longer lists is uninstalled', async () => {
    const done = await runCommand(h, 'sync-repositories', {});
    expect(done.status).toBe('succeeded');
    expect(JSON.parse(done.result)).toEqual({
      installations: 3,
      repositories: 3,
      added: ['acme/api', 'octo/tools'],
      removed: ['acme/old'],
    });
    // The suspended installation is not listed; each installation's listing uses its own token.
    expect(githubCalls).toEqual([
      'GET /app/installations?per_page=100',
      'POST /app/installations/1/access_tokens',
      'GET /installation/repositories?per_page=100',
      'GET /installation/repositories?per_page=100&page=2',
      'POST /app/installations/2/access_tokens',
      'GET /installation/repositories?per_page=100',
    ]);
    expect(await repos()).toEqual([
      { full_name: 'acme/api', installation_id: 1, installed: 1, config: '{"enabled":true}' },
      { full_name: 'acme/old', installation_id: 1, installed: 0, config: null },
      { full_name: 'acme/web', installation_id: 1, installed: 1, config: '{"enabled":false}' },
      { full_name: 'octo/tools', installation_id: 2, installed: 1, config: '{"enabled":true}' },
    ]);
    const alerts = await (
      await h.d1()
    )
      .prepare(
        "SELECT kind, repo, severity, message FROM native_alerts WHERE kind = 'repository_access_lost'",
      )
      .all();
    expect(alerts.results).toEqual([
      {
        kind: 'repository_access_lost',
        repo: 'acme/old',
        severity: 'warning',
        message: 'The App can no longer reach acme/old (repository sync): it is no longer reviewed',
      },
    ]);

    // Again: nothing new, nothing removed.
    const again = await runCommand(h, 'sync-repositories', {});
    expect(JSON.parse(again.result)).toMatchObject({ added: [], removed: [] });
  });
});

describe('native command bridge: a requeued review reaches the container; no App credentials', () => {
  const reviews: any[] = [];
  let c: Harness;
  beforeAll(async () => {
    c = await startIngress({
      consumer: true,
      bindings: { VERDICT_BRIDGE_AUTHORITY: 'live' },
      container: async (request) => {
        const body: any = await request.json();
        reviews.push(body);
        return Response.json({ runId: body.runId, status: 'completed' });
      },
    });
    const worker: any = await c.mf.getWorker('verdict');
    await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
  });
  afterAll(() => c.close());

  it('the consumer dispatches the requeued run under its variant and trigger', async () => {
    await seedRun(c, {
      id: 'run-c',
      key: `acme/web#7@${HEAD}`,
      repo: 'acme/web',
      pr: 7,
      head: HEAD,
      installation: 77,
      at: '2026-01-01T11:00:00.000Z',
    });
    const done = await runCommand(c, 'requeue', { repo: 'acme/web', number: 7, variant: 'ops-1' });
    expect(done.status).toBe('succeeded');
    const result = JSON.parse(done.result);
    const db = await c.d1();
    const delivery = await until(
      () =>
        db
          .prepare('SELECT dispatch_outcome FROM native_deliveries WHERE id = ?')
          .bind(result.deliveryId)
          .first(),
      (row: any) => row?.dispatch_outcome != null,
    );
    expect(delivery).toEqual({ dispatch_outcome: 'dispatched' });
    expect(reviews).toHaveLength(1);
    expect(reviews[0]).toMatchObject({
      runId: result.runId,
      reviewKey: `acme/web#7@${HEAD}:ops-1`,
      repo: 'acme/web',
      prNumber: 7,
      headSha: HEAD,
      installationId: 77,
      trigger: 'operator_requeue',
      variant: 'ops-1',
    });
    expect(
      await db.prepare('SELECT status FROM native_runs WHERE id = ?').bind(result.runId).first(),
    ).toEqual({
      status: 'completed',
    });
  });

  it('sync-repositories without the App credentials fails app_credentials_missing', async () => {
    expect(await runCommand(c, 'sync-repositories', {})).toMatchObject({
      status: 'failed',
      error:
        'app_credentials_missing: repository sync needs the GitHub App credentials (APP_ID and PRIVATE_KEY)',
    });
  });
});
