import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { eventually, example, postWebhook, prComment } from '../helpers/webhooks.js';

const REPO = 'Codertocat/Hello-World';

/** Deliveries dispatched through the Probot app by the in-process worker, without App credentials. */
describe('webhook processing in shadow mode', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict();
  });
  afterEach(async () => {
    await app.stop();
  });
  const store = () => app.verdict.store;
  const processed = (id: string) =>
    eventually(async () => {
      const d = await store().deliveries.get(id);
      return d && d.status !== 'queued' ? d : null;
    });

  async function opened(headSha?: string) {
    const payload = example('pull_request', 'opened');
    payload.installation = { id: 77 };
    if (headSha) payload.pull_request.head.sha = headSha;
    const res = await postWebhook(app.baseUrl, 'pull_request', payload);
    return processed(res.deliveryId);
  }

  test('pull_request.opened stores the head and queues a run and a review job in the waiting slot', async () => {
    const delivery = await opened();
    expect(delivery).toMatchObject({ status: 'processed', outcome: 'enqueued' });
    const pr = await store().pullRequests.get(REPO, 2);
    expect(pr).toMatchObject({
      headSha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
      baseRef: 'master',
      installationId: 77,
    });
    const run = await store().runs.latestForPr(REPO, 2);
    expect(run).toMatchObject({
      reviewKey: `${REPO}#2@ec26c3e57ca3a959ca5aad62de7213c562f8c821`,
      status: 'queued',
      trigger: 'opened',
    });
    const jobs = await store().jobs.findByKey(`${REPO}#2:latest-waiting`);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ queue: 'reviews', status: 'waiting', payload: { runId: run!.id } });
  });

  test('a synchronize to the stored head is a no_op; a new head replaces the waiting job and supersedes its run', async () => {
    await opened();
    const first = await store().runs.latestForPr(REPO, 2);
    const same = example('pull_request', 'synchronize');
    same.before = 'f'.repeat(40);
    const noop = await postWebhook(app.baseUrl, 'pull_request', same);
    expect((await processed(noop.deliveryId)).outcome).toBe('no_op');

    const moved = example('pull_request', 'synchronize');
    moved.pull_request.head.sha = 'b'.repeat(40);
    moved.after = 'b'.repeat(40);
    const res = await postWebhook(app.baseUrl, 'pull_request', moved);
    expect((await processed(res.deliveryId)).outcome).toBe('replace_waiting');
    expect((await store().runs.get(first!.id))?.status).toBe('superseded');
    const jobs = await store().jobs.findByKey(`${REPO}#2:latest-waiting`);
    expect(jobs).toHaveLength(1);
    expect((jobs[0]!.payload as any).headSha).toBe('b'.repeat(40));
    expect((await store().pullRequests.get(REPO, 2))?.headSha).toBe('b'.repeat(40));
  });

  test('pull_request.edited updates the stored metadata without queueing a review', async () => {
    await opened();
    const edited = example('pull_request', 'opened');
    edited.action = 'edited';
    edited.pull_request.title = 'A better title';
    edited.changes = { title: { from: 'Update the README with new information.' } };
    const res = await postWebhook(app.baseUrl, 'pull_request', edited);
    // Kept only to update stored metadata: 202 `recorded`, not `enqueued` (NAMES.md).
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: true, ignored: false, outcome: 'recorded' });
    expect((await processed(res.deliveryId)).outcome).toBe('metadata_updated');
    expect((await store().pullRequests.get(REPO, 2))?.title).toBe('A better title');
    expect(await store().runs.listForPr(REPO, 2)).toHaveLength(1);
  });

  test('@verdict help replies with the command list (recorded in shadow mode)', async () => {
    await opened();
    const res = await postWebhook(app.baseUrl, 'issue_comment', prComment('@Verdict   HELP'));
    expect((await processed(res.deliveryId)).outcome).toBe('help_replied');
    const replies = (await store().publications.listForPr(REPO, 2)).filter((p) => p.kind === 'reply');
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ mode: 'shadow', status: 'shadowed' });
    expect(replies[0]!.body).toContain('review');
    expect(replies[0]!.body).toContain('status');
  });

  test('@verdict status replies with the latest run status and the abbreviated head', async () => {
    await opened();
    const res = await postWebhook(app.baseUrl, 'issue_comment', prComment('@reviewbot status'));
    expect((await processed(res.deliveryId)).outcome).toBe('status_replied');
    const reply = (await store().publications.listForPr(REPO, 2)).find((p) => p.kind === 'reply');
    expect(reply!.body).toContain('`queued`');
    expect(reply!.body).toContain('`ec26c3e`');
  });

  test('@verdict review queues a manual run with variant manual-{commentId}; the same comment again is a duplicate', async () => {
    await opened();
    const comment = prComment('@verdict review', { commentId: 4242 });
    const res = await postWebhook(app.baseUrl, 'issue_comment', comment);
    expect((await processed(res.deliveryId)).outcome).toBe('enqueued');
    const key = `${REPO}#2@ec26c3e57ca3a959ca5aad62de7213c562f8c821:manual-4242`;
    expect(await store().runs.getByKey(key)).toMatchObject({
      trigger: 'manual_command',
      variant: 'manual-4242',
      status: 'queued',
    });
    expect(await store().jobs.findByKey(key)).toHaveLength(1);
    const again = await postWebhook(app.baseUrl, 'issue_comment', comment);
    expect((await processed(again.deliveryId)).outcome).toBe('duplicate_command');
    expect(await store().jobs.findByKey(key)).toHaveLength(1);
  });

  test('a commenter outside allowAssociations gets unauthorized_commenter and no reply', async () => {
    await opened();
    const res = await postWebhook(
      app.baseUrl,
      'issue_comment',
      prComment('@verdict help', { association: 'NONE', login: 'stranger' }),
    );
    expect((await processed(res.deliveryId)).outcome).toBe('unauthorized_commenter');
    expect(await store().publications.listForPr(REPO, 2)).toHaveLength(0);
  });

  test('a command on a PR with no stored head (and no credentials to look it up) is unknown_pr_head', async () => {
    const res = await postWebhook(app.baseUrl, 'issue_comment', prComment('@verdict status', { number: 99 }));
    expect((await processed(res.deliveryId)).outcome).toBe('unknown_pr_head');
    expect(await store().publications.listForPr(REPO, 99)).toHaveLength(0);
  });

  test('installation events keep the repositories table in step', async () => {
    const created = example('installation', 'created');
    const res = await postWebhook(app.baseUrl, 'installation', created);
    expect(res.body).toMatchObject({ accepted: true, ignored: false, outcome: 'recorded' });
    expect((await processed(res.deliveryId)).outcome).toBe('repositories_synced');
    const names = (await store().repositories.list()).map((r) => r.fullName);
    expect(names.length).toBeGreaterThan(0);
    expect(names).toEqual(created.repositories.map((r: any) => r.full_name).sort());
    // Installed means reviewed (NAMES.md): each repository the installation names is enabled.
    for (const name of names) {
      expect((await store().repositories.get(name))?.config).toEqual({ enabled: true });
    }
    const added = example('installation_repositories', 'added');
    const res3 = await postWebhook(app.baseUrl, 'installation_repositories', added);
    expect((await processed(res3.deliveryId)).outcome).toBe('repositories_synced');
    for (const r of added.repositories_added) {
      expect(await store().repositories.get(r.full_name)).toMatchObject({
        installed: true,
        config: { enabled: true },
      });
    }
    // Other installation actions record the repositories without enabling them.
    const accepted = example('installation', 'new_permissions_accepted');
    accepted.repositories = [{ ...accepted.repositories[0], full_name: 'Codertocat/Other', name: 'Other' }];
    const res4 = await postWebhook(app.baseUrl, 'installation', accepted);
    await processed(res4.deliveryId);
    expect(await store().repositories.get('Codertocat/Other')).toMatchObject({
      installed: true,
      config: null,
    });
    const removed = example('installation_repositories', 'removed');
    const res2 = await postWebhook(app.baseUrl, 'installation_repositories', removed);
    await processed(res2.deliveryId);
    for (const r of removed.repositories_removed) {
      expect((await store().repositories.get(r.full_name))?.installed ?? false).toBe(false);
    }
  });
});
