import nock from 'nock';
import { pino } from 'pino';
import { ProbotOctokit } from 'probot';
import type { GitHubClient } from '../../src/github/client.js';
import { runCatchUp, type CatchUpGitHub, type OpenPullRequest } from '../../src/scheduler/catch-up.js';
import { requestReview } from '../../src/review/request.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

/**
 * `pr-agent-loop` reads the reactions on Verdict's line comments (NAMES.md "Feedback and learning"): one
 * listing of an open PR's review comments (`GET /repos/{o}/{r}/pulls/{n}/comments`), then
 * `GET /repos/{o}/{r}/pulls/comments/{id}/reactions` only for Verdict's comments whose 👍/👎 roll-up grew;
 * 👍 counts up, 👎 down and dismissed, each stored once (its reaction id) and folded into a cluster.
 * GitHub is nock'd with bodies shaped like its API.
 */
const API = 'https://api.github.com';
const REPO = 'acme/web';
const HEAD = 'a'.repeat(40);
const silent = pino({ level: 'silent' });

const gh = new ProbotOctokit({
  auth: { token: 'ghs_test' },
  throttle: { enabled: false },
  retry: { enabled: false },
}) as unknown as GitHubClient;

/** A review comment as `GET /repos/{o}/{r}/pulls/{n}/comments` lists it, with its reaction roll-up. */
function listed(id: number, up: number, down: number, login = 'verdict-app[bot]') {
  return {
    id,
    node_id: `PRRC_${id}`,
    pull_request_review_id: 5555,
    path: 'src/cache.ts',
    line: 2,
    body: '**🟠 HIGH** · concurrency',
    user: { login, type: login.endsWith('[bot]') ? 'Bot' : 'User' },
    html_url: `https://github.com/${REPO}/pull/7#discussion_r${id}`,
    reactions: {
      url: `${API}/repos/${REPO}/pulls/comments/${id}/reactions`,
      total_count: up + down,
      '+1': up,
      '-1': down,
      laugh: 0,
      hooray: 0,
      confused: 0,
      heart: 0,
      rocket: 0,
      eyes: 0,
    },
  };
}

function reaction(id: number, content: string, login: string, type = 'User') {
  return {
    id,
    node_id: `REA_${id}`,
    user: { login, id: id * 10, node_id: `U_${login}`, type, site_admin: false },
    content,
    created_at: '2026-05-01T12:00:00Z',
  };
}

describe('pr-agent-loop reads reactions on line comments', () => {
  let t: TestStore;
  beforeAll(() => nock.disableNetConnect());
  afterAll(() => nock.enableNetConnect());
  beforeEach(async () => {
    t = await openTestStore('sqlite');
    const { store } = t;
    await store.repositories.upsertInstalled(REPO, 77, { actor: 'test', reason: 'installed' });
    await store.repositories.configure(REPO, { enabled: true }, { actor: 'test', reason: null });
    // The head of PR 7 was reviewed (no catch-up review), and its review posted two line comments.
    const { run } = await requestReview(store, {
      owner: 'acme',
      repo: 'web',
      number: 7,
      headSha: HEAD,
      installationId: 77,
      trigger: 'opened',
    });
    const finding = (title: string, fingerprint: string, line: number) => ({
      severity: 'high',
      category: 'concurrency',
      path: 'src/cache.ts',
      line,
      title,
      body: `${title}: why it matters.`,
      fingerprint,
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
      repo: REPO,
      prNumber: 7,
      fingerprint,
      runId: run.id,
      reviewId: '5555',
      commentId,
      commentNodeId: `PRRC_${commentId}`,
      path: 'src/cache.ts',
      line,
      url: null,
    });
    await store.reviewThreads.recordMany([thread('700', 'fp_race', 2), thread('701', 'fp_stale', 5)]);
  });
  afterEach(async () => {
    nock.cleanAll();
    await t.cleanup();
  });

  const github = (pulls: OpenPullRequest[], installation = true): CatchUpGitHub => ({
    deliveries: async () => [],
    redeliver: async () => undefined,
    openPullRequests: async () => pulls,
    ...(installation ? { installation: async () => gh } : {}),
  });
  const open: OpenPullRequest = {
    number: 7,
    headSha: HEAD,
    baseRef: 'main',
    headRef: 'feature/cache',
    title: 'Add a cache',
    author: 'alice',
    draft: false,
  };
  const pass = (g: CatchUpGitHub) => runCatchUp({ store: t.store, github: g, clock: t.clock, log: silent });

  test('reads only the comments whose roll-up grew; each reaction counts once, folded into a cluster', async () => {
    const scope = nock(API)
      .get(`/repos/${REPO}/pulls/7/comments`)
      .query({ per_page: 100 })
      .reply(200, [listed(700, 1, 1), listed(701, 0, 0), listed(800, 3, 0, 'alice')])
      .get(`/repos/${REPO}/pulls/comments/700/reactions`)
      .query({ per_page: 100 })
      .reply(200, [reaction(31, '+1', 'alice'), reaction(32, '-1', 'bob'), reaction(33, 'heart', 'carol')]);
    const first = await pass(github([open]));
    expect(scope.pendingMocks()).toEqual([]);
    expect(first).toMatchObject({ enqueued: [], errors: [], reactions: 2 });
    const events = (await t.store.feedback.forComment('700')).map((e) => [e.key, e.kind, e.counts]);
    expect(events).toEqual([
      ['reaction:31', 'up', { up: 1, down: 0, dismissed: 0, addressed: 0 }],
      ['reaction:32', 'down', { up: 0, down: 1, dismissed: 1, addressed: 0 }],
    ]);
    const [cluster] = await t.store.memory.listClusters({ repo: REPO, limit: 10 });
    expect(cluster).toMatchObject({
      size: 1,
      exemplar: { title: 'Eviction races with writes' },
      feedback: { up: 1, down: 1, dismissed: 1 },
    });

    // The next pass: nothing grew, so only the listing; then a new 👎 on 701 (and a bot's 👍 on 700).
    const quiet = nock(API)
      .get(`/repos/${REPO}/pulls/7/comments`)
      .query({ per_page: 100 })
      .reply(200, [listed(700, 1, 1), listed(701, 0, 0)]);
    expect(await pass(github([open]))).toMatchObject({ reactions: 0, errors: [] });
    expect(quiet.pendingMocks()).toEqual([]);
    const grown = nock(API)
      .get(`/repos/${REPO}/pulls/7/comments`)
      .query({ per_page: 100 })
      .reply(200, [listed(700, 2, 1), listed(701, 0, 1)])
      .get(`/repos/${REPO}/pulls/comments/700/reactions`)
      .query({ per_page: 100 })
      .reply(200, [
        reaction(31, '+1', 'alice'),
        reaction(32, '-1', 'bob'),
        reaction(34, '+1', 'ci[bot]', 'Bot'),
      ])
      .get(`/repos/${REPO}/pulls/comments/701/reactions`)
      .query({ per_page: 100 })
      .reply(200, [reaction(41, '-1', 'bob')]);
    expect(await pass(github([open]))).toMatchObject({ reactions: 1, errors: [] });
    expect(grown.pendingMocks()).toEqual([]);
    expect((await t.store.feedback.forComment('701')).map((e) => e.key)).toEqual(['reaction:41']);
    expect(await t.store.feedback.dismissedOnPr(REPO, 7)).toEqual(new Set(['fp_race', 'fp_stale']));
  });

  test('a failing listing is an error of the pass; no installation client or no line comment: no read', async () => {
    nock(API)
      .get(`/repos/${REPO}/pulls/7/comments`)
      .query(true)
      .reply(403, { message: 'Resource not accessible' });
    const failed = await pass(github([open]));
    expect(failed.errors).toEqual([
      expect.stringMatching(/^reading the reactions on acme\/web#7 failed: Resource not accessible/),
    ]);
    expect(failed.reactions).toBe(0);
    // Without the installation's client the step does not run (and calls nothing).
    expect(await pass(github([open], false))).not.toHaveProperty('reactions');
    // A PR without Verdict's line comments is not listed.
    expect(await pass(github([{ ...open, number: 9, headSha: 'b'.repeat(40) }]))).toMatchObject({
      reactions: 0,
    });
  });
});
