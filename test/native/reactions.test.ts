import { generateKeyPairSync } from 'node:crypto';
import { pino } from 'pino';
import { ProbotOctokit } from 'probot';
import type { GitHubClient } from '../../src/github/client.js';
import { requestReview } from '../../src/review/request.js';
import { runCatchUp } from '../../src/scheduler/catch-up.js';
import { openTestStore, type TestStore } from '../helpers/store.js';
import { startIngress, type Harness } from './harness.js';

/**
 * The native pr-agent-loop's feedback step (reactions.ts): the reactions on Verdict's line comments of an
 * open pull request become memory feedback in D1, read from a fake GitHub with the Node loop's rules. The
 * same GitHub is read by the Node loop (runCatchUp on a SQLite store seeded with the same rows): both
 * runtimes write the same `memory_feedback` and `memory_clusters` rows.
 */
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

const NOW = Date.parse('2026-11-20T12:00:00Z');
const API = 'https://api.github.test';
const REPO = 'acme/web';
const HEAD = 'a'.repeat(40);

type Reaction = { id: number; content: string; login: string; type?: string };
/** What GitHub holds: the reactions on each of the pull request's review comments (800 is a person's). */
const onGitHub = new Map<number, Reaction[]>();
const calls: string[] = [];

function listed(id: number) {
  const reactions = onGitHub.get(id) ?? [];
  const count = (content: string) => reactions.filter((r) => r.content === content).length;
  return {
    id,
    node_id: `PRRC_${id}`,
    path: 'src/cache.ts',
    user: id === 800 ? { login: 'alice', type: 'User' } : { login: 'verdict-app[bot]', type: 'Bot' },
    reactions: { total_count: reactions.length, '+1': count('+1'), '-1': count('-1'), heart: count('heart') },
  };
}

/** GitHub's App, pull request and reaction endpoints of the loop, shaped as the REST API answers them. */
function github(request: Request): Response {
  const url = new URL(request.url);
  const path = `${url.pathname}${url.search}`;
  calls.push(`${request.method} ${path}`);
  if (request.method === 'POST' && url.pathname === '/app/installations/77/access_tokens')
    return Response.json({ token: 'ghs_77', expires_at: '2030-01-01T00:00:00Z' }, { status: 201 });
  if (path === '/app/hook/deliveries?per_page=100') return Response.json([]);
  if (path === `/repos/${REPO}/pulls?state=open&per_page=100`)
    return Response.json([{ number: 7, head: { sha: HEAD } }]);
  if (path === `/repos/${REPO}/pulls/7/comments?per_page=100`)
    return Response.json([700, 701, 800].map(listed));
  const reactions = /^\/repos\/acme\/web\/pulls\/comments\/(\d+)\/reactions\?per_page=100$/.exec(path);
  if (reactions && onGitHub.has(Number(reactions[1]))) {
    return Response.json(
      onGitHub.get(Number(reactions[1]))!.map((r) => ({
        id: r.id,
        node_id: `REA_${r.id}`,
        user: { login: r.login, type: r.type ?? 'User' },
        content: r.content,
        created_at: '2026-11-20T11:00:00Z',
      })),
    );
  }
  return Response.json({ message: 'Not Found' }, { status: 404 });
}

/** The Node runtime's Octokit, reading the same fake GitHub. */
const octokit = new ProbotOctokit({
  auth: { token: 'ghs_77' },
  baseUrl: API,
  throttle: { enabled: false },
  retry: { enabled: false },
  request: { fetch: async (url: string, init?: RequestInit) => github(new Request(url, init)) },
}) as unknown as GitHubClient;

let h: Harness;
let node: TestStore;

/** The store's rows a review leaves behind: the repository, the run, its findings and two line comments. */
async function seedNodeStore(store: TestStore['store']): Promise<void> {
  await store.repositories.upsertInstalled(REPO, 77, { actor: 'test', reason: 'installed' });
  await store.repositories.configure(REPO, { enabled: true }, { actor: 'test', reason: null });
  const { run } = await requestReview(store, {
    ...{ owner: 'acme', repo: 'web', number: 7, headSha: HEAD, installationId: 77, trigger: 'opened' },
  });
  const finding = (title: string, fingerprint: string, line: number) => ({
    ...{ severity: 'high', category: 'concurrency', path: 'src/cache.ts', line, title, fingerprint },
    body: `${title}: why it matters.`,
    outsideDiff: false,
  });
  await store.findings.recordMany(
    { runId: run.id, reviewKey: run.reviewKey, repo: REPO, prNumber: 7, headSha: HEAD },
    [
      finding('Eviction races with writes', 'fp_race', 2),
      finding('Hits are never revalidated', 'fp_stale', 5),
    ],
  );
  const thread = (commentId: string, fingerprint: string, line: number) => ({
    ...{ repo: REPO, prNumber: 7, fingerprint, runId: run.id, reviewId: '5555', commentId },
    ...{ commentNodeId: `PRRC_${commentId}`, path: 'src/cache.ts', line, url: null },
  });
  await store.reviewThreads.recordMany([
    thread('700', 'fp_race', 2),
    thread('701', 'fp_stale', 5),
    thread('shadow:9', 'fp_race', 2),
  ]);
}

beforeAll(async () => {
  h = await startIngress({
    github,
    bindings: { APP_ID: '4242', PRIVATE_KEY: privateKey, GITHUB_API_URL: API },
  });
  node = await openTestStore('sqlite');
  node.clock.set(NOW);
  await seedNodeStore(node.store);
  // The worker's D1 holds the same rows (the state tables are the store's own).
  const worker: any = await h.mf.getWorker('verdict');
  await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date(NOW) }); // creates the schema
  const db = await h.d1();
  for (const table of ['repositories', 'runs', 'findings', 'review_threads']) {
    for (const row of (await node.store.db.knex(table).select('*')) as Array<Record<string, unknown>>) {
      const cols = Object.keys(row);
      await db
        .prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`)
        .bind(...cols.map((c) => row[c] ?? null))
        .run();
    }
  }
}, 60_000);
afterAll(async () => {
  await h?.close();
  await node?.cleanup();
});

/** One native pass (the pr-agent-loop cron) and one Node pass over the same GitHub; the native detail. */
async function passes(): Promise<{ native: any; node: any; calls: string[] }> {
  const worker: any = await h.mf.getWorker('verdict');
  calls.length = 0;
  await worker.scheduled({ cron: '2-59/15 * * * *', scheduledTime: new Date(NOW) });
  const nativeCalls = [...calls];
  const row: any = await (
    await h.d1()
  )
    .prepare("SELECT detail FROM native_job_runs WHERE job = 'pr-agent-loop' ORDER BY seq DESC LIMIT 1")
    .first();
  const nodePass = await runCatchUp({
    store: node.store,
    github: {
      deliveries: async () => [],
      redeliver: async () => undefined,
      openPullRequests: async () => [
        { number: 7, headSha: HEAD, baseRef: 'main', headRef: 'f', title: 't', author: 'a', draft: false },
      ],
      installation: async () => octokit,
    },
    clock: node.clock,
    log: pino({ level: 'silent' }),
  });
  return { native: JSON.parse(row.detail), node: nodePass, calls: nativeCalls as string[] };
}

const FEEDBACK = `SELECT event_key, repo, pr_number, comment_id, fingerprint, kind, status, up, down, dismissed,
  addressed, cluster_id, context_id, actor, head_sha, answered, created_at, updated_at FROM memory_feedback ORDER BY id`;
const CLUSTERS = 'SELECT * FROM memory_clusters ORDER BY created_at, exemplar_title';

/** Rows with the cluster ids (random in both runtimes) named by their order of appearance. */
function named(feedback: any[], clusters: any[]) {
  const ids = new Map<string, string>(clusters.map((c, i) => [String(c.id), `cluster${i + 1}`]));
  return {
    feedback: feedback.map((f) => ({ ...f, cluster_id: ids.get(f.cluster_id) ?? f.cluster_id })),
    clusters: clusters.map((c) => ({ ...c, id: ids.get(String(c.id)) })),
  };
}
async function nativeRows() {
  const db = await h.d1();
  return named((await db.prepare(FEEDBACK).all()).results, (await db.prepare(CLUSTERS).all()).results);
}
async function nodeRows() {
  const knex = node.store.db.knex;
  return named(await knex.raw(FEEDBACK), await knex.raw(CLUSTERS));
}

describe('native pr-agent-loop: the reactions step', () => {
  it('a reaction on a published line comment becomes one feedback row, folded into a cluster, once', async () => {
    onGitHub.set(700, [{ id: 31, content: '+1', login: 'alice' }]);
    onGitHub.set(800, [{ id: 90, content: '+1', login: 'bob' }]); // not Verdict's comment
    const first = await passes();
    expect(first.native).toMatchObject({ enqueued: [], errors: [], reactions: 1, reactionsWaiting: [] });
    expect(first.node).toMatchObject({ reactions: 1, errors: [] });
    // One listing, then the reactions of the one comment of Verdict's whose roll-up grew.
    expect(first.calls.filter((c) => c.includes('/pulls/'))).toEqual([
      `GET /repos/${REPO}/pulls/7/comments?per_page=100`,
      `GET /repos/${REPO}/pulls/comments/700/reactions?per_page=100`,
    ]);
    const rows = await nativeRows();
    expect(rows.feedback).toEqual([
      {
        ...{ event_key: 'reaction:31', repo: REPO, pr_number: 7, comment_id: '700', fingerprint: 'fp_race' },
        ...{ kind: 'up', status: 'counted', up: 1, down: 0, dismissed: 0, addressed: 0 },
        ...{ cluster_id: 'cluster1', context_id: null, actor: 'github:alice', head_sha: null, answered: 0 },
        ...{ created_at: NOW, updated_at: NOW },
      },
    ]);
    expect(rows.clusters).toEqual([
      expect.objectContaining({
        ...{ id: 'cluster1', repo: REPO, label: 'Eviction races with writes', action: 'none', size: 1 },
        ...{ exemplar_body: 'Eviction races with writes: why it matters.', exemplar_category: 'concurrency' },
        ...{ feedback_up: 1, feedback_down: 0, feedback_dismissed: 0, revision: 1 },
      }),
    ]);
    expect(rows).toEqual(await nodeRows());

    // The loop again: nothing grew, nothing is read past the listing and no second row is written.
    const again = await passes();
    expect(again.native).toMatchObject({ reactions: 0, errors: [] });
    expect(again.calls.filter((c) => c.includes('/reactions'))).toEqual([]);
    expect((await nativeRows()).feedback).toHaveLength(1);
  }, 60_000);

  it('a 👎 dismisses the finding once; bots and other reactions are not feedback; a read again counts nothing', async () => {
    onGitHub.set(700, [
      { id: 31, content: '+1', login: 'alice' },
      { id: 32, content: '-1', login: 'bob' },
      { id: 33, content: 'heart', login: 'carol' },
      { id: 34, content: '+1', login: 'ci[bot]', type: 'Bot' },
    ]);
    onGitHub.set(701, [
      { id: 41, content: '-1', login: 'bob' },
      { id: 42, content: '-1', login: 'carol' },
    ]);
    const grown = await passes();
    expect(grown.native).toMatchObject({ reactions: 3, errors: [] });
    expect(grown.node).toMatchObject({ reactions: 3, errors: [] });
    const rows = await nativeRows();
    expect(rows.feedback.map((f: any) => [f.event_key, f.kind, f.down, f.dismissed, f.cluster_id])).toEqual([
      ['reaction:31', 'up', 0, 0, 'cluster1'],
      // The newest comment first (701, then 700), as the store reads them.
      ['reaction:41', 'down', 1, 1, 'cluster2'],
      ['reaction:42', 'down', 1, 0, 'cluster2'], // the finding was dismissed already
      ['reaction:32', 'down', 1, 1, 'cluster1'],
    ]);
    expect(
      rows.clusters.map((c: any) => [c.label, c.size, c.feedback_down, c.feedback_dismissed, c.revision]),
    ).toEqual([
      ['Eviction races with writes', 1, 1, 1, 2],
      ['Hits are never revalidated', 1, 2, 1, 2],
    ]);
    expect(rows).toEqual(await nodeRows());

    // The bot's 👍 keeps 700's roll-up above the count: read again, nothing new is written.
    const reread = await passes();
    expect(reread.native).toMatchObject({ reactions: 0, errors: [] });
    expect(reread.calls).toContain(`GET /repos/${REPO}/pulls/comments/700/reactions?per_page=100`);
    expect(await nativeRows()).toEqual(rows);
  }, 60_000);

  it('waits while a review of the repository is running (its flush writes the same tables)', async () => {
    onGitHub.set(701, [...onGitHub.get(701)!, { id: 43, content: '+1', login: 'dave' }]);
    const db = await h.d1();
    await db
      .prepare(
        `INSERT INTO native_runs (id, review_key, repo, pr_number, head_sha, trigger, status, created_at, updated_at)
         VALUES ('live', 'k-live', ?, 9, ?, 'opened', 'running', ?, ?)`,
      )
      .bind(REPO, HEAD, new Date(NOW - 60_000).toISOString(), new Date(NOW - 60_000).toISOString())
      .run();
    const waiting = await passes();
    expect(waiting.native).toMatchObject({ reactions: 0, reactionsWaiting: [REPO], errors: [] });
    expect(waiting.calls.filter((c) => c.includes('/pulls/7/'))).toEqual([]);

    await db.prepare("UPDATE native_runs SET status = 'completed' WHERE id = 'live'").run();
    const after = await passes();
    expect(after.native).toMatchObject({ reactions: 1, reactionsWaiting: [] });
    expect(await nativeRows()).toEqual(await nodeRows());
  }, 60_000);
});
