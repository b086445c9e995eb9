import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, postWebhook, prComment } from '../helpers/webhooks.js';

const REPO = 'Codertocat/Hello-World';
const API = 'https://api.github.com';
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

/** With App credentials, handlers call GitHub (nock'd) through Probot's installation Octokit. */
describe('webhook processing with App credentials', () => {
  let app: RunningVerdict;
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  afterAll(() => {
    nock.enableNetConnect();
  });
  beforeEach(async () => {
    app = await startVerdict({
      APP_ID: '123',
      PRIVATE_KEY: privateKey,
      LOG_LEVEL: process.env.DBG ? 'debug' : 'silent',
    });
  });
  afterEach(async () => {
    await app.stop();
    nock.cleanAll();
  });
  const processed = (id: string) =>
    eventually(async () => {
      const d = await app.verdict.store.deliveries.get(id);
      return d && d.status !== 'queued' ? d : null;
    });

  function token() {
    return nock(API)
      .post('/app/installations/77/access_tokens')
      .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' });
  }

  test('a first command on an old PR looks its head up, queues a review and reacts', async () => {
    const scope = token()
      .get(/\/repos\/Codertocat\/Hello-World\/contents\/.github%2Fverdict.yml/)
      .reply(404)
      .get(/\/repos\/Codertocat\/.github\/contents\/.github%2Fverdict.yml/)
      .reply(404)
      .get('/repos/Codertocat/Hello-World/pulls/7')
      .reply(200, {
        number: 7,
        title: 'Old PR',
        body: null,
        state: 'open',
        draft: false,
        user: { login: 'Codertocat' },
        labels: [],
        head: { sha: 'c'.repeat(40), ref: 'feature' },
        base: { ref: 'main' },
        changed_files: 3,
      })
      .post('/repos/Codertocat/Hello-World/issues/comments/777/reactions', { content: 'eyes' })
      .reply(201, { id: 1 });
    const res = await postWebhook(
      app.baseUrl,
      'issue_comment',
      prComment('@verdict review', { number: 7, commentId: 777 }),
    );
    const delivery = await processed(res.deliveryId);
    expect(delivery).toMatchObject({ status: 'processed', outcome: 'enqueued' });
    expect(scope.pendingMocks()).toEqual([]);
    expect(await app.verdict.store.pullRequests.get(REPO, 7)).toMatchObject({
      headSha: 'c'.repeat(40),
      changedFiles: 3,
    });
    expect(await app.verdict.store.runs.getByKey(`${REPO}#7@${'c'.repeat(40)}:manual-777`)).not.toBeNull();
  });

  test('a repository disabled in .github/verdict.yml takes no commands and gets no reply', async () => {
    const scope = token()
      .get(/\/repos\/Codertocat\/Hello-World\/contents\/.github%2Fverdict.yml/)
      .reply(200, 'enabled: false\n', { 'content-type': 'text/plain; charset=utf-8' });
    const res = await postWebhook(
      app.baseUrl,
      'issue_comment',
      prComment('@verdict review', { number: 7, commentId: 778 }),
    );
    const delivery = await processed(res.deliveryId);
    expect(delivery).toMatchObject({ status: 'processed', outcome: 'repository_disabled' });
    expect(scope.pendingMocks()).toEqual([]);
    expect(await app.verdict.store.runs.listForPr(REPO, 7)).toEqual([]);
    expect(await app.verdict.store.publications.listForPr(REPO, 7)).toEqual([]);
  });

  test('an invalid .github/verdict.yml is reported on the PR once, and the defaults apply', async () => {
    // Probot's config loader asks for the raw file (application/vnd.github.v3.raw).
    const config = () =>
      nock(API)
        .get(/\/repos\/Codertocat\/Hello-World\/contents\/.github%2Fverdict.yml/)
        .reply(200, 'review:\n  auto: "sometimes"\n', { 'content-type': 'text/plain; charset=utf-8' });
    const pr = {
      number: 8,
      title: 'T',
      body: null,
      state: 'open',
      draft: false,
      user: { login: 'Codertocat' },
      labels: [],
      head: { sha: 'd'.repeat(40), ref: 'f' },
      base: { ref: 'main' },
      changed_files: 1,
    };
    const scope = token();
    config();
    scope.get('/repos/Codertocat/Hello-World/pulls/8').reply(200, pr);
    const reported = nock(API)
      .post(
        '/repos/Codertocat/Hello-World/issues/8/comments',
        (body) => /verdict\.yml/.test(body.body) && /review\.auto/.test(body.body),
      )
      .reply(201, { id: 900 })
      .post(
        '/repos/Codertocat/Hello-World/issues/8/comments',
        (body) => /`@verdict review`/.test(body.body) || /review/.test(body.body),
      )
      .reply(201, { id: 901 });
    const first = await postWebhook(
      app.baseUrl,
      'issue_comment',
      prComment('@verdict help', { number: 8, commentId: 1 }),
    );
    expect((await processed(first.deliveryId)).outcome).toBe('help_replied');
    expect(reported.pendingMocks()).toEqual([]);

    config();
    const secondReply = nock(API)
      .post('/repos/Codertocat/Hello-World/issues/8/comments')
      .reply(201, { id: 902 });
    const second = await postWebhook(
      app.baseUrl,
      'issue_comment',
      prComment('@verdict help', { number: 8, commentId: 2 }),
    );
    expect((await processed(second.deliveryId)).outcome).toBe('help_replied');
    expect(secondReply.pendingMocks()).toEqual([]);
    // Exactly one config report was published: the second command produced only its help reply.
    const ledger = await app.verdict.store.publications.listForPr(REPO, 8);
    expect(ledger.filter((p) => p.body?.includes('verdict.yml'))).toHaveLength(1);
    expect(ledger.every((p) => p.mode === 'live' && p.status === 'published')).toBe(true);
  });
});
