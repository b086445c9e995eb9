import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { runCli } from '../../src/cli/main.js';
import { randomId, systemClock } from '../../src/clock.js';
import {
  MAX_REDELIVERIES_PER_PASS,
  runCatchUp,
  type CatchUpGitHub,
  type HookDelivery,
  type OpenPullRequest,
} from '../../src/scheduler/catch-up.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { IncomingDelivery } from '../../src/store/deliveries.js';
import { validAppJwt } from '../helpers/api-bodies.js';
import { openTestStore, type TestStore } from '../helpers/store.js';
import { example } from '../helpers/webhooks.js';

const HOUR = 3_600_000;
const silent = pino({ level: 'silent' });
const sha = (c: string) => c.repeat(40);

function stored(id: string): IncomingDelivery {
  return {
    id,
    event: 'pull_request',
    action: 'opened',
    raw: JSON.stringify({ action: 'opened' }),
    bytes: 20,
    repo: 'acme/widgets',
    prNumber: 1,
    installationId: 7,
    outcome: 'enqueued',
    job: { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: id } },
  };
}

async function installed(store: Store, repo: string, installationId = 7): Promise<void> {
  await store.repositories.upsertInstalled(repo, installationId, { actor: 'test', reason: 'installed' });
}

/** A fake GitHub for the loop that records what it was asked. */
function fakeGitHub(attempts: HookDelivery[], pulls: Record<string, OpenPullRequest[] | Error>) {
  const calls = { redelivered: [] as number[], listedSince: [] as number[], listedRepos: [] as string[] };
  const github: CatchUpGitHub = {
    deliveries: async (since) => {
      calls.listedSince.push(since);
      return attempts;
    },
    redeliver: async (id) => {
      if (id === 666) throw new Error('GitHub 422');
      calls.redelivered.push(id);
    },
    openPullRequests: async (repo) => {
      calls.listedRepos.push(repo);
      const answer = pulls[repo] ?? [];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { github, calls };
}

const attempt = (id: number, guid: string, at: number, statusCode: number | null): HookDelivery => ({
  id,
  guid,
  deliveredAt: at,
  statusCode,
  event: 'pull_request',
  action: 'opened',
});

const pr = (number: number, head: string, extra: Partial<OpenPullRequest> = {}): OpenPullRequest => ({
  number,
  headSha: head,
  baseRef: 'main',
  headRef: `feature-${number}`,
  title: `PR ${number}`,
  author: 'mona',
  draft: false,
  ...extra,
});

describe('pr-agent-loop: one pass (runCatchUp)', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(() => t.cleanup());
  const pass = (github: CatchUpGitHub | null) =>
    runCatchUp({ store: t.store, github, clock: t.clock, log: silent });

  test('redelivers each failed delivery of the last 72 hours once, by its latest attempt, unless stored here', async () => {
    const now = t.clock.now();
    await t.store.deliveries.recordBatch([stored('guid-stored')]);
    const { github, calls } = fakeGitHub(
      [
        attempt(11, 'guid-failed', now - 5 * HOUR, 502),
        attempt(12, 'guid-failed', now - 4 * HOUR, null), // its latest attempt: this id is redelivered
        attempt(21, 'guid-ok-later', now - 3 * HOUR, 500),
        attempt(22, 'guid-ok-later', now - 2 * HOUR, 202), // delivered on a retry: nothing to do
        attempt(31, 'guid-stored', now - HOUR, 504), // GitHub saw a timeout, but we stored it
        attempt(41, 'guid-too-old', now - 73 * HOUR, 500), // outside the window
      ],
      {},
    );
    const artifact = await pass(github);
    expect(calls.listedSince).toEqual([now - 72 * HOUR]);
    expect(calls.redelivered).toEqual([12]);
    expect(artifact).toMatchObject({ redelivered: ['guid-failed'], enqueued: [], deferred: 0, errors: [] });
  });

  test('at most 50 redeliveries a pass, oldest first; the rest are deferred to the next pass', async () => {
    const now = t.clock.now();
    const failed = Array.from({ length: 60 }, (_, i) =>
      attempt(1000 + i, `g${i}`, now - (60 - i) * 60_000, 500),
    );
    const { github, calls } = fakeGitHub(failed.reverse(), {});
    const artifact = await pass(github);
    expect(calls.redelivered).toHaveLength(MAX_REDELIVERIES_PER_PASS);
    expect(calls.redelivered.slice(0, 2)).toEqual([1000, 1001]);
    expect(artifact.deferred).toBe(10);
  });

  test('queues a catch_up review for each open pull request of an enabled repository whose head has no run', async () => {
    await installed(t.store, 'acme/widgets');
    await installed(t.store, 'acme/quiet');
    await t.store.repositories.configure('acme/quiet', { enabled: false }, { actor: 'op', reason: null });
    await t.store.repositories.upsertInstalled('acme/gone', 9, { actor: 'test', reason: 'installed' });
    await t.store.repositories.markUninstalled(['acme/gone']);
    // #1's head was reviewed already; #2 was pushed to while we were down; #3 was never seen.
    await t.store.runs.createOrGet({
      reviewKey: `acme/widgets#1@${sha('a')}`,
      repo: 'acme/widgets',
      prNumber: 1,
      headSha: sha('a'),
      trigger: 'opened',
      installationId: 7,
    });
    await t.store.runs.createOrGet({
      reviewKey: `acme/widgets#2@${sha('b')}`,
      repo: 'acme/widgets',
      prNumber: 2,
      headSha: sha('b'),
      trigger: 'opened',
      installationId: 7,
    });
    const { github, calls } = fakeGitHub([], {
      'acme/widgets': [pr(1, sha('a')), pr(2, sha('c')), pr(3, sha('d'), { draft: true, title: 'New' })],
      'acme/quiet': [pr(5, sha('e'))],
      'acme/gone': [pr(6, sha('f'))],
    });
    const artifact = await pass(github);
    expect(calls.listedRepos).toEqual(['acme/widgets']);
    expect(artifact.enqueued.sort()).toEqual([`acme/widgets#2@${sha('c')}`, `acme/widgets#3@${sha('d')}`]);
    const run = await t.store.runs.getByKey(`acme/widgets#3@${sha('d')}`);
    expect(run).toMatchObject({ status: 'queued', trigger: 'catch_up', installationId: 7 });
    expect(await t.store.pullRequests.get('acme/widgets', 3)).toMatchObject({
      headSha: sha('d'),
      title: 'New',
      draft: true,
      baseRef: 'main',
      installationId: 7,
    });
    // A second pass finds every head with its run: nothing more is queued.
    expect((await pass(github)).enqueued).toEqual([]);
  });

  test('a failure is recorded in the artifact and the pass goes on; without App credentials it says so', async () => {
    await installed(t.store, 'acme/broken');
    await installed(t.store, 'acme/widgets');
    const now = t.clock.now();
    const { github } = fakeGitHub([attempt(666, 'guid-refused', now - HOUR, 500)], {
      'acme/broken': new Error('GitHub 403'),
      'acme/widgets': [pr(4, sha('9'))],
    });
    const artifact = await pass(github);
    expect(artifact.errors).toEqual([
      'redelivery of guid-refused (pull_request) failed: GitHub 422',
      'listing the open pull requests of acme/broken failed: GitHub 403',
    ]);
    expect(artifact.enqueued).toEqual([`acme/widgets#4@${sha('9')}`]);
    expect(await pass(null)).toEqual({
      redelivered: [],
      enqueued: [],
      deferred: 0,
      errors: [],
      skipped: 'app_credentials_missing',
    });
  });
});

/** A local fake GitHub (GHE_HOST): the deliveries API with cursor pages, redeliveries, pull requests. */
describe('verdict jobs run pr-agent-loop (the CLI, against a local fake GitHub)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  let dir: string;
  let server: Server;
  let host: string;
  const hits: string[] = [];
  const redeliveries: string[] = [];
  const now = Date.now();
  const delivery = (id: number, guid: string, minutesAgo: number, statusCode: number) => ({
    id,
    guid,
    delivered_at: new Date(now - minutesAgo * 60_000).toISOString(),
    redelivery: false,
    duration: 10.01,
    status: statusCode === 0 ? 'Invalid HTTP Response: 502' : 'OK',
    status_code: statusCode,
    event: 'pull_request',
    action: 'opened',
    installation_id: 7,
    repository_id: 1296269,
    throttled_at: null,
  });
  // Three deliveries GitHub "sent" while the server was down (GitHub lists them failed); one of them did
  // reach us before the cut (stored), so only two are asked again. A fourth was delivered fine.
  const pages = [
    [delivery(903, 'guid-c', 5, 0), delivery(902, 'guid-b', 10, 0)],
    [delivery(901, 'guid-a', 15, 0), delivery(900, 'guid-fine', 20, 202)],
  ];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verdict-catch-up-'));
    const send = (
      res: ServerResponse,
      status: number,
      body: unknown,
      headers: Record<string, string> = {},
    ) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(body));
    };
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      hits.push(`${req.method} ${url.pathname}`);
      const auth = req.headers.authorization ?? '';
      // The scheme is case-insensitive (Octokit's App auth sends "bearer").
      const app = validAppJwt(auth.replace(/^bearer /i, 'Bearer '), publicKey, 4242, Date.now() / 1000);
      if (url.pathname === '/api/v3/app/hook/deliveries' && req.method === 'GET' && app) {
        const page = url.searchParams.get('cursor') === 'v1_next' ? 1 : 0;
        const link: Record<string, string> =
          page === 0
            ? { link: `<http://${host}/api/v3/app/hook/deliveries?per_page=100&cursor=v1_next>; rel="next"` }
            : {};
        return send(res, 200, pages[page], link);
      }
      const redeliver = /^\/api\/v3\/app\/hook\/deliveries\/(\d+)\/attempts$/.exec(url.pathname);
      if (redeliver && req.method === 'POST' && app) {
        redeliveries.push(redeliver[1]!);
        return send(res, 202, {});
      }
      if (url.pathname === '/api/v3/app/installations/7/access_tokens' && req.method === 'POST' && app) {
        return send(res, 201, { token: 'ghs_installation', expires_at: '2099-01-01T00:00:00Z' });
      }
      if (
        url.pathname === '/api/v3/repos/acme/widgets/pulls' &&
        url.searchParams.get('state') === 'open' &&
        auth === 'token ghs_installation'
      ) {
        const pull = example('pull_request', 'opened').pull_request;
        pull.number = 12;
        pull.head.sha = sha('e');
        pull.base.ref = 'master';
        pull.draft = false;
        return send(res, 200, [pull]);
      }
      send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  test('asks GitHub for exactly the redeliveries of the deliveries not stored, and queues the unreviewed head', async () => {
    const db = join(dir, 'verdict.sqlite');
    const store = await openStore(
      { client: 'sqlite', filename: db },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
    );
    await store.deliveries.recordBatch([stored('guid-b')]);
    await store.repositories.upsertInstalled('acme/widgets', 7, { actor: 'test', reason: 'installed' });
    await store.close();
    const keyFile = join(dir, 'app.pem');
    writeFileSync(keyFile, privateKey);
    // The installed CLI in its own process, as an operator runs it (nothing of it stays in this one).
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
      (resolve) => {
        execFile(
          process.execPath,
          [
            '--import',
            'tsx',
            join(process.cwd(), 'src/cli/entry.ts'),
            'jobs',
            'run',
            'pr-agent-loop',
            '--db',
            db,
          ],
          {
            cwd: process.cwd(),
            timeout: 120_000,
            env: {
              PATH: process.env.PATH ?? '',
              APP_ID: '4242',
              PRIVATE_KEY_PATH: keyFile,
              GITHUB_WEBHOOK_SECRET: 'secret',
              GHE_HOST: host,
              GHE_PROTOCOL: 'http',
              LOG_LEVEL: 'silent',
            },
          },
          (error, out, err) =>
            resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out, stderr: err }),
        );
      },
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const out = [stdout];
    const printed = JSON.parse(out.join('\n'));
    expect(printed).toMatchObject({
      job: 'pr-agent-loop',
      status: 'ok',
      artifact: {
        redelivered: ['guid-a', 'guid-c'],
        enqueued: [`acme/widgets#12@${sha('e')}`],
        errors: [],
        generatedAt: expect.any(String),
      },
    });
    expect(redeliveries).toEqual(['901', '903']);
    expect(hits.filter((h) => h.startsWith('GET /api/v3/app/hook/deliveries'))).toHaveLength(2);

    const after = await openStore(
      { client: 'sqlite', filename: db },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
    );
    try {
      const run = await after.runs.getByKey(`acme/widgets#12@${sha('e')}`);
      expect(run).toMatchObject({ status: 'queued', trigger: 'catch_up', installationId: 7 });
      const jobs = await after.db.knex('jobs').where({ queue: 'reviews' });
      expect(jobs).toHaveLength(1);
      expect(JSON.parse(String(jobs[0].payload))).toMatchObject({ runId: run!.id, trigger: 'catch_up' });
      // The run is recorded as the scheduler records it: heartbeat and artifact.
      const record = (await after.scheduler.list()).find((r) => r.name === 'pr-agent-loop');
      expect(record).toMatchObject({
        lastStatus: 'ok',
        runs: 1,
        artifact: { enqueued: [`acme/widgets#12@${sha('e')}`] },
      });
    } finally {
      await after.close();
    }
  });

  test('an unknown job name is refused, naming the jobs', async () => {
    const err: string[] = [];
    const code = await runCli(['jobs', 'run', 'nightly'], {
      stdout: () => undefined,
      stderr: (text) => err.push(text),
      env: {},
      isTty: false,
    });
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(
      /no job named "nightly" \(jobs: command-bridge, watchdog, maintenance, pr-agent-loop, nightly-audit\)/,
    );
  });
});
