import nock from 'nock';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, example, postWebhook, prComment } from '../helpers/webhooks.js';
import {
  OPENAI,
  REPO as ENGINE_REPO,
  completion,
  github,
  review,
  reviewHarness,
} from '../helpers/review-harness.js';

const REPO = 'Codertocat/Hello-World';
const BOT = 'coderabbitai[bot]';

function competitorReview(login = BOT, id = 900001) {
  const payload = example('pull_request_review', 'submitted');
  payload.installation = { id: 77 };
  payload.review.user.login = login;
  payload.review.id = id;
  payload.review.body = 'Walkthrough: the cache has an eviction race in src/cache.ts.';
  return payload;
}

describe('competitor reviews through the webhook', () => {
  let app: RunningVerdict;
  afterEach(async () => app?.stop());
  const processed = (id: string) =>
    eventually(async () => {
      const d = await app.verdict.store.deliveries.get(id);
      return d && d.status !== 'queued' ? d : null;
    });

  test('a review by a competitor login is kept once; a human review is ignored at ingress', async () => {
    app = await startVerdict({ VERDICT_COMPETITOR_LOGINS: 'CodeRabbitAI[bot]' });
    const first = await postWebhook(app.baseUrl, 'pull_request_review', competitorReview());
    expect(first.body).toMatchObject({ accepted: true, outcome: 'enqueued' });
    expect(await processed(first.deliveryId)).toMatchObject({ outcome: 'competitor_review_recorded' });
    const again = await postWebhook(app.baseUrl, 'pull_request_review', competitorReview());
    expect(await processed(again.deliveryId)).toMatchObject({ outcome: 'duplicate_competitor_review' });
    const human = await postWebhook(app.baseUrl, 'pull_request_review', competitorReview('octocat', 5));
    expect(human.body).toMatchObject({ ignored: true, outcome: 'not_competitor' });
    const kept = await app.verdict.store.competitors.listForPr(REPO, 2);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ login: BOT, kind: 'review', githubId: 900001, state: 'commented' });
    expect(kept[0]!.body).toContain('eviction race');
  });

  test('a PR comment by a competitor is kept and never runs as a command', async () => {
    app = await startVerdict({ VERDICT_COMPETITOR_LOGINS: BOT });
    const payload = prComment('@verdict review — summary by CodeRabbit', { login: BOT, commentId: 4242 });
    const res = await postWebhook(app.baseUrl, 'issue_comment', payload);
    expect(await processed(res.deliveryId)).toMatchObject({ outcome: 'competitor_review_recorded' });
    expect(await app.verdict.store.competitors.listForPr(REPO, 2)).toMatchObject([
      { kind: 'comment', githubId: 4242, login: BOT },
    ]);
    expect(await app.verdict.store.runs.latestForPr(REPO, 2)).toBeNull();
  });

  test('with VERDICT_COMPETITOR_TRIGGERS_REVIEW=1 a competitor review requests a review of the stored head', async () => {
    app = await startVerdict({ VERDICT_COMPETITOR_LOGINS: BOT, VERDICT_COMPETITOR_TRIGGERS_REVIEW: '1' });
    const opened = example('pull_request', 'opened');
    opened.installation = { id: 77 };
    await processed((await postWebhook(app.baseUrl, 'pull_request', opened)).deliveryId);
    const res = await postWebhook(app.baseUrl, 'pull_request_review', competitorReview());
    expect(await processed(res.deliveryId)).toMatchObject({ outcome: 'enqueued' });
    const run = await app.verdict.store.runs.getByKey(
      `${REPO}#2@${opened.pull_request.head.sha}:competitor-900001`,
    );
    expect(run).toMatchObject({ trigger: 'competitor_review', installationId: 77 });
  });
});

describe('competitor comparison in the review', () => {
  const h = reviewHarness();

  test('the prompt carries the competitor review; the comparison the model fills is kept', async () => {
    const store = await h.start();
    await store.competitors.record({
      repo: ENGINE_REPO,
      prNumber: 7,
      login: BOT,
      kind: 'review',
      githubId: 1,
      state: 'commented',
      body: 'CodeRabbit: consider adding a TTL to the cache.',
      submittedAt: null,
    });
    github();
    let prompt = '';
    const comparison = {
      ...review().competitorComparison,
      available: true,
      winner: 'own',
      summary: 'We found the race; the other bot only suggested a TTL.',
      confidence: 4,
      competitorMisses: ['the eviction race'],
    };
    nock(OPENAI)
      .post('/v1/chat/completions', (b: any) => ((prompt = b.messages.at(-1).content), true))
      .reply(200, completion(JSON.stringify(review({ competitorComparison: comparison }))));
    const run = await h.reviewRun();
    expect(prompt).toContain('## Reviews by other review bots on this pull request');
    expect(prompt).toContain('CodeRabbit: consider adding a TTL to the cache.');
    expect((run.result as any).output.competitorComparison).toMatchObject({ available: true, winner: 'own' });
  });

  test('without a competitor review a claimed comparison is replaced by the default object', async () => {
    await h.start();
    github();
    const claimed = { ...review().competitorComparison, available: true, winner: 'competitor' };
    nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(200, completion(JSON.stringify(review({ competitorComparison: claimed }))));
    const run = await h.reviewRun();
    const result = run.result as any;
    expect(result.output.competitorComparison).toMatchObject({ available: false, winner: 'unclear' });
    expect(result.warnings.join(' ')).toMatch(/no competitor review was supplied/);
  });
});
