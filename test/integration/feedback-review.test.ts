import nock from 'nock';
import {
  API,
  BASE_ENV,
  COMPARE_AHEAD,
  HEAD,
  HEAD2,
  READ,
  REPO,
  github,
  modelAnswer,
  pull,
  reviewHarness,
} from '../helpers/review-harness.js';
import { eventually, example, postWebhook } from '../helpers/webhooks.js';

/**
 * Feedback read when a pull request is reviewed again (NAMES.md "Feedback and learning"), through the real
 * server and review worker in live mode: a first review posts two line comments (threads 700 and 701);
 * a person resolves thread 701 without changing its lines; people react to comment 700; then a push is
 * reviewed: before the analysis the reactions are read (`GET .../pulls/comments/{id}/reactions`) and the
 * resolution is settled (`GET .../pulls/comments/701`), after it the accepted disposition that resolves
 * the first finding counts `addressed`. GitHub and the model are nock'd with real-shaped bodies.
 */
const CACHE_TS = [
  'export function evict(key) {',
  '  store.delete(key);',
  '}',
  'export function get(key) {',
  '  const hit = store.get(key);',
  '  return hit;',
  '}',
];
const patchOf = (lines: string[]) => `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}`;
const FILES = [
  {
    filename: 'src/cache.ts',
    status: 'added',
    additions: 7,
    deletions: 0,
    changes: 7,
    patch: patchOf(CACHE_TS),
  },
];
const CACHE_TS_2 = [CACHE_TS[0]!, '  if (expired(key)) store.delete(key);', ...CACHE_TS.slice(2)];
const FILES_2 = [{ ...FILES[0]!, patch: patchOf(CACHE_TS_2) }];
const finding = (over: Record<string, unknown>) => ({
  severity: 'medium',
  category: 'correctness',
  path: 'src/cache.ts',
  body: 'Why it matters.',
  contextIds: [],
  ...over,
});
const RACE = finding({
  severity: 'high',
  category: 'concurrency',
  title: 'Eviction races with writes',
  line: 2,
});
const STALE = finding({ title: 'Hits are never revalidated', line: 5, endLine: 6 });

/** The review comments GitHub lists for a review, built from what was posted (ids from `firstId`). */
function listedComments(posted: any[], reviewId: number, firstId: number) {
  return posted.map((c, i) => ({
    id: firstId + i,
    node_id: `PRRC_${firstId + i}`,
    pull_request_review_id: reviewId,
    path: c.path,
    line: c.line,
    original_line: c.line,
    side: 'RIGHT',
    body: c.body,
    html_url: `https://github.com/${REPO}/pull/7#discussion_r${firstId + i}`,
  }));
}

/** A reaction as `GET /repos/{o}/{r}/pulls/comments/{id}/reactions` lists it. */
function reaction(id: number, content: string, login: string, type = 'User') {
  return {
    id,
    node_id: `REA_${id}`,
    user: { login, id: id * 10, node_id: `U_${login}`, type, site_admin: false },
    content,
    created_at: '2026-05-01T12:00:00Z',
  };
}

/** A review comment as `GET /repos/{o}/{r}/pulls/comments/{id}` returns it at the PR's current head. */
function reviewComment(id: number, line: number | null) {
  return {
    id,
    node_id: `PRRC_${id}`,
    pull_request_review_id: 5555,
    path: 'src/cache.ts',
    position: line,
    original_position: 5,
    line,
    original_line: 5,
    commit_id: HEAD2,
    original_commit_id: HEAD,
    side: 'RIGHT',
    body: '**🟡 MEDIUM** · correctness',
    user: { login: 'verdict-app[bot]', type: 'Bot' },
    html_url: `https://github.com/${REPO}/pull/7#discussion_r${id}`,
  };
}

describe('feedback read when a pull request is reviewed again', () => {
  const h = reviewHarness({ ...BASE_ENV, VERDICT_PUBLISH_MODE: 'live' });
  const { start, reviewRun } = h;

  async function firstReview() {
    const store = await start();
    const captured: Record<string, any> = {};
    const scope = github(pull({ changed_files: 1 }), FILES)
      .post(`/repos/${REPO}/check-runs`)
      .reply(201, { id: 9001 })
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: 1 }))
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.review = b), true))
      .reply(200, { id: 5555, node_id: 'PRR_first' })
      .get(`/repos/${REPO}/pulls/7/reviews/5555/comments`)
      .query(true)
      .reply(200, () => listedComments(captured.review.comments, 5555, 700))
      .patch(`/repos/${REPO}/check-runs/9001`)
      .reply(200, { id: 9001 });
    modelAnswer({ findings: [RACE, STALE] });
    const first = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect((await store.reviewThreads.listForPr(REPO, 7)).map((t) => t.commentId)).toEqual(['700', '701']);
    const [race, stale] = await store.findings.listForRun(first.id);
    return { store, first, race: race!, stale: stale! };
  }

  /** A person resolves thread 701 at HEAD without changing its lines (pull_request_review_thread.resolved). */
  async function resolve701() {
    const payload = example('pull_request_review_thread', 'resolved');
    payload.repository.full_name = REPO;
    payload.repository.name = 'web';
    payload.repository.owner.login = 'acme';
    payload.pull_request.number = 7;
    payload.pull_request.head.sha = HEAD;
    payload.thread.node_id = 'PRRT_stale';
    payload.thread.comments[0].id = 701;
    payload.thread.comments[0].line = 5;
    payload.thread.comments[0].position = 5;
    payload.sender.login = 'alice';
    payload.installation = { id: 77 };
    const res = await postWebhook(h.app.baseUrl, 'pull_request_review_thread', payload);
    expect(res.status).toBe(202);
    const delivery = await eventually(async () => {
      const d = await h.app.verdict.store.deliveries.get(res.deliveryId);
      return d && d.status !== 'queued' ? d : null;
    });
    expect(delivery.outcome).toBe('resolution_pending');
  }

  test('reactions and a resolution are read before the analysis; an accepted disposition counts addressed', async () => {
    const { store, first, race, stale } = await firstReview();
    await resolve701();

    const captured: Record<string, any> = {};
    const pr2 = pull({ changed_files: 1, head: { sha: HEAD2, ref: 'feature/cache' } });
    const scope = nock(API)
      .get(`/repos/${REPO}/pulls/7`)
      .times(2)
      .reply(200, pr2)
      .get(`/repos/${REPO}/pulls/7/files`)
      .query(true)
      .reply(200, FILES_2)
      .post(`/repos/${REPO}/check-runs`, (b) => b.head_sha === HEAD2)
      .reply(201, { id: 9002 })
      .get(`/repos/${REPO}/compare/${HEAD}...${HEAD2}`)
      .query(true)
      .reply(200, COMPARE_AHEAD)
      // Feedback: the reactions on both line comments (the newest first), then thread 701 at the new head.
      .get(`/repos/${REPO}/pulls/comments/701/reactions`)
      .query({ per_page: 100 })
      .reply(200, [])
      .get(`/repos/${REPO}/pulls/comments/700/reactions`)
      .query({ per_page: 100 })
      .reply(200, [
        reaction(31, '+1', 'alice'),
        reaction(32, '-1', 'bob'),
        reaction(33, '+1', 'dependabot[bot]', 'Bot'),
        reaction(34, 'heart', 'carol'),
      ])
      .get(`/repos/${REPO}/pulls/comments/701`)
      .reply(200, reviewComment(701, 5))
      // The disposition's evidence, the review, its comments, the reply and resolution of thread 700.
      .get(`/repos/${REPO}/contents/src%2Fcache.ts`)
      .query({ ref: HEAD2 })
      .reply(200, CACHE_TS_2.join('\n'))
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.review = b), b.commit_id === HEAD2))
      .reply(200, { id: 6666, node_id: 'PRR_second' })
      .get(`/repos/${REPO}/pulls/7/reviews/6666/comments`)
      .query(true)
      .reply(200, () => listedComments(captured.review.comments, 6666, 900))
      .post(`/repos/${REPO}/pulls/7/comments/700/replies`)
      .reply(201, { id: 990, in_reply_to_id: 700 })
      .post('/graphql', (b) => /reviewThreads\(first: 100/.test(b.query))
      .reply(200, {
        data: {
          repository: {
            pullRequest: {
              reviewThreads: {
                pageInfo: { hasNextPage: false, endCursor: null },
                nodes: [
                  { id: 'PRRT_race', isResolved: false, comments: { nodes: [{ databaseId: 700 }] } },
                  { id: 'PRRT_stale', isResolved: true, comments: { nodes: [{ databaseId: 701 }] } },
                ],
              },
            },
          },
        },
      })
      .post('/graphql', (b) => /resolveReviewThread/.test(b.query))
      .reply(200, { data: { resolveReviewThread: { thread: { id: 'PRRT_race', isResolved: true } } } })
      .post('/graphql', (b) => /minimizeComment/.test(b.query))
      .reply(200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } })
      .patch(`/repos/${REPO}/check-runs/9002`)
      .reply(200, { id: 9002 });
    modelAnswer({
      findings: [{ ...STALE }, finding({ severity: 'high', title: 'expired() is not imported', line: 2 })],
      priorFindingDispositions: [
        {
          priorReviewKey: first.reviewKey,
          fingerprint: race.fingerprint,
          disposition: 'resolved',
          explanation: 'evict() now checks expiry first',
          evidence: [{ headSha: HEAD2, path: 'src/cache.ts', quote: 'if (expired(key)) store.delete(key);' }],
        },
      ],
    });
    const run = await reviewRun(HEAD2, 'synchronize');
    expect(scope.pendingMocks()).toEqual([]);
    expect(run).toMatchObject({ analysisStatus: 'analysed', publishStatus: 'published' });

    // The first finding: a 👍 (alice) and a 👎 (bob) counted; the bot's 👍 and the ❤️ are not feedback;
    // then addressed by the accepted disposition. The second: dismissed (resolved, lines unchanged).
    const events = async (commentId: string) =>
      (await store.feedback.forComment(commentId)).map((e) => [e.key, e.kind, e.status, e.counts]);
    expect(await events('700')).toEqual([
      ['reaction:31', 'up', 'counted', { up: 1, down: 0, dismissed: 0, addressed: 0 }],
      ['reaction:32', 'down', 'counted', { up: 0, down: 1, dismissed: 1, addressed: 0 }],
      ['addressed:700', 'addressed', 'counted', { up: 0, down: 0, dismissed: 0, addressed: 1 }],
    ]);
    expect(await events('701')).toEqual([
      ['thread:PRRT_stale:resolved', 'resolved', 'counted', { up: 0, down: 0, dismissed: 1, addressed: 0 }],
    ]);
    const clusters = await store.memory.listClusters({ repo: REPO, limit: 10 });
    const of = (title: string) => clusters.find((c) => c.exemplar.title === title);
    expect(of(race.title)).toMatchObject({
      action: 'none',
      size: 1,
      exemplar: { category: 'concurrency', path: 'src/cache.ts' },
      feedback: { up: 1, down: 1, dismissed: 1, addressed: 1 },
    });
    expect(of(stale.title)).toMatchObject({
      size: 1,
      feedback: { up: 0, down: 0, dismissed: 1, addressed: 0 },
    });
    expect(await store.feedback.pendingForPr(REPO, 7)).toEqual([]);

    // The review's trace has the feedback spans.
    const spans = (await h.spansOf(run)).spans.map((s) => [s.name, s.status]);
    expect(spans).toContainEqual(['feedback', 'ok']);
    expect(spans).toContainEqual(['feedback-addressed', 'ok']);

    // Analytics: three line comments posted (700, 701, then 900), one addressed, one dismissed finding
    // each way, one 👍 and one 👎.
    const res = await fetch(`${h.app.baseUrl}/operator/api/analytics`, { headers: READ });
    const { analytics } = (await res.json()) as any;
    expect(analytics.feedback).toEqual({
      posted: 3,
      addressed: 1,
      dismissed: 2,
      up: 1,
      down: 1,
      addressedRate: 1 / 3,
    });
    expect(analytics.repositories).toEqual([{ repo: REPO, feedback: analytics.feedback }]);
  });
});
