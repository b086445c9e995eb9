import nock from 'nock';
import { requestReview } from '../../src/review/request.js';
import { findingFingerprint } from '../../src/review/fingerprint.js';
import { REWORDED } from '../helpers/alike-pairs.js';
import {
  API,
  BASE_ENV,
  HEAD,
  HEAD2,
  NAME,
  OWNER,
  REPO,
  github,
  modelAnswer,
  pull,
  reviewHarness,
} from '../helpers/review-harness.js';
import { eventually, example, postWebhook } from '../helpers/webhooks.js';

/**
 * Learning that changes what is posted (NAMES.md "Memory", "Suppression"; docs/memory.md), through the
 * real server, webhooks lane and review worker in live mode, GitHub and the model nock'd:
 *
 * 1. PR 7 is reviewed: two line comments on rates/client.go, a leaked response body (thread 700) and a
 *    backoff that ignores cancellation (thread 701), as a review model recorded them.
 * 2. A person answers thread 701 with `@verdict ignore`: the finding is dismissed on PR 7 and joins a
 *    cluster of the repository whose action is `suppress`.
 * 3. A push to PR 7 is reviewed; the model words both findings again (real rewordings): the leak, its
 *    anchor followed ten lines down through the compare, keeps thread 700 (no second thread); the backoff,
 *    like the finding dismissed there, is withheld (`suppressed`, counted in the body, never posted).
 * 4. PR 8 of the same repository raises the backoff issue again in other words: withheld by the cluster,
 *    which grows by one.
 */
const PATH = 'rates/client.go';
/** A Go file of 90 lines; the leak is at lines 76-78 and the sleep at 60-63 (as the recorded answer says). */
const CLIENT_GO = Array.from({ length: 90 }, (_v, i) => `\t// rates client, line ${i + 1}`);
const patchOf = (lines: string[]) => `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}`;
const fileOf = (lines: string[], path = PATH) => ({
  filename: path,
  status: 'added',
  additions: lines.length,
  deletions: 0,
  changes: lines.length,
  patch: patchOf(lines),
});
/** The push adds a package comment of ten lines at the top: every line moves ten down. */
const HEADER = Array.from({ length: 10 }, (_v, i) => `// Package rates reads FX rates (${i + 1}).`);
const CLIENT_GO_2 = [...HEADER, ...CLIENT_GO];
const COMPARE = {
  status: 'ahead',
  ahead_by: 1,
  behind_by: 0,
  files: [
    {
      filename: PATH,
      status: 'modified',
      additions: 10,
      deletions: 0,
      changes: 10,
      patch: `@@ -0,0 +1,10 @@\n${HEADER.map((l) => `+${l}`).join('\n')}`,
    },
  ],
};

const LEAK = REWORDED.find((p) => p.label === 'go-pricing-fxrates-retry')!;
const SLEEP = REWORDED.find((p) => p.label === 'go-pricing-fxrates-retry (backoff)')!;
const finding = (
  text: { title: string; body: string },
  over: { line: number; endLine: number; category: string; path?: string },
) => ({
  severity: 'medium',
  path: PATH,
  contextIds: [],
  title: text.title,
  body: text.body,
  ...over,
});
const LEAK_1 = finding(LEAK.a, { line: 76, endLine: 78, category: 'resource-leak' });
const SLEEP_1 = finding(SLEEP.a, { line: 60, endLine: 63, category: 'robustness' });
// The model's words on the next push: other titles, other bodies, another category for the leak; the
// leak's anchor one line below where the compare puts the old one (86-88), farther than the tolerance
// from the old line numbers.
const LEAK_2 = finding(LEAK.b, { line: 87, endLine: 89, category: 'reliability' });
const SLEEP_2 = finding(SLEEP.b, { line: 71, endLine: 74, category: 'robustness' });

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

describe('learning that changes what is posted', () => {
  const h = reviewHarness({ ...BASE_ENV, VERDICT_PUBLISH_MODE: 'live' });

  /** pull_request_review_comment.created: `@verdict ignore` in reply to comment 701 on PR 7. */
  async function ignore701() {
    const payload = example('pull_request_review_comment', 'created');
    payload.repository.full_name = REPO;
    payload.repository.name = NAME;
    payload.repository.owner.login = OWNER;
    payload.pull_request.number = 7;
    payload.comment.id = 9001;
    payload.comment.in_reply_to_id = 701;
    payload.comment.body = '@verdict ignore, we retry on a short deadline anyway';
    payload.comment.path = PATH;
    payload.comment.author_association = 'MEMBER';
    payload.comment.user.login = 'mona';
    payload.installation = { id: 77 };
    const res = await postWebhook(h.app.baseUrl, 'pull_request_review_comment', payload);
    expect(res.status).toBe(202);
    return eventually(async () => {
      const d = await h.app.verdict.store.deliveries.get(res.deliveryId);
      return d && d.status !== 'queued' ? d : null;
    });
  }

  async function reviewPr8() {
    const store = h.app.verdict.store;
    const pr8 = pull({ number: 8, changed_files: 1, head: { sha: 'c'.repeat(40), ref: 'feature/deadline' } });
    const captured: Record<string, any> = {};
    const scope = nock(API)
      .get(`/repos/${REPO}/pulls/8`)
      .times(2)
      .reply(200, pr8)
      .get(`/repos/${REPO}/pulls/8/files`)
      .query(true)
      .reply(200, [fileOf(CLIENT_GO, 'rates/deadline.go')])
      .post(`/repos/${REPO}/check-runs`)
      .reply(201, { id: 9003 })
      .post(`/repos/${REPO}/pulls/8/reviews`, (b) => ((captured.review = b), true))
      .reply(200, { id: 7777, node_id: 'PRR_pr8' })
      .patch(`/repos/${REPO}/check-runs/9003`)
      .reply(200, { id: 9003 });
    modelAnswer({ findings: [{ ...SLEEP_2, path: 'rates/deadline.go' }] });
    const request = { owner: OWNER, repo: NAME, number: 8, headSha: 'c'.repeat(40), installationId: 77 };
    const { run } = await requestReview(store, { ...request, trigger: 'opened' });
    h.app.verdict.reviewWorker!.kick();
    const done = await eventually(async () => {
      const r = await store.runs.get(run.id);
      return r && r.publishStatus !== null && !['queued', 'running'].includes(r.status) ? r : null;
    }, 20_000);
    expect(scope.pendingMocks()).toEqual([]);
    return { run: done, review: captured.review };
  }

  test('a dismissed finding is withheld on the next PR and never re-posted on its own; a reworded one keeps its thread', async () => {
    const store = await h.start();

    // 1. The first review: two line comments (700: the leak, 701: the sleep).
    const captured: Record<string, any> = {};
    const first = github(pull({ changed_files: 1 }), [fileOf(CLIENT_GO)])
      .post(`/repos/${REPO}/check-runs`)
      .reply(201, { id: 9001 })
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: 1 }))
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.first = b), true))
      .reply(200, { id: 5555, node_id: 'PRR_first' })
      .get(`/repos/${REPO}/pulls/7/reviews/5555/comments`)
      .query(true)
      .reply(200, () => listedComments(captured.first.comments, 5555, 700))
      .patch(`/repos/${REPO}/check-runs/9001`)
      .reply(200, { id: 9001 });
    modelAnswer({ findings: [LEAK_1, SLEEP_1] });
    const run1 = await h.reviewRun();
    expect(first.pendingMocks()).toEqual([]);
    expect(run1.publishStatus).toBe('published');
    expect(captured.first.comments.map((c: any) => [c.start_line, c.line])).toEqual([
      [76, 78],
      [60, 63],
    ]);
    const threads = await store.reviewThreads.listForPr(REPO, 7);
    expect(threads.map((t) => t.commentId)).toEqual(['700', '701']);

    // 2. `@verdict ignore` on the sleep's thread (the webhook handler may fetch its own token).
    nock(API)
      .persist()
      .post('/app/installations/77/access_tokens')
      .optionally()
      .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' });
    const replies = nock(API)
      .get(/\/repos\/acme\/web\/contents\/.github%2Fverdict.yml/)
      .optionally()
      .reply(404, { message: 'Not Found' })
      .get(/\/repos\/acme\/.github\/contents\/.github%2Fverdict.yml/)
      .optionally()
      .reply(404, { message: 'Not Found' })
      .post(`/repos/${REPO}/pulls/7/comments/701/replies`)
      .reply(201, { id: 990, in_reply_to_id: 701, body: 'Ignored.' });
    expect(await ignore701()).toMatchObject({ status: 'processed', outcome: 'finding_ignored' });
    expect(replies.pendingMocks()).toEqual([]);
    const [cluster] = await store.memory.listClusters({ repo: REPO, limit: 10 });
    expect(cluster).toMatchObject({
      action: 'suppress',
      size: 1,
      exemplar: { title: SLEEP.a.title },
      feedback: { dismissed: 1 },
    });

    // 3. A push to PR 7; the model words both findings again.
    const pr2 = pull({ changed_files: 1, head: { sha: HEAD2, ref: 'feature/cache' } });
    const second = nock(API)
      .get(`/repos/${REPO}/pulls/7`)
      .times(2)
      .reply(200, pr2)
      .get(`/repos/${REPO}/pulls/7/files`)
      .query(true)
      .reply(200, [fileOf(CLIENT_GO_2)])
      .post(`/repos/${REPO}/check-runs`, (b) => b.head_sha === HEAD2)
      .reply(201, { id: 9002 })
      .get(`/repos/${REPO}/compare/${HEAD}...${HEAD2}`)
      .query(true)
      .reply(200, COMPARE)
      .get(`/repos/${REPO}/pulls/comments/701/reactions`)
      .query(true)
      .reply(200, [])
      .get(`/repos/${REPO}/pulls/comments/700/reactions`)
      .query(true)
      .reply(200, [])
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.second = b), b.commit_id === HEAD2))
      .reply(200, { id: 6666, node_id: 'PRR_second' })
      .post('/graphql', (b) => /minimizeComment/.test(b.query))
      .reply(200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } })
      .patch(`/repos/${REPO}/check-runs/9002`)
      .reply(200, { id: 9002 });
    modelAnswer({ findings: [LEAK_2, SLEEP_2] });
    const run2 = await h.reviewRun(HEAD2, 'synchronize');
    expect(second.pendingMocks()).toEqual([]);
    expect(run2).toMatchObject({ analysisStatus: 'analysed', publishStatus: 'published' });
    // No line comment at all: the leak keeps thread 700, the sleep is withheld.
    expect(captured.second.comments).toBeUndefined();
    expect(captured.second.body).toContain('### Still open (1)');
    expect(captured.second.body).toContain(`${LEAK.a.title}`);
    expect(captured.second.body).toContain(`([thread](https://github.com/${REPO}/pull/7#discussion_r700))`);
    expect(captured.second.body).toContain('_1 finding withheld: reviewers dismissed similar ones._');
    expect(captured.second.body).not.toContain(SLEEP.b.title);
    const all2 = await store.findings.listForRun(run2.id, { include: 'all' });
    expect(all2.map((f) => [f.title, f.status, f.stillOpen, f.line])).toEqual([
      [LEAK.a.title, 'published', true, 87],
      [SLEEP.a.title, 'suppressed', true, 71],
    ]);
    expect(all2[0]!.body).toBe(LEAK.b.body);
    expect(all2[0]!.fingerprint).toBe(threads[0]!.fingerprint);
    expect(all2[1]!.statusReason).toBe(`like a finding dismissed on this pull request: "${SLEEP.a.title}"`);
    expect(run2.result).toMatchObject({
      recall: {
        continued: [
          { fingerprint: threads[0]!.fingerprint, title: LEAK.b.title, priorTitle: LEAK.a.title },
          { fingerprint: threads[1]!.fingerprint, title: SLEEP.b.title, priorTitle: SLEEP.a.title },
        ],
        suppressed: [{ title: SLEEP.a.title, reason: 'dismissed', clusterId: null, line: 71 }],
      },
    });
    expect(await store.reviewThreads.listForPr(REPO, 7)).toHaveLength(2);
    // What the model reviews next time: the leak still open, not the dismissed sleep.
    expect((run2.result as any).priorFindings.carriedOpen).toEqual([]);
    expect((await store.suppression.withheldForRun(run2.id)).map((w) => w.reason)).toEqual(['dismissed']);

    // 4. The next pull request of the repository raises the sleep again, in other words.
    const pr8 = await reviewPr8();
    expect(pr8.run).toMatchObject({ analysisStatus: 'analysed', publishStatus: 'published' });
    expect(pr8.review.comments).toBeUndefined();
    expect(pr8.review.body).toContain('_1 finding withheld: reviewers dismissed similar ones._');
    expect(pr8.review.body).toContain('### Findings (0)');
    const all8 = await store.findings.listForRun(pr8.run.id, { include: 'all' });
    expect(all8.map((f) => [f.title, f.status])).toEqual([[SLEEP.b.title, 'suppressed']]);
    expect(all8[0]!.fingerprint).toBe(
      findingFingerprint({ path: 'rates/deadline.go', category: 'robustness', title: SLEEP.b.title }),
    );
    expect(all8[0]!.statusReason).toContain(`like memory cluster ${cluster!.id}`);
    expect(await store.memory.getCluster(cluster!.id)).toMatchObject({ size: 2, action: 'suppress' });
    expect(await store.findings.listForRun(pr8.run.id)).toEqual([]);
  });
});
