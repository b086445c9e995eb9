import nock from 'nock';
import { retryPublish } from '../../src/publish/review-publisher.js';
import { reviewPublisherFor } from '../../src/compose/parts.js';
import type { GitHubClient } from '../../src/github/client.js';
import {
  API,
  BASE_ENV,
  COMPARE_AHEAD,
  HEAD,
  HEAD2,
  OPENAI,
  READ,
  REPO,
  completion,
  github,
  modelAnswer,
  pull,
  review,
  reviewHarness,
} from '../helpers/review-harness.js';

/**
 * Line comments, committable suggestions, incremental reviews and thread lifecycle (issue: reviews that
 * live in the code), through the real server and worker in live mode. GitHub and the model are nock'd
 * with bodies shaped like their real APIs; every expected call must happen (`pendingMocks()` empty) and
 * nock refuses any other.
 */
const CACHE_TS = [
  'export function evict(key) {',
  '  store.delete(key);',
  '}',
  'export function get(key) {',
  '  const hit = store.get(key);',
  '  return hit;',
  '}',
  'export function set(key, value) {',
  '  store.set(key, value);',
  '}',
];
const PATCH = `@@ -0,0 +1,${CACHE_TS.length} @@\n${CACHE_TS.map((l) => `+${l}`).join('\n')}`;
const FILES = [
  { filename: 'src/cache.ts', status: 'added', additions: 10, deletions: 0, changes: 10, patch: PATCH },
];
/** After a push that fixes `evict`: the PR's whole diff (the compare diff is `COMPARE_AHEAD`). */
const CACHE_TS_2 = [...CACHE_TS.slice(0, 1), '  if (expired(key)) store.delete(key);', ...CACHE_TS.slice(2)];
const PATCH_2 = `@@ -0,0 +1,${CACHE_TS_2.length} @@\n${CACHE_TS_2.map((l) => `+${l}`).join('\n')}`;
const FILES_2 = [{ ...FILES[0]!, patch: PATCH_2 }];
const finding = (over: Record<string, unknown>) => ({
  severity: 'medium',
  category: 'correctness',
  path: 'src/cache.ts',
  title: 'A finding',
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
const STALE = finding({
  title: 'Hits are never revalidated',
  line: 5,
  endLine: 6,
  suggestion: '  const hit = store.get(key);\n  return hit && !expired(hit) ? hit : undefined;',
});
const SET = finding({
  severity: 'low',
  title: 'set() ignores a ttl',
  line: 9,
  suggestion: '  store.set(key, value, ttl);',
});
const UNANCHORED = finding({ title: 'No tests for the cache' });
const OFF_DIFF = finding({ title: 'Anchored off the diff', line: 40, suggestion: 'nope' });

/** A disposition closing a prior finding with evidence that exists at HEAD2 (the fixed `evict`). */
function fixedAtHead2(priorReviewKey: string, fingerprint: string, explanation: string) {
  return {
    priorReviewKey,
    fingerprint,
    disposition: 'resolved',
    explanation,
    evidence: [{ headSha: HEAD2, path: 'src/cache.ts', quote: 'if (expired(key)) store.delete(key);' }],
  };
}

const fp = (body: string) => /<!-- verdict:finding (fp_[0-9a-f]+) -->/.exec(body)![1]!;

/** The review comments GitHub lists for a review, built from what was posted (ids from 700). */
function listedComments(posted: any[], firstId = 700) {
  return posted.map((c, i) => ({
    id: firstId + i,
    node_id: `PRRC_${firstId + i}`,
    pull_request_review_id: 5555,
    path: c.path,
    line: c.line,
    original_line: c.line,
    side: 'RIGHT',
    body: c.body,
    html_url: `https://github.com/${REPO}/pull/7#discussion_r${firstId + i}`,
  }));
}

describe('line comments', () => {
  const h = reviewHarness({ ...BASE_ENV, VERDICT_PUBLISH_MODE: 'live' });
  const { start, reviewRun } = h;
  afterEach(() => nock.cleanAll());

  /** The calls of a first review up to the review itself; the caller adds what follows. */
  function firstRunReads(files = FILES) {
    return github(pull({ changed_files: files.length }), files)
      .post(`/repos/${REPO}/check-runs`)
      .reply(201, { id: 9001 })
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: files.length }));
  }

  test('a review with three line comments, one a multi-line suggestion; the rest in the body; annotations', async () => {
    const store = await start();
    const captured: Record<string, any> = {};
    const scope = firstRunReads()
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.review = b), true))
      .reply(200, { id: 5555, node_id: 'PRR_first' })
      .get(`/repos/${REPO}/pulls/7/reviews/5555/comments`)
      .query(true)
      .reply(200, () => listedComments(captured.review.comments))
      .patch(`/repos/${REPO}/check-runs/9001`, (b) => ((captured.check = b), true))
      .reply(200, { id: 9001 });
    let prompt = '';
    let system = '';
    nock(OPENAI)
      .post('/v1/chat/completions', (b: any) => {
        system = b.messages[0].content;
        prompt = b.messages.at(-1).content;
        return true;
      })
      .reply(200, completion(JSON.stringify(review({ findings: [RACE, STALE, SET, UNANCHORED, OFF_DIFF] }))));
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run).toMatchObject({ analysisStatus: 'analysed', publishStatus: 'published' });

    // The model saw numbered lines and was asked for anchors.
    expect(prompt).toContain('__new hunk__\n 1 +export function evict(key) {\n 2 +  store.delete(key);');
    expect(system).toMatch(/gets `line`, the number printed before that line/);

    const comments = captured.review.comments;
    expect(comments).toHaveLength(3);
    expect(comments[0]).toMatchObject({ path: 'src/cache.ts', line: 2, side: 'RIGHT' });
    expect(comments[0]).not.toHaveProperty('start_line');
    expect(comments[1]).toMatchObject({
      path: 'src/cache.ts',
      start_line: 5,
      start_side: 'RIGHT',
      line: 6,
      side: 'RIGHT',
    });
    expect(comments[1].body).toContain('**🟡 MEDIUM** · correctness');
    expect(comments[1].body).toContain('**Hits are never revalidated**');
    expect(comments[1].body).toContain(
      '```suggestion\n  const hit = store.get(key);\n  return hit && !expired(hit) ? hit : undefined;\n```',
    );
    expect(comments[2].body).toContain('```suggestion\n  store.set(key, value, ttl);\n```');
    // The body lists the line comments in one line each, with links to the lines at the reviewed head,
    // and keeps the unanchored findings (the one whose anchor failed among them).
    const body: string = captured.review.body;
    expect(body).toContain('### Line comments (3)');
    expect(body).toContain(
      `[Hits are never revalidated](https://github.com/${REPO}/blob/${HEAD}/src/cache.ts#L5-L6)`,
    );
    expect(body).toContain('### Findings (2)');
    expect(body).toContain('No tests for the cache');
    expect(body).toContain('Anchored off the diff');
    expect(body).not.toContain('nope');

    // Annotations on the check run, so the findings show in "Files changed".
    expect(captured.check.output.annotations).toEqual([
      expect.objectContaining({
        path: 'src/cache.ts',
        start_line: 2,
        end_line: 2,
        annotation_level: 'failure',
      }),
      expect.objectContaining({
        path: 'src/cache.ts',
        start_line: 5,
        end_line: 6,
        annotation_level: 'warning',
      }),
      expect.objectContaining({
        path: 'src/cache.ts',
        start_line: 9,
        end_line: 9,
        annotation_level: 'notice',
      }),
    ]);

    // Stored findings keep the checked anchor, the suggestion and the quoted lines; reports show `line`.
    const stored = await store.findings.listForRun(run.id);
    expect(stored.map((f) => [f.title, f.line, f.endLine, f.suggestion !== null])).toEqual([
      ['Eviction races with writes', 2, 2, false],
      ['Hits are never revalidated', 5, 6, true],
      ['set() ignores a ttl', 9, 9, true],
      ['No tests for the cache', null, null, false],
      ['Anchored off the diff', null, null, false],
    ]);
    expect(stored[1]!.lineText).toBe('  const hit = store.get(key);\n  return hit;');
    expect((run.result as any).anchors).toMatchObject({ kept: 3, removed: 1, suggestionsDropped: 1 });
    const spans = (await h.spansOf(run)).spans;
    expect(spans.find((s) => s.name === 'post-process')!.attributes).toMatchObject({
      anchorsKept: 3,
      anchorsRemoved: 1,
    });

    // The threads the comments opened are recorded with their links; the ledger keeps the comments.
    const threads = await store.reviewThreads.listForPr(REPO, 7);
    expect(threads.map((t) => [t.commentId, t.line, t.status])).toEqual([
      ['700', 2, 'open'],
      ['701', 5, 'open'],
      ['702', 9, 'open'],
    ]);
    const ledger = await store.publications.listForPr(REPO, 7);
    const posted = ledger.find((p) => p.kind === 'review')!;
    expect(posted).toMatchObject({ status: 'published', receipt: '5555', nodeId: 'PRR_first' });
    expect((posted.request as any).comments).toHaveLength(3);

    // The operator PR detail shows the line.
    const detail = (await (
      await fetch(`${h.app.baseUrl}/operator/api/pr?repo=${REPO}&number=7`, { headers: READ })
    ).json()) as any;
    expect(detail.data.findings.map((f: any) => f.line).sort()).toEqual([2, 5, 9, null, null].sort());
  });

  test('GitHub refuses one comment (422): the review is posted again without it, that finding in the body', async () => {
    const store = await start();
    const posts: any[] = [];
    const scope = firstRunReads()
      // The review with both comments is refused as a whole.
      .post(
        `/repos/${REPO}/pulls/7/reviews`,
        (b) => b.event === 'COMMENT' && b.comments?.length === 2 && (posts.push(b), true),
      )
      .reply(422, { message: 'Unprocessable Entity', errors: ['Line could not be resolved'], status: '422' })
      // Each comment alone in a pending review: the first is accepted (and deleted), the second refused.
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => b.event === undefined && b.comments[0].line === 2)
      .reply(200, { id: 801, state: 'PENDING' })
      .delete(`/repos/${REPO}/pulls/7/reviews/801`)
      .reply(200, { id: 801, state: 'PENDING' })
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => b.event === undefined && b.comments[0].line === 9)
      .reply(422, { message: 'Unprocessable Entity', errors: ['Line could not be resolved'] })
      // The review again, without the refused comment.
      .post(
        `/repos/${REPO}/pulls/7/reviews`,
        (b) => b.event === 'COMMENT' && b.comments?.length === 1 && (posts.push(b), true),
      )
      .reply(200, { id: 5556, node_id: 'PRR_second' })
      .get(`/repos/${REPO}/pulls/7/reviews/5556/comments`)
      .query(true)
      .reply(200, () => listedComments(posts[1].comments))
      .patch(`/repos/${REPO}/check-runs/9001`)
      .reply(200, { id: 9001 });
    modelAnswer({ findings: [RACE, SET] });
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run.publishStatus).toBe('published');
    expect(posts[1].comments[0]).toMatchObject({ line: 2 });
    expect(posts[1].body).toContain('### Line comments (1)');
    // The refused comment's finding is written in the body instead.
    expect(posts[1].body).toMatch(/### Findings \(1\)[\s\S]*set\(\) ignores a ttl/);
    const reviews = (await store.publications.listForPr(REPO, 7)).filter((p) => p.kind === 'review');
    expect(reviews.map((p) => [p.status, p.receipt])).toEqual([
      ['failed', null],
      ['published', '5556'],
    ]);
    expect(reviews[0]!.error).toMatch(/422/);
    expect((reviews[1]!.request as any).movedToBody).toEqual([
      expect.objectContaining({ fingerprint: fp(posts[0].comments[1].body), path: 'src/cache.ts' }),
    ]);
    expect((await store.reviewThreads.listForPr(REPO, 7)).map((t) => t.line)).toEqual([2]);
  });

  test('annotations go to the check run in batches of 50', async () => {
    await start();
    const lines = Array.from({ length: 60 }, (_, i) => `const v${i} = ${i};`);
    const patch = `@@ -0,0 +1,60 @@\n${lines.map((l) => `+${l}`).join('\n')}`;
    const files = [
      { filename: 'src/values.ts', status: 'added', additions: 60, deletions: 0, changes: 60, patch },
    ];
    const batches: any[] = [];
    const scope = firstRunReads(files)
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => b.comments.length === 60)
      .reply(200, { id: 5555, node_id: 'PRR_1' })
      .get(`/repos/${REPO}/pulls/7/reviews/5555/comments`)
      .query(true)
      .reply(200, [])
      .patch(`/repos/${REPO}/check-runs/9001`, (b) => (batches.push(b), b.status === 'completed'))
      .reply(200, { id: 9001 })
      .patch(`/repos/${REPO}/check-runs/9001`, (b) => (batches.push(b), b.status === undefined))
      .reply(200, { id: 9001 });
    const findings = lines.map((_, i) =>
      finding({ severity: 'low', title: `Magic number ${i}`, path: 'src/values.ts', line: i + 1 }),
    );
    modelAnswer({ findings });
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run.publishStatus).toBe('published');
    expect(batches.map((b) => b.output.annotations.length)).toEqual([50, 10]);
    expect(batches[1].output.annotations[0]).toMatchObject({ start_line: 51, title: 'LOW: Magic number 50' });
    expect(batches[1].output.title).toBe(batches[0].output.title);
  });

  describe('incremental reviews on push', () => {
    /** A first review at HEAD with two line comments (threads 700 and 701), its body node PRR_first. */
    async function firstReview() {
      const store = await start();
      const captured: Record<string, any> = {};
      const scope = firstRunReads()
        .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.review = b), true))
        .reply(200, { id: 5555, node_id: 'PRR_first' })
        .get(`/repos/${REPO}/pulls/7/reviews/5555/comments`)
        .query(true)
        .reply(200, () => listedComments(captured.review.comments))
        .patch(`/repos/${REPO}/check-runs/9001`)
        .reply(200, { id: 9001 });
      modelAnswer({ findings: [RACE, STALE] });
      const first = await reviewRun();
      expect(scope.pendingMocks()).toEqual([]);
      const [race, stale] = await store.findings.listForRun(first.id);
      return { store, first, race: race!, stale: stale! };
    }

    /**
     * The second run's reads: pull at HEAD2 (for the review and again for its publication), files, check
     * run, and the compare answer (none when the review does not compare).
     */
    function secondRunReads(compare: Record<string, unknown> | null = COMPARE_AHEAD) {
      // The installation token of the first run is still valid.
      const pr2 = pull({ changed_files: 1, head: { sha: HEAD2, ref: 'feature/cache' } });
      const scope = nock(API)
        .get(`/repos/${REPO}/pulls/7`)
        .times(2)
        .reply(200, pr2)
        .get(`/repos/${REPO}/pulls/7/files`)
        .query(true)
        .reply(200, FILES_2)
        .post(`/repos/${REPO}/check-runs`, (b) => b.head_sha === HEAD2)
        .reply(201, { id: 9002 });
      if (compare === null) return scope;
      return scope.get(`/repos/${REPO}/compare/${HEAD}...${HEAD2}`).query(true).reply(200, compare);
    }

    const NEW = finding({ severity: 'high', title: 'expired() is not imported', line: 2 });

    test('reviews only the change, posts only the new finding inline, resolves the fixed thread, hides the old body', async () => {
      const { store, first, race, stale } = await firstReview();
      const captured: Record<string, any> = {};
      const graphql: any[] = [];
      const scope = secondRunReads()
        // The evidence of the disposition is read at the new head.
        .get(`/repos/${REPO}/contents/src%2Fcache.ts`)
        .query({ ref: HEAD2 })
        .reply(200, CACHE_TS_2.join('\n'))
        .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.review = b), b.commit_id === HEAD2))
        .reply(200, { id: 6666, node_id: 'PRR_second' })
        .get(`/repos/${REPO}/pulls/7/reviews/6666/comments`)
        .query(true)
        .reply(200, () => listedComments(captured.review.comments, 900))
        // A reply in the fixed finding's thread, then the thread resolved and the first body hidden.
        .post(`/repos/${REPO}/pulls/7/comments/700/replies`, (b) => ((captured.reply = b), true))
        .reply(201, { id: 990, in_reply_to_id: 700 })
        .post('/graphql', (b) => (graphql.push(b), /reviewThreads\(first: 100/.test(b.query)))
        .reply(200, {
          data: {
            repository: {
              pullRequest: {
                reviewThreads: {
                  pageInfo: { hasNextPage: false, endCursor: null },
                  nodes: [
                    { id: 'PRRT_race', isResolved: false, comments: { nodes: [{ databaseId: 700 }] } },
                    { id: 'PRRT_stale', isResolved: false, comments: { nodes: [{ databaseId: 701 }] } },
                  ],
                },
              },
            },
          },
        })
        .post('/graphql', (b) => (graphql.push(b), /resolveReviewThread/.test(b.query)))
        .reply(200, { data: { resolveReviewThread: { thread: { id: 'PRRT_race', isResolved: true } } } })
        .post('/graphql', (b) => (graphql.push(b), /minimizeComment/.test(b.query)))
        .reply(200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } })
        .patch(`/repos/${REPO}/check-runs/9002`)
        .reply(200, { id: 9002 });
      let prompt = '';
      modelAnswer(
        {
          findings: [{ ...STALE }, NEW],
          priorFindingDispositions: [
            fixedAtHead2(first.reviewKey, race!.fingerprint, 'evict() now checks expiry first'),
          ],
        },
        (b) => (prompt = b.messages.at(-1).content),
      );
      const run = await reviewRun(HEAD2, 'synchronize');
      expect(scope.pendingMocks()).toEqual([]);
      expect(run).toMatchObject({ analysisStatus: 'analysed', publishStatus: 'published' });

      // The model saw the change since the reviewed head, numbered, and the PR's file list.
      expect(prompt).toContain(`## Incremental review since ${HEAD.slice(0, 12)}`);
      expect(prompt).toContain(
        '__new hunk__\n1  export function evict(key) {\n2 +  if (expired(key)) store.delete(key);',
      );
      expect(prompt).not.toContain('export function set(key, value)');
      expect(prompt).toContain(race.fingerprint);
      expect((run.result as any).review).toEqual({
        kind: 'incremental',
        reason: `1 file(s) changed since ${HEAD.slice(0, 7)}`,
        sinceSha: HEAD,
        files: 1,
      });
      // Only the new finding is posted inline; the one still open keeps its thread.
      expect(captured.review.comments).toHaveLength(1);
      expect(captured.review.comments[0].body).toContain('expired() is not imported');
      const body: string = captured.review.body;
      expect(body).toContain(`_Reviewed the file changed since ${HEAD.slice(0, 7)}_`);
      expect(body).toContain('### Still open (1)');
      expect(body).toContain(
        `Hits are never revalidated — \`src/cache.ts:5\` ([thread](https://github.com/${REPO}/pull/7#discussion_r701))`,
      );
      expect(body).toContain('### Resolved since the last review (1)');
      // The reply ends with its marker (the run and the finding), so an interrupted reply is found again.
      expect(captured.reply.body).toBe(
        `Resolved in ${HEAD2.slice(0, 7)}: evict() now checks expiry first\n\n` +
          `<!-- verdict:reply run=${run.id} finding=${race!.fingerprint} -->`,
      );
      expect(graphql[1].variables).toEqual({ threadId: 'PRRT_race' });
      expect(graphql[2].variables).toEqual({ subjectId: 'PRR_first' });
      expect(graphql[2].query).toContain('classifier: OUTDATED');

      const threads = await store.reviewThreads.listForPr(REPO, 7);
      expect(threads.map((t) => [t.commentId, t.status])).toEqual([
        ['700', 'resolved'],
        ['701', 'open'],
        ['900', 'open'],
      ]);
      expect(threads[1]!.fingerprint).toBe(stale.fingerprint);
      const ledger = (await store.publications.listForPr(REPO, 7)).filter((p) => p.runId === run.id);
      expect(ledger.map((p) => [p.kind, p.status])).toEqual([
        ['check_run', 'published'],
        ['review', 'published'],
        ['thread_reply', 'published'],
        ['thread_resolve', 'published'],
        ['minimize', 'published'],
        ['check_run', 'published'],
      ]);
    });

    test('a force push gives a full review, recorded with its reason and said in the body', async () => {
      await firstReview();
      const captured: Record<string, any> = {};
      const scope = secondRunReads({ status: 'diverged', ahead_by: 1, behind_by: 2, files: [] })
        .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.review = b), true))
        .reply(200, { id: 6666, node_id: 'PRR_second' })
        .post('/graphql', (b) => /minimizeComment/.test(b.query) && b.variables.subjectId === 'PRR_first')
        .reply(200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } })
        .patch(`/repos/${REPO}/check-runs/9002`)
        .reply(200, { id: 9002 });
      let prompt = '';
      modelAnswer({ findings: [] }, (b) => (prompt = b.messages.at(-1).content));
      const run = await reviewRun(HEAD2, 'synchronize');
      expect(scope.pendingMocks()).toEqual([]);
      const reason = `the branch was force-pushed: ${HEAD.slice(0, 7)} is not an ancestor of ${HEAD2.slice(0, 7)}`;
      expect((run.result as any).review).toMatchObject({ kind: 'full', reason, sinceSha: HEAD });
      expect(prompt).not.toContain('## Incremental review');
      expect(prompt).toContain('## Full review');
      // The whole PR diff at the new head was shown.
      expect(prompt).toContain('export function set(key, value)');
      expect(captured.review.body).toContain(`_Full review: ${reason}_`);
      // Both earlier findings are still open (not raised again, not disposed of).
      expect(captured.review.body).toContain('### Still open (2)');
    });

    test('review.incremental: false in .github/verdict.yml gives a full review without comparing', async () => {
      const { store } = await firstReview();
      await store.repositories.setStandaloneConfig(REPO, { review: { incremental: false } });
      const scope = secondRunReads(null)
        .post(`/repos/${REPO}/pulls/7/reviews`)
        .reply(200, { id: 6666, node_id: 'PRR_second' })
        .post('/graphql', (b) => /minimizeComment/.test(b.query))
        .reply(200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } })
        .patch(`/repos/${REPO}/check-runs/9002`)
        .reply(200, { id: 9002 });
      modelAnswer({ findings: [] });
      const run = await reviewRun(HEAD2, 'synchronize');
      expect(scope.pendingMocks()).toEqual([]);
      expect((run.result as any).review).toMatchObject({
        kind: 'full',
        reason: '`review.incremental` is false in `.github/verdict.yml`',
      });
    });

    test('review.hideOutdated: false leaves earlier review bodies as they are', async () => {
      const { store } = await firstReview();
      await store.repositories.setStandaloneConfig(REPO, { review: { hideOutdated: false } });
      const scope = secondRunReads()
        .post(`/repos/${REPO}/pulls/7/reviews`)
        .reply(200, { id: 6666, node_id: 'PRR_second' })
        .patch(`/repos/${REPO}/check-runs/9002`)
        .reply(200, { id: 9002 });
      modelAnswer({ findings: [] });
      const run = await reviewRun(HEAD2, 'synchronize');
      expect(scope.pendingMocks()).toEqual([]);
      expect((run.result as any).review.kind).toBe('incremental');
      const kinds = (await store.publications.listForPr(REPO, 7)).map((p) => p.kind);
      expect(kinds).not.toContain('minimize');
    });

    test('GraphQL failures are in the ledger and leave the run published', async () => {
      const { store, first, race } = await firstReview();
      const captured: Record<string, any> = {};
      const scope = secondRunReads()
        .get(`/repos/${REPO}/contents/src%2Fcache.ts`)
        .query({ ref: HEAD2 })
        .reply(200, CACHE_TS_2.join('\n'))
        .post(`/repos/${REPO}/pulls/7/reviews`, (b) => ((captured.review = b), true))
        .reply(200, { id: 6666, node_id: 'PRR_second' })
        .post(`/repos/${REPO}/pulls/7/comments/700/replies`)
        .reply(201, { id: 990 })
        // The thread lookup answers with a GraphQL error; hiding the old body fails with a 502.
        .post('/graphql', (b) => /reviewThreads/.test(b.query))
        .reply(200, {
          data: null,
          errors: [{ type: 'FORBIDDEN', message: 'Resource not accessible by integration' }],
        })
        .post('/graphql', (b) => /minimizeComment/.test(b.query))
        .reply(502, { message: 'Server Error' })
        .patch(`/repos/${REPO}/check-runs/9002`)
        .reply(200, { id: 9002 });
      modelAnswer({
        findings: [],
        priorFindingDispositions: [fixedAtHead2(first.reviewKey, race!.fingerprint, 'fixed')],
      });
      const run = await reviewRun(HEAD2, 'synchronize');
      expect(scope.pendingMocks()).toEqual([]);
      expect(run).toMatchObject({
        analysisStatus: 'analysed',
        publishStatus: 'published',
        publishError: null,
      });
      const ledger = (await store.publications.listForPr(REPO, 7)).filter((p) => p.runId === run.id);
      expect(ledger.map((p) => [p.kind, p.status])).toEqual([
        ['check_run', 'published'],
        ['review', 'published'],
        ['thread_reply', 'published'],
        ['thread_resolve', 'failed'],
        ['minimize', 'failed'],
        ['check_run', 'published'],
      ]);
      expect(ledger[3]!.error).toMatch(/no review thread holds comment 700/);
      expect(ledger[4]!.error).toMatch(/502/);
      // The thread stays open: the next review tries again.
      expect((await store.reviewThreads.listForPr(REPO, 7))[0]!.status).toBe('open');
    });

    test('retry-publish of a published run sends nothing twice: review, threads and check run are kept', async () => {
      const { store, first } = await firstReview();
      const before = await store.publications.listForPr(REPO, 7);
      // Only the pull request is read (for its head); nock refuses any other call.
      const scope = nock(API)
        .get(`/repos/${REPO}/pulls/7`)
        .reply(200, pull({ changed_files: 1 }));
      const verdict = h.app.verdict;
      const publisher = reviewPublisherFor(store, verdict.config, verdict.log);
      const github = async (id: number) => (await verdict.probot.auth(id)) as GitHubClient;
      const outcome = await retryPublish(store, publisher, github, first.id);
      expect(outcome).toMatchObject({ status: 'published', errors: [] });
      expect(scope.pendingMocks()).toEqual([]);
      expect(await store.publications.listForPr(REPO, 7)).toEqual(before);
      expect(await store.reviewThreads.listForPr(REPO, 7)).toHaveLength(2);
    });

    test('a review answered 502 is looked for by its run marker, then posted again with the same line comments', async () => {
      const store = await start();
      const posted: any[] = [];
      const scope = firstRunReads()
        .post(`/repos/${REPO}/pulls/7/reviews`, (b) => (posted.push(b), true))
        .reply(502, { message: 'Bad Gateway' })
        .patch(`/repos/${REPO}/check-runs/9001`)
        .reply(200, { id: 9001 });
      modelAnswer({ findings: [RACE, STALE] });
      const first = await reviewRun();
      expect(scope.pendingMocks()).toEqual([]);
      expect(first.publishStatus).toBe('failed');
      // GitHub holds another review of the PR, not this run's: the review is posted; the check run,
      // completed by the first attempt, is not completed twice.
      const again = nock(API)
        .get(`/repos/${REPO}/pulls/7`)
        .reply(200, pull({ changed_files: 1 }))
        .get(`/repos/${REPO}/pulls/7/reviews`)
        .query({ per_page: 100 })
        .reply(200, [{ id: 4000, node_id: 'PRR_other', state: 'COMMENTED', body: 'LGTM' }])
        .post(`/repos/${REPO}/pulls/7/reviews`, (b) => (posted.push(b), true))
        .reply(200, { id: 5557, node_id: 'PRR_retry' })
        .get(`/repos/${REPO}/pulls/7/reviews/5557/comments`)
        .query(true)
        .reply(200, () => listedComments(posted[1].comments));
      const verdict = h.app.verdict;
      const publisher = reviewPublisherFor(store, verdict.config, verdict.log);
      const github = async (id: number) => (await verdict.probot.auth(id)) as GitHubClient;
      const outcome = await retryPublish(store, publisher, github, first.id);
      expect(outcome).toMatchObject({ status: 'published', errors: [] });
      expect(again.pendingMocks()).toEqual([]);
      expect(posted[1].comments).toEqual(posted[0].comments);
      expect(posted[1].body).toBe(posted[0].body);
      const reviews = (await store.publications.listForPr(REPO, 7)).filter((p) => p.kind === 'review');
      expect(reviews.map((p) => [p.status, p.receipt, p.step])).toEqual([
        ['failed', null, 'review'],
        ['published', '5557', 'review'],
      ]);
      expect(await store.reviewThreads.listForPr(REPO, 7)).toHaveLength(2);
    });
  });
});

describe('line comments in shadow mode', () => {
  const h = reviewHarness(BASE_ENV);
  const { start, reviewRun } = h;
  afterEach(() => nock.cleanAll());

  test('shadow records the review with its comments, then the reply and resolution a fix would get', async () => {
    const store = await start();
    // Shadow mode reads GitHub but writes nothing: no check run, no review, no GraphQL.
    const first = github(pull({ changed_files: 1 }), FILES);
    modelAnswer({ findings: [RACE, STALE] });
    const run1 = await reviewRun();
    expect(first.pendingMocks()).toEqual([]);
    expect(run1.publishStatus).toBe('shadowed');
    const review1 = (await store.publications.listForPr(REPO, 7)).find((p) => p.kind === 'review')!;
    expect(review1).toMatchObject({ mode: 'shadow', status: 'shadowed', receipt: null });
    expect((review1.request as any).comments.map((c: any) => [c.line, c.start_line])).toEqual([
      [2, undefined],
      [6, 5],
    ]);
    const [race] = await store.findings.listForRun(run1.id);

    const second = nock(API)
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: 1, head: { sha: HEAD2, ref: 'feature/cache' } }))
      .get(`/repos/${REPO}/pulls/7/files`)
      .query(true)
      .reply(200, FILES_2)
      .get(`/repos/${REPO}/compare/${HEAD}...${HEAD2}`)
      .query(true)
      .reply(200, COMPARE_AHEAD)
      .get(`/repos/${REPO}/contents/src%2Fcache.ts`)
      .query({ ref: HEAD2 })
      .reply(200, CACHE_TS_2.join('\n'));
    modelAnswer({
      findings: [STALE],
      priorFindingDispositions: [fixedAtHead2(run1.reviewKey, race!.fingerprint, 'fixed')],
    });
    const run2 = await reviewRun(HEAD2, 'synchronize');
    expect(second.pendingMocks()).toEqual([]);
    const ledger = (await store.publications.listForPr(REPO, 7)).filter((p) => p.runId === run2.id);
    expect(ledger.map((p) => [p.kind, p.status])).toEqual([
      ['check_run', 'shadowed'],
      ['review', 'shadowed'],
      ['thread_reply', 'shadowed'],
      ['thread_resolve', 'shadowed'],
      ['check_run', 'shadowed'],
    ]);
    // The still-open finding keeps its (shadow) thread: it would not be posted again.
    expect(ledger[1]!.request).toBeNull();
    expect(ledger[1]!.body).toContain('### Still open (1)');
    expect(ledger[2]!.body).toBe(
      `Resolved in ${HEAD2.slice(0, 7)}: fixed\n\n<!-- verdict:reply run=${run2.id} finding=${race!.fingerprint} -->`,
    );
    expect(ledger[3]!.request).toMatchObject({ mutation: 'resolveReviewThread' });
    const threads = await store.reviewThreads.listForPr(REPO, 7);
    expect(threads.map((t) => [t.commentId.startsWith('shadow:'), t.status])).toEqual([
      [true, 'resolved'],
      [true, 'open'],
    ]);
  });
});
