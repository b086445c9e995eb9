import nock from 'nock';
import {
  MISSING_INSTALLATION_MESSAGE,
  NOT_ANALYSED_MESSAGE,
  retryPublish,
} from '../../src/publish/review-publisher.js';
import { reviewPublisherFor } from '../../src/compose/parts.js';
import type { GitHubClient } from '../../src/github/client.js';
import type { Store } from '../../src/store/index.js';
import {
  API,
  BASE_ENV,
  FILES,
  HEAD,
  HEAD2,
  OPENAI,
  REPO,
  completion,
  github,
  pull,
  review,
  reviewHarness,
} from '../helpers/review-harness.js';
import { fullCoverage } from '../helpers/review-output.js';

/**
 * Publication of a whole review run in live mode: exactly the expected GitHub calls, nothing else
 * (nock refuses anything not mocked, and `pendingMocks()` must be empty).
 */

const CLEAN = review({
  verdict: 'clear',
  confidenceScore: 5,
  findings: [],
  mergeVerdict: 'Safe to merge.',
  summary: 'Adds a small cache.',
});

/** The token, the pull request (one changed file) and its files, as the review reads them. */
function opened(over: Record<string, unknown> = {}) {
  return github(pull({ changed_files: 1, ...over }), FILES.slice(0, 1));
}

/** The model answers with this review output. */
function answers(output: unknown) {
  nock(OPENAI)
    .post('/v1/chat/completions')
    .reply(200, completion(JSON.stringify(output)));
}

/** A run of PR `prNumber` stored as queued, not reviewed. */
async function storedRun(store: Store, prNumber: number, installationId: number | null) {
  const { run } = await store.runs.createOrGet({
    reviewKey: `${REPO}#${prNumber}@${HEAD}`,
    repo: REPO,
    prNumber,
    headSha: HEAD,
    variant: null,
    trigger: 'opened',
    installationId,
    deliveryId: null,
  });
  return run;
}

/** The calls of one review: read, check in progress, (model), read again, review, check completed. */
function githubForRun(opts: {
  reviewReply?: [status: number, body: Record<string, unknown>, headers?: Record<string, string>];
  event?: string;
  conclusion?: string;
  publishHead?: string;
  captured?: Record<string, any>;
}) {
  const captured = opts.captured ?? {};
  const [reviewStatus, reviewBody, reviewHeaders] = opts.reviewReply ?? [200, { id: 5555 }];
  const scope = opened()
    .post(`/repos/${REPO}/check-runs`, (b) => {
      captured.start = b;
      return b.status === 'in_progress' && b.head_sha === HEAD && b.name === 'Verdict / review';
    })
    .reply(201, { id: 9001 })
    .get(`/repos/${REPO}/pulls/7`)
    .reply(200, pull({ changed_files: 1, head: { sha: opts.publishHead ?? HEAD, ref: 'feature/cache' } }))
    .post(`/repos/${REPO}/pulls/7/reviews`, (b) => {
      captured.review = b;
      return opts.event === undefined || b.event === opts.event;
    })
    .reply(reviewStatus, reviewBody, reviewHeaders);
  if (reviewStatus < 300) {
    scope
      .patch(`/repos/${REPO}/check-runs/9001`, (b) => {
        captured.check = b;
        return (
          b.status === 'completed' && (opts.conclusion === undefined || b.conclusion === opts.conclusion)
        );
      })
      .reply(200, { id: 9001 });
  }
  return { scope, captured };
}

describe('publication', () => {
  const h = reviewHarness({ ...BASE_ENV, VERDICT_PUBLISH_MODE: 'live' });
  const { start, setPolicy, reviewRun } = h;

  /** `retry-publish` of the run through the app's publisher and installation clients. */
  function retry(store: Store, runId: string) {
    const verdict = h.app.verdict;
    const publisher = reviewPublisherFor(store, verdict.config, verdict.log);
    const github = async (id: number) => (await verdict.probot.auth(id)) as GitHubClient;
    return retryPublish(store, publisher, github, runId);
  }

  test('a BLOCK review: COMMENT review, check completed neutral, ledger receipts, exactly these calls', async () => {
    const store = await start();
    const { scope, captured } = githubForRun({ event: 'COMMENT', conclusion: 'neutral' });
    answers(review());
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run).toMatchObject({
      analysisStatus: 'analysed',
      publishStatus: 'published',
      publishError: null,
      checkRunId: '9001',
    });
    expect(captured.review.commit_id).toBe(HEAD);
    expect(captured.review.body).toContain('**Merge Status: 🔴 BLOCK**');
    expect(captured.review.body).toContain('Eviction races with concurrent writes');
    expect(captured.check.output.summary).toMatch(/^\*\*Merge Status: 🔴 BLOCK\*\*/);
    const ledger = await store.publications.listForPr(REPO, 7);
    expect(ledger.map((p) => [p.kind, p.status, p.receipt])).toEqual([
      ['check_run', 'published', '9001'],
      ['review', 'published', '5555'],
      ['check_run', 'published', '9001'],
    ]);
  });

  test('auto approval: APPROVE on the pinned head with a successful check', async () => {
    await start();
    await setPolicy({ autoApprove: { enabled: true } });
    const { scope } = githubForRun({ event: 'APPROVE', conclusion: 'success' });
    answers(CLEAN);
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run.publishStatus).toBe('published');
  });

  test('the publisher refuses APPROVE when the head moved since the coverage was computed', async () => {
    await start();
    await setPolicy({ autoApprove: { enabled: true } });
    const { scope, captured } = githubForRun({ event: 'COMMENT', publishHead: HEAD2 });
    answers(CLEAN);
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(captured.review.event).toBe('COMMENT');
    // The review is about the head it analysed, and the check is not a success on an unpinned head.
    expect(captured.review.commit_id).toBe(HEAD);
    expect(captured.check.conclusion).toBe('neutral');
    expect(run.publishStatus).toBe('published');
  });

  test('a 502 from GitHub keeps the analysis; retry-publish finds the review GitHub made anyway', async () => {
    const store = await start();
    const { scope, captured } = githubForRun({ reviewReply: [502, { message: 'Bad Gateway' }] });
    // The check is still completed although the review failed.
    scope.patch(`/repos/${REPO}/check-runs/9001`).reply(200, { id: 9001 });
    answers(review());
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'analysed', publishStatus: 'failed' });
    expect(run.publishError).toMatch(/review: GitHub 502/);
    expect(await store.findings.listForRun(run.id)).toHaveLength(1);
    expect(captured.review.body).toContain(`<!-- verdict:review run=${run.id} -->`);

    // A 502 does not say whether GitHub made the review: it is looked for by the run marker of its body
    // (here GitHub made it) and recorded, not posted twice; the check run completed before is left.
    // The installation token is still valid: no new one is asked for.
    const again = nock(API)
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: 1 }))
      .get(`/repos/${REPO}/pulls/7/reviews`)
      .query({ per_page: 100 })
      .reply(200, [
        { id: 5550, node_id: 'PRR_a', state: 'COMMENTED', body: 'An earlier review.' },
        { id: 5556, node_id: 'PRR_b', state: 'COMMENTED', body: captured.review.body },
      ]);
    const outcome = await retry(store, run.id);
    expect(outcome).toMatchObject({ status: 'published', errors: [] });
    expect(again.pendingMocks()).toEqual([]);
    expect(await store.runs.get(run.id)).toMatchObject({ publishStatus: 'published', publishError: null });
    const reviews = (await store.publications.listForPr(REPO, 7)).filter((p) => p.kind === 'review');
    // The attempt GitHub acted on is the one row, now with GitHub's id (and the 502 it answered with).
    expect(reviews.map((p) => [p.status, p.receipt, p.nodeId])).toEqual([['published', '5556', 'PRR_b']]);
    expect(reviews[0]!.error).toMatch(/502/);
  });

  test('a server error on the review: looked for by its run marker before it is sent again, not repeated blindly', async () => {
    const store = await start({ VERDICT_GITHUB_RETRIES: '1' });
    const posted: string[] = [];
    const { scope } = githubForRun({ reviewReply: [502, { message: 'Bad Gateway' }] });
    // Octokit does not repeat the POST itself: the publisher looks (nothing there) and sends it once more.
    scope
      .get(`/repos/${REPO}/pulls/7/reviews`)
      .query({ per_page: 100 })
      .reply(200, [])
      .post(`/repos/${REPO}/pulls/7/reviews`, (b) => (posted.push(b.body), true))
      .reply(200, { id: 5557 })
      .patch(`/repos/${REPO}/check-runs/9001`)
      .reply(200, { id: 9001 });
    answers(review());
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run).toMatchObject({ publishStatus: 'published', publishError: null });
    expect(posted[0]).toContain(`<!-- verdict:review run=${run.id} -->`);
    const reviews = (await store.publications.listForPr(REPO, 7)).filter((p) => p.kind === 'review');
    expect(reviews.map((p) => [p.status, p.receipt, p.error])).toEqual([['published', '5557', null]]);
  });

  test('retry-publish refuses a run that is not analysed, and one without an installation id', async () => {
    const store = await start();
    const run = await storedRun(store, 9, null);
    await expect(retry(store, run.id)).rejects.toThrow(NOT_ANALYSED_MESSAGE);
    await store.runs.recordAnalysis(
      { runId: run.id, reviewKey: run.reviewKey, repo: REPO, prNumber: 9, headSha: HEAD },
      { analysisStatus: 'analysed', verdict: 'clear', confidence: 5, result: { output: CLEAN } },
      [],
      store.findings,
    );
    await expect(retry(store, run.id)).rejects.toThrow(MISSING_INSTALLATION_MESSAGE);
  });

  test('status checks off: no check is created; the PR description gets the summary between markers', async () => {
    await start();
    await setPolicy({ statusChecks: { enabled: false }, updatePrDescription: true });
    const authorText = 'Caches user lookups.\n\nCloses #12.';
    let patched = '';
    const scope = opened({ body: authorText })
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: 1, body: authorText }))
      .post(`/repos/${REPO}/pulls/7/reviews`)
      .reply(200, { id: 1 })
      .patch(`/repos/${REPO}/pulls/7`, (b) => ((patched = b.body), true))
      .reply(200, { id: 7 });
    answers(CLEAN);
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run.checkRunId).toBeNull();
    expect(patched.startsWith(`${authorText}\n\n<!-- verdict:summary:start -->`)).toBe(true);
    expect(patched).toContain('**Merge Status: 🟢 CLEAR**');
    expect(patched.endsWith('<!-- verdict:summary:end -->')).toBe(true);
  });

  test('a secondary rate limit is waited out and retried', async () => {
    await start({ VERDICT_GITHUB_RETRIES: '2' });
    const message =
      'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
    const { scope } = githubForRun({ reviewReply: [403, { message }, { 'retry-after': '1' }] });
    scope
      .post(`/repos/${REPO}/pulls/7/reviews`)
      .reply(200, { id: 77 })
      .patch(`/repos/${REPO}/check-runs/9001`)
      .reply(200, { id: 9001 });
    answers(review());
    const run = await reviewRun();
    expect(run.publishError).toBeNull();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run.publishStatus).toBe('published');
  });

  test('an analysis that fails for good completes its check as neutral and publishes no review', async () => {
    const store = await start();
    let check: any = null;
    const scope = opened()
      .post(`/repos/${REPO}/check-runs`)
      .reply(201, { id: 9001 })
      .patch(`/repos/${REPO}/check-runs/9001`, (b) => ((check = b), true))
      .reply(200, { id: 9001 });
    nock(OPENAI).post('/v1/chat/completions').times(2).reply(200, completion('not json'));
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run).toMatchObject({ status: 'failed', analysisStatus: 'failed' });
    expect(check).toMatchObject({ status: 'completed', conclusion: 'neutral' });
    expect(check.output.summary).toMatch(/could not be completed/);
    expect((await store.publications.listForPr(REPO, 7)).some((p) => p.kind === 'review')).toBe(false);
  });

  test('checks turned off complete an existing check as neutral; status comments; a 422 is recorded at once', async () => {
    const store = await start();
    await setPolicy({ statusChecks: { enabled: false, postStatusComments: true } });
    const run = await storedRun(store, 7, 77);
    await store.runs.update(run.id, { checkRunId: '9001' });
    await store.runs.recordAnalysis(
      { runId: run.id, reviewKey: run.reviewKey, repo: REPO, prNumber: 7, headSha: HEAD },
      {
        analysisStatus: 'analysed',
        verdict: 'clear',
        confidence: 5,
        result: {
          output: CLEAN,
          coverage: fullCoverage({
            files: [{ path: 'src/cache.ts', status: 'analysed', reason: null, partial: false }],
          }),
          degraded: false,
        },
      },
      [],
      store.findings,
    );
    let check: any = null;
    let comment = '';
    const scope = nock(API)
      .post('/app/installations/77/access_tokens')
      .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' })
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: 1 }))
      .post(`/repos/${REPO}/pulls/7/reviews`)
      .reply(422, { message: 'Validation Failed', errors: [{ code: 'custom', message: 'stale commit' }] })
      .post(`/repos/${REPO}/issues/7/comments`, (b) => ((comment = b.body), true))
      .reply(201, { id: 11 })
      .patch(`/repos/${REPO}/check-runs/9001`, (b) => ((check = b), true))
      .reply(200, { id: 9001 });
    const outcome = await retry(store, run.id);
    expect(scope.pendingMocks()).toEqual([]);
    expect(check).toMatchObject({ status: 'completed', conclusion: 'neutral' });
    expect(check.output.summary).toMatch(/status checks are off/);
    expect(comment).toContain('CLEAR');
    expect(outcome.status).toBe('failed');
    expect(outcome.errors.join(' ')).toMatch(/review: GitHub 422/);
    const ledger = await store.publications.listForPr(REPO, 7);
    expect(ledger.map((p) => [p.kind, p.status])).toEqual([
      ['review', 'failed'],
      ['comment', 'published'],
      ['check_run', 'published'],
    ]);
    expect(ledger[0]!.error).toMatch(/422/);
    expect((await store.runs.get(run.id))!.analysisStatus).toBe('analysed');
  });
});
