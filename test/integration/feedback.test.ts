import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { learnedContextId } from '../../src/memory/feedback.js';
import { TOKENS } from '../helpers/operator.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, example, postWebhook } from '../helpers/webhooks.js';

/**
 * Feedback captured from webhooks (NAMES.md "Feedback and learning"): replies `@verdict ignore` and
 * `@verdict learn` in Verdict's line-comment threads, and threads people resolve, through the real server,
 * ingress, queue and Probot app. Payloads are @octokit/webhooks-examples pointed at a thread Verdict
 * opened (comment 700 on Codertocat/Hello-World#2); GitHub is nock'd with bodies shaped like its API.
 */
const REPO = 'Codertocat/Hello-World';
const API = 'https://api.github.com';
const HEAD = 'a'.repeat(40);
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const LIVE = { ...TOKENS, APP_ID: '123', PRIVATE_KEY: privateKey, LOG_LEVEL: 'silent' };

/** pull_request_review_comment.created from the examples, as a reply in thread 700 on PR 2. */
function reply(body: string, over: { id?: number; association?: string; inReplyTo?: number } = {}) {
  const payload = example('pull_request_review_comment', 'created');
  payload.comment.id = over.id ?? 9001;
  payload.comment.in_reply_to_id = over.inReplyTo ?? 700;
  payload.comment.body = body;
  payload.comment.path = 'src/cache.ts';
  payload.comment.author_association = over.association ?? 'MEMBER';
  payload.comment.user.login = 'mona';
  payload.installation = { id: 77 };
  return payload;
}

/** pull_request_review_thread.resolved from the examples, as Verdict's thread 700 on PR 2. */
function resolved(over: { outdated?: boolean; nodeId?: string; sender?: string; bot?: boolean } = {}) {
  const payload = example('pull_request_review_thread', 'resolved');
  payload.repository = example('pull_request_review_comment', 'created').repository;
  payload.pull_request.number = 2;
  payload.pull_request.head.sha = HEAD;
  payload.thread.node_id = over.nodeId ?? 'PRRT_verdict700';
  const [first] = payload.thread.comments;
  first.id = 700;
  first.user = { ...first.user, login: 'verdict-app[bot]', type: 'Bot' };
  first.path = 'src/cache.ts';
  if (over.outdated) {
    first.line = null;
    first.position = null;
  }
  payload.sender.login = over.sender ?? 'mona';
  if (over.bot) payload.sender.type = 'Bot';
  payload.installation = { id: 77 };
  return payload;
}

describe('feedback from webhooks', () => {
  let app: RunningVerdict;
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  afterAll(() => nock.enableNetConnect());
  afterEach(async () => {
    await app?.stop();
    nock.cleanAll();
  });

  /** A Verdict server with the thread its review opened: comment 700 on line 2 of src/cache.ts. */
  async function start(env: Record<string, string> = LIVE) {
    app = await startVerdict(env);
    const store = app.verdict.store;
    await store.pullRequests.upsert({
      repo: REPO,
      number: 2,
      headSha: HEAD,
      state: 'open',
      installationId: 77,
    });
    await store.findings.recordMany(
      { runId: 'run_1', reviewKey: `${REPO}#2@${HEAD}`, repo: REPO, prNumber: 2, headSha: HEAD },
      [
        {
          severity: 'high',
          category: 'concurrency',
          path: 'src/cache.ts',
          line: 2,
          title: 'Eviction races with concurrent writes',
          body: 'evict() runs between get() and set(), so a concurrent write can be lost.',
          fingerprint: 'fp_race',
          outsideDiff: false,
        },
      ],
    );
    await store.reviewThreads.recordMany([
      {
        repo: REPO,
        prNumber: 2,
        fingerprint: 'fp_race',
        runId: 'run_1',
        reviewId: '5555',
        commentId: '700',
        commentNodeId: 'PRRC_700',
        path: 'src/cache.ts',
        line: 2,
        url: `https://github.com/${REPO}/pull/2#discussion_r700`,
      },
    ]);
    return store;
  }

  const processed = (id: string) =>
    eventually(async () => {
      const d = await app.verdict.store.deliveries.get(id);
      return d && d.status !== 'queued' ? d : null;
    });

  /** The installation token and `.github/verdict.yml` (absent in the repository and the owner's .github). */
  function tokenAndConfig(config: string | null = null, token = true) {
    const scope = token
      ? nock(API)
          .post('/app/installations/77/access_tokens')
          .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' })
      : nock(API);
    if (config !== null) {
      return scope
        .get(/\/repos\/Codertocat\/Hello-World\/contents\/.github%2Fverdict.yml/)
        .reply(200, config, { 'content-type': 'text/plain; charset=utf-8' });
    }
    return scope
      .get(/\/repos\/Codertocat\/Hello-World\/contents\/.github%2Fverdict.yml/)
      .reply(404, { message: 'Not Found' })
      .get(/\/repos\/Codertocat\/.github\/contents\/.github%2Fverdict.yml/)
      .reply(404, { message: 'Not Found' });
  }

  /** GitHub's answer to a reply in a thread (POST .../pulls/2/comments/700/replies). */
  const replyCreated = (id: number, body: string) => ({
    id,
    node_id: `PRRC_${id}`,
    in_reply_to_id: 700,
    pull_request_review_id: 6000,
    path: 'src/cache.ts',
    body,
    user: { login: 'verdict-app[bot]', type: 'Bot' },
    html_url: `https://github.com/${REPO}/pull/2#discussion_r${id}`,
  });

  test('@verdict ignore: the finding is dismissed into a suppress cluster, answered once in the thread', async () => {
    const store = await start();
    const answers: string[] = [];
    const scope = tokenAndConfig()
      .post(`/repos/${REPO}/pulls/2/comments/700/replies`, (b) => (answers.push(b.body), true))
      .reply(201, (_uri, b: any) => replyCreated(990, b.body));
    const first = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict ignore, noise'),
    );
    expect(first.status).toBe(202);
    expect(await processed(first.deliveryId)).toMatchObject({
      status: 'processed',
      outcome: 'finding_ignored',
    });
    expect(scope.pendingMocks()).toEqual([]);

    const [cluster] = await store.memory.listClusters({ repo: REPO, limit: 10 });
    expect(cluster).toMatchObject({
      repo: REPO,
      action: 'suppress',
      size: 1,
      label: 'Eviction races with concurrent writes',
      exemplar: {
        title: 'Eviction races with concurrent writes',
        category: 'concurrency',
        path: 'src/cache.ts',
      },
      feedback: { up: 0, down: 0, dismissed: 1, addressed: 0 },
    });
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain(`memory cluster \`${cluster!.id}\``);
    expect(answers[0]).toContain('`suppress`');
    const ledger = (await store.publications.listForPr(REPO, 2)).filter((p) => p.kind === 'thread_reply');
    expect(ledger).toEqual([
      expect.objectContaining({
        mode: 'live',
        status: 'published',
        receipt: '990',
        request: { commentId: '700' },
      }),
    ]);
    expect(await store.feedback.get('comment:9001')).toMatchObject({ kind: 'ignore', answered: true });
    expect(await store.feedback.dismissedOnPr(REPO, 2)).toEqual(new Set(['fp_race']));

    // The same delivery again is a duplicate at the door; redelivered under a new id, it is handled once.
    const again = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict ignore, noise'),
      {
        deliveryId: first.deliveryId,
      },
    );
    expect(again.body).toMatchObject({ ignored: true, outcome: 'duplicate_delivery' });
    const redelivered = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict ignore, noise'),
    );
    expect(await processed(redelivered.deliveryId)).toMatchObject({ outcome: 'duplicate_feedback' });
    expect(await store.memory.getCluster(cluster!.id)).toEqual(cluster);
    expect(
      (await store.publications.listForPr(REPO, 2)).filter((p) => p.kind === 'thread_reply'),
    ).toHaveLength(1);

    // A second ignore by another reply on the same thread: the finding is dismissed once.
    const next = tokenAndConfig(null, false)
      .post(`/repos/${REPO}/pulls/2/comments/700/replies`)
      .reply(201, (_uri, b: any) => replyCreated(991, b.body));
    const second = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict ignore', { id: 9002 }),
    );
    expect(await processed(second.deliveryId)).toMatchObject({ outcome: 'finding_ignored' });
    expect(next.pendingMocks()).toEqual([]);
    expect(await store.memory.getCluster(cluster!.id)).toMatchObject({ size: 1, feedback: { dismissed: 1 } });

    // Audit: the cluster was created by the person who ignored it.
    const audit = await store.audit.list({ limit: 10 });
    expect(audit.map((e) => [e.action, e.target, e.actor])).toContainEqual([
      'memory.cluster.create',
      cluster!.id,
      'github:mona',
    ]);
  });

  test('an answer GitHub made but answered 502 for is found by its marker before it is sent again', async () => {
    const store = await start();
    const answers: string[] = [];
    const scope = tokenAndConfig()
      .post(`/repos/${REPO}/pulls/2/comments/700/replies`, (b) => (answers.push(b.body), true))
      .reply(502, { message: 'Server Error' });
    // Octokit does not retry it: the ledger looks first (VERDICT_GITHUB_RETRIES, default 3), reads the
    // pull request's review comments and finds its own answer in the thread (GitHub made it).
    const lookup = nock(API)
      .get(`/repos/${REPO}/pulls/2/comments`)
      .query({ per_page: 100, page: 1 })
      .reply(200, () => [
        { ...replyCreated(989, 'Thanks, but no.'), user: { login: 'mona', type: 'User' } },
        replyCreated(990, answers[0]!),
      ]);
    const res = await postWebhook(app.baseUrl, 'pull_request_review_comment', reply('@verdict ignore'));
    const delivery = await eventually(async () => {
      const d = await store.deliveries.get(res.deliveryId);
      return d && d.status !== 'queued' ? d : null;
    }, 15_000);
    expect(delivery).toMatchObject({ status: 'processed', outcome: 'finding_ignored' });
    expect(scope.pendingMocks()).toEqual([]);
    expect(lookup.pendingMocks()).toEqual([]);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatch(/\n\n<!-- verdict:reply to=9001 -->$/);
    const ledger = (await store.publications.listForPr(REPO, 2)).filter((p) => p.kind === 'thread_reply');
    expect(ledger.map((p) => [p.status, p.receipt, p.step])).toEqual([
      ['published', '990', 'feedback_reply:9001'],
    ]);
    expect(ledger[0]!.error).toMatch(/GitHub 502/);
    expect(await store.feedback.get('comment:9001')).toMatchObject({ answered: true });
  }, 30_000);

  test('@verdict learn: a context of the repository for the thread path, source comment, answered', async () => {
    const store = await start();
    const answers: string[] = [];
    const scope = tokenAndConfig()
      .post(`/repos/${REPO}/pulls/2/comments/700/replies`, (b) => (answers.push(b.body), true))
      .reply(201, (_uri, b: any) => replyCreated(992, b.body));
    const text = 'Evict only under the cache lock.\n\nWrites hold it too, so the race cannot happen.';
    const res = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply(`@verdict learn ${text}`, { id: 9100 }),
    );
    expect(await processed(res.deliveryId)).toMatchObject({ outcome: 'context_learned' });
    expect(scope.pendingMocks()).toEqual([]);
    const id = learnedContextId(9100);
    expect(await store.memory.getContext(id)).toMatchObject({
      id,
      repo: REPO,
      paths: ['src/cache.ts'],
      title: 'Evict only under the cache lock.',
      body: text,
      enabled: true,
      source: 'comment',
      createdBy: 'github:mona',
      revision: 1,
    });
    expect(answers[0]).toContain(`memory context \`${id}\``);
    expect(answers[0]).toContain('Evict only under the cache lock.');
    // A learn counts no feedback and touches no cluster.
    expect(await store.memory.listClusters({ limit: 10 })).toEqual([]);
    // The operator API lists it.
    const listed = await fetch(`${app.baseUrl}/operator/api/memory/contexts?repo=${REPO}`, {
      headers: { authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_READ_TOKEN}` },
    });
    expect(((await listed.json()) as any).contexts).toEqual([
      expect.objectContaining({ id, source: 'comment', paths: ['src/cache.ts'] }),
    ]);

    // Without text: told how to use it, nothing stored.
    const usage: string[] = [];
    const told = tokenAndConfig(null, false)
      .post(`/repos/${REPO}/pulls/2/comments/700/replies`, (b) => (usage.push(b.body), true))
      .reply(201, (_uri, b: any) => replyCreated(993, b.body));
    const empty = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict learn', { id: 9101 }),
    );
    expect(await processed(empty.deliveryId)).toMatchObject({ outcome: 'learn_refused' });
    expect(usage[0]).toMatch(/Nothing to learn/);
    expect(told.pendingMocks()).toEqual([]);
    expect(await store.memory.listContexts({ limit: 10 })).toHaveLength(1);
  });

  test('authorization as for manual commands: refused without a reply, nothing stored', async () => {
    const store = await start();
    // An association outside manual.allowAssociations.
    const scope = tokenAndConfig();
    const stranger = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict ignore', { id: 9200, association: 'NONE' }),
    );
    expect(await processed(stranger.deliveryId)).toMatchObject({ outcome: 'unauthorized_commenter' });
    expect(scope.pendingMocks()).toEqual([]);
    // manual.enabled: false in .github/verdict.yml (the installation token is still valid).
    const off = tokenAndConfig('manual:\n  enabled: false\n', false);
    const disabled = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict learn be nice', { id: 9201 }),
    );
    expect(await processed(disabled.deliveryId)).toMatchObject({ outcome: 'manual_disabled' });
    expect(off.pendingMocks()).toEqual([]);
    expect(await store.memory.listClusters({ limit: 10 })).toEqual([]);
    expect(await store.memory.listContexts({ limit: 10 })).toEqual([]);
    expect(await store.feedback.get('comment:9200')).toBeNull();
    expect(await store.publications.listForPr(REPO, 2)).toEqual([]);
  });

  test('a reply in a thread that is not Verdict, or that is not a command, changes nothing', async () => {
    const store = await start();
    const other = await postWebhook(
      app.baseUrl,
      'pull_request_review_comment',
      reply('@verdict ignore', { inReplyTo: 12345 }),
    );
    expect(await processed(other.deliveryId)).toMatchObject({ outcome: 'not_verdict_thread' });
    const chat = await postWebhook(app.baseUrl, 'pull_request_review_comment', reply('good catch, fixing'));
    expect(chat.body).toMatchObject({ accepted: true, ignored: true, outcome: 'no_command' });
    expect(await store.feedback.get('comment:9001')).toBeNull();
  });

  test('shadow mode: the answer is recorded in the ledger and GitHub is never called', async () => {
    const store = await start({ ...TOKENS, LOG_LEVEL: 'silent' });
    const res = await postWebhook(app.baseUrl, 'pull_request_review_comment', reply('@verdict ignore'));
    expect(await processed(res.deliveryId)).toMatchObject({ outcome: 'finding_ignored' });
    const ledger = await store.publications.listForPr(REPO, 2);
    expect(ledger).toEqual([
      expect.objectContaining({ kind: 'thread_reply', mode: 'shadow', status: 'shadowed', receipt: null }),
    ]);
    expect(ledger[0]!.body).toMatch(/^Ignored\./);
    expect((await store.memory.listClusters({ limit: 10 }))[0]).toMatchObject({ action: 'suppress' });
  });

  test('a resolved thread: addressed when its lines changed, pending otherwise; once; not by Verdict or a bot', async () => {
    const store = await start();
    // Resolved while GitHub shows it outdated: addressed at once.
    const outdated = await postWebhook(
      app.baseUrl,
      'pull_request_review_thread',
      resolved({ outdated: true }),
    );
    expect(outdated.status).toBe(202);
    expect(await processed(outdated.deliveryId)).toMatchObject({ outcome: 'finding_addressed' });
    const [cluster] = await store.memory.listClusters({ repo: REPO, limit: 10 });
    expect(cluster).toMatchObject({ action: 'none', size: 1, feedback: { addressed: 1, dismissed: 0 } });
    // The same thread resolved again (same node id and action): counted once.
    const again = await postWebhook(app.baseUrl, 'pull_request_review_thread', resolved({ outdated: true }));
    expect(await processed(again.deliveryId)).toMatchObject({ outcome: 'duplicate_feedback' });
    expect((await store.memory.getCluster(cluster!.id))!.feedback.addressed).toBe(1);

    // Another thread of Verdict's resolved with its lines as they were: waits for the next head.
    await store.reviewThreads.recordMany([
      {
        repo: REPO,
        prNumber: 2,
        fingerprint: 'fp_other',
        runId: 'run_1',
        reviewId: '5555',
        commentId: '701',
        commentNodeId: null,
        path: 'src/cache.ts',
        line: 5,
        url: null,
      },
    ]);
    const pending = resolved({ nodeId: 'PRRT_verdict701' });
    pending.thread.comments[0].id = 701;
    const res = await postWebhook(app.baseUrl, 'pull_request_review_thread', pending);
    expect(await processed(res.deliveryId)).toMatchObject({ outcome: 'resolution_pending' });
    expect(await store.feedback.pendingForPr(REPO, 2)).toEqual([
      expect.objectContaining({ key: 'thread:PRRT_verdict701:resolved', headSha: HEAD, commentId: '701' }),
    ]);

    // Resolved by a bot (Verdict resolving a fixed finding): not stored for work at all.
    const byBot = await postWebhook(
      app.baseUrl,
      'pull_request_review_thread',
      resolved({ bot: true, nodeId: 'PRRT_x' }),
    );
    expect(byBot.body).toMatchObject({ ignored: true, outcome: 'bot_sender' });
    // A thread Verdict resolved itself (its record says so) is not a person's feedback.
    const t701 = (await store.reviewThreads.listForPr(REPO, 2)).find((t) => t.commentId === '701')!;
    await store.reviewThreads.markResolved(t701.id, 'run_2');
    const mine = resolved({ nodeId: 'PRRT_other' });
    mine.thread.comments[0].id = 701;
    const res2 = await postWebhook(app.baseUrl, 'pull_request_review_thread', mine);
    expect(await processed(res2.deliveryId)).toMatchObject({ outcome: 'resolved_by_verdict' });
    // Someone else's thread.
    const foreign = resolved({ nodeId: 'PRRT_human' });
    foreign.thread.comments[0].id = 4242;
    const res3 = await postWebhook(app.baseUrl, 'pull_request_review_thread', foreign);
    expect(await processed(res3.deliveryId)).toMatchObject({ outcome: 'not_verdict_thread' });
  });

  test('analytics: posted, addressed, dismissed, 👍, 👎 and the addressed rate per repository and overall', async () => {
    const store = await start({ ...TOKENS, LOG_LEVEL: 'silent' });
    const thread = (commentId: string, repo = REPO) => ({
      repo,
      prNumber: 2,
      fingerprint: `fp_${commentId}`,
      runId: 'run_1',
      reviewId: '5555',
      commentId,
      commentNodeId: null,
      path: 'src/cache.ts',
      line: 2,
      url: null,
    });
    // Four line comments posted on Hello-World (700 and these three), one on acme/api, one shadow thread.
    await store.reviewThreads.recordMany([
      thread('701'),
      thread('702'),
      thread('703'),
      thread('800', 'acme/api'),
      thread('shadow:run_1:fp_x'),
    ]);
    // 700: ignored (dismissed); 701: outdated and resolved (addressed).
    const ignored = await postWebhook(app.baseUrl, 'pull_request_review_comment', reply('@verdict ignore'));
    await processed(ignored.deliveryId);
    const fixed = resolved({ outdated: true, nodeId: 'PRRT_701' });
    fixed.thread.comments[0].id = 701;
    await processed((await postWebhook(app.baseUrl, 'pull_request_review_thread', fixed)).deliveryId);
    // Reactions as a later review reads them: 702 gets a 👍 and a 👎, 703 a 👍.
    const recorder = new (await import('../../src/memory/feedback.js')).FeedbackRecorder({
      store,
      log: app.verdict.log,
    });
    const threads = await store.reviewThreads.listForPr(REPO, 2);
    const of = (id: string) => threads.find((t) => t.commentId === id)!;
    await recorder.record(of('702'), { key: 'reaction:1', kind: 'up', counts: { up: 1 }, actor: 'github:a' });
    await recorder.record(of('702'), {
      key: 'reaction:2',
      kind: 'down',
      counts: { down: 1, dismissed: 1 },
      actor: 'github:b',
    });
    await recorder.record(of('703'), { key: 'reaction:3', kind: 'up', counts: { up: 1 }, actor: 'github:a' });

    const res = await fetch(`${app.baseUrl}/operator/api/analytics`, {
      headers: { authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_READ_TOKEN}` },
    });
    const { analytics } = (await res.json()) as any;
    expect(analytics.feedback).toEqual({
      posted: 5,
      addressed: 1,
      dismissed: 2,
      up: 2,
      down: 1,
      addressedRate: 0.2,
    });
    expect(analytics.repositories).toEqual([
      {
        repo: REPO,
        feedback: { posted: 4, addressed: 1, dismissed: 2, up: 2, down: 1, addressedRate: 0.25 },
      },
      {
        repo: 'acme/api',
        feedback: { posted: 1, addressed: 0, dismissed: 0, up: 0, down: 0, addressedRate: 0 },
      },
    ]);
    // Reports count them: the line comments posted in the period and what reviewers did with them since.
    const report = async (query: string) =>
      (await (
        await fetch(`${app.baseUrl}/operator/api/reports?${query}`, {
          headers: { authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_READ_TOKEN}` },
        })
      ).json()) as any;
    expect((await report('')).summary.feedback).toEqual(analytics.feedback);
    expect((await report(`repo=${REPO}`)).summary.feedback).toEqual(analytics.repositories[0].feedback);
    expect((await report('from=2001-01-01&to=2001-01-31')).summary.feedback).toEqual({
      posted: 0,
      addressed: 0,
      dismissed: 0,
      up: 0,
      down: 0,
      addressedRate: 0,
    });
    // The snapshot's analytics view is the same projection.
    const snap = await fetch(`${app.baseUrl}/operator/api/snapshot?view=analytics`, {
      headers: { authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_READ_TOKEN}` },
    });
    expect(((await snap.json()) as any).data.feedback).toEqual(analytics.feedback);
  });
});
