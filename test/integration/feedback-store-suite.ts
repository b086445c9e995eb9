import { FeedbackRecorder } from '../../src/memory/feedback.js';
import type { ClusterTarget, NewFeedbackEvent } from '../../src/store/feedback.js';
import { migrationSource } from '../../src/store/migrations/index.js';
import type { ReviewThreadRecord } from '../../src/store/review-threads.js';
import { createLogger } from '../../src/logger.js';
import { DEFAULT_REPORT_LIMITS } from '../../src/reports/limits.js';
import { migrateDownTo, openTestStore, type TestDialect, type TestStore } from '../helpers/store.js';

const REPO = 'Octo/Demo';

/** The feedback store and its folding into clusters (NAMES.md "Feedback and learning"), per dialect. */
export function feedbackStoreSuite(dialect: TestDialect): void {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const target = (over: Partial<ClusterTarget> = {}): ClusterTarget => ({
    repo: REPO,
    clusterId: null,
    create: {
      label: 'Eviction races with writes',
      exemplar: {
        title: 'Eviction races with writes',
        body: 'evict() runs between get and set.',
        category: 'concurrency',
        path: 'src/cache.ts',
      },
    },
    suppress: false,
    actor: 'github:mona',
    ...over,
  });
  const event = (over: Partial<NewFeedbackEvent> = {}): NewFeedbackEvent => ({
    key: 'reaction:1',
    repo: REPO,
    prNumber: 7,
    commentId: '700',
    fingerprint: 'fp_race',
    kind: 'down',
    counts: { down: 1, dismissed: 1 },
    actor: 'github:mona',
    cluster: target(),
    ...over,
  });
  const cluster = async (id: string | null) => (id ? t.store.memory.getCluster(id) : null);

  test('an event is stored once: the same key again changes nothing', async () => {
    const first = await t.store.feedback.record(event());
    expect(first).toMatchObject({ recorded: true, clusterCreated: true });
    expect(first.event).toMatchObject({
      key: 'reaction:1',
      kind: 'down',
      status: 'counted',
      counts: { up: 0, down: 1, dismissed: 1, addressed: 0 },
    });
    const created = await cluster(first.event.clusterId);
    expect(created).toMatchObject({
      repo: REPO,
      action: 'none',
      size: 1,
      revision: 1,
      label: 'Eviction races with writes',
      exemplar: { title: 'Eviction races with writes', category: 'concurrency', path: 'src/cache.ts' },
      feedback: { up: 0, down: 1, dismissed: 1, addressed: 0 },
    });
    const again = await t.store.feedback.record(event({ counts: { up: 1 } }));
    expect(again).toMatchObject({ recorded: false, event: { id: first.event.id } });
    expect(await cluster(first.event.clusterId)).toEqual(created);
    expect(await t.store.memory.listClusters({ limit: 10 })).toHaveLength(1);
    expect(await t.store.feedback.existingKeys(['reaction:1', 'reaction:2'])).toEqual(
      new Set(['reaction:1']),
    );
  });

  test('a finding counts dismissed once; size grows when another finding joins; ignore makes it suppress', async () => {
    const down = await t.store.feedback.record(event());
    const id = down.event.clusterId!;
    // An ignore on the same comment: dismissed already counted, the action becomes suppress.
    const ignore = await t.store.feedback.record(
      event({
        key: 'comment:9',
        kind: 'ignore',
        counts: { dismissed: 1 },
        cluster: target({ clusterId: id, suppress: true }),
      }),
    );
    expect(ignore.event.counts).toEqual({ up: 0, down: 0, dismissed: 0, addressed: 0 });
    expect(await cluster(id)).toMatchObject({
      action: 'suppress',
      size: 1,
      revision: 2,
      feedback: { dismissed: 1, down: 1 },
    });
    // Another finding (comment 701) joins the cluster: size 2, its dismissal counts.
    await t.store.feedback.record(
      event({
        key: 'reaction:2',
        commentId: '701',
        fingerprint: 'fp_other',
        cluster: target({ clusterId: id }),
      }),
    );
    // A 👍 on the first comment: up counts, size stays.
    await t.store.feedback.record(
      event({ key: 'reaction:3', kind: 'up', counts: { up: 1 }, cluster: target({ clusterId: id }) }),
    );
    expect(await cluster(id)).toMatchObject({
      size: 2,
      revision: 4,
      feedback: { up: 1, down: 2, dismissed: 2, addressed: 0 },
    });
    expect(await t.store.feedback.clusterOfComment('700')).toBe(id);
    expect(await t.store.feedback.dismissedOnPr('octo/demo', 7)).toEqual(new Set(['fp_race', 'fp_other']));
    const audit = (await t.store.audit.list({ limit: 20 })).filter((e) => e.action.startsWith('memory.'));
    expect(audit.map((e) => [e.action, e.target, e.actor])).toEqual([
      ['memory.cluster.update', id, 'github:mona'],
      ['memory.cluster.create', id, 'github:mona'],
    ]);
    expect(audit[0]!.detail).toMatchObject({ action: 'suppress', fromRevision: 1, toRevision: 2 });
  });

  test('an operator holding the old revision gets a conflict after a fold', async () => {
    const { event: e } = await t.store.feedback.record(event());
    const before = (await cluster(e.clusterId))!;
    await t.store.feedback.record(
      event({
        key: 'reaction:2',
        kind: 'up',
        counts: { up: 1 },
        cluster: target({ clusterId: e.clusterId }),
      }),
    );
    expect(await t.store.memory.updateCluster(before.id, before.revision, { action: 'keep' }, 'op')).toEqual({
      ok: false,
      code: 'revision_conflict',
      revision: 2,
    });
  });

  test('a cluster deleted since is replaced by a new one', async () => {
    const { event: e } = await t.store.feedback.record(event());
    const old = (await cluster(e.clusterId))!;
    await t.store.memory.deleteCluster(old.id, old.revision, 'op');
    const next = await t.store.feedback.record(
      event({ key: 'reaction:2', commentId: '701', cluster: target({ clusterId: old.id }) }),
    );
    expect(next).toMatchObject({ recorded: true, clusterCreated: true });
    expect(next.event.clusterId).not.toBe(old.id);
    expect(await t.store.feedback.clusterOfComment('700')).toBeNull();
  });

  test('reactionCounts: the reactions stored per comment (other events not counted)', async () => {
    await t.store.feedback.record(event({ key: 'reaction:1' }));
    await t.store.feedback.record(event({ key: 'reaction:2', kind: 'up', counts: { up: 1 } }));
    await t.store.feedback.record(event({ key: 'comment:9', kind: 'ignore', counts: { dismissed: 1 } }));
    await t.store.feedback.record(event({ key: 'reaction:3', commentId: '701', cluster: null }));
    const counts = await t.store.feedback.reactionCounts(['700', '701', '702']);
    expect(Object.fromEntries(counts)).toEqual({ '700': 2, '701': 1 });
    expect((await t.store.feedback.reactionCounts([])).size).toBe(0);
  });

  test('a pending resolution counts nothing until settled, once', async () => {
    const pending = await t.store.feedback.record(
      event({
        key: 'thread:PRRT_1:resolved',
        kind: 'resolved',
        pending: true,
        counts: {},
        headSha: 'a'.repeat(40),
        cluster: null,
      }),
    );
    expect(pending.event).toMatchObject({ status: 'pending', clusterId: null, headSha: 'a'.repeat(40) });
    expect((await t.store.feedback.pendingForPr('OCTO/demo', 7)).map((e) => e.key)).toEqual([
      'thread:PRRT_1:resolved',
    ]);
    expect(await t.store.feedback.totalsByRepo()).toEqual([]);
    expect(await t.store.feedback.settle('thread:PRRT_1:resolved', { dismissed: 1 }, target())).toBe(true);
    expect(await t.store.feedback.settle('thread:PRRT_1:resolved', { addressed: 1 }, target())).toBe(false);
    const settled = (await t.store.feedback.get('thread:PRRT_1:resolved'))!;
    expect(settled).toMatchObject({ status: 'counted', counts: { dismissed: 1, addressed: 0 } });
    expect(await cluster(settled.clusterId)).toMatchObject({ size: 1, feedback: { dismissed: 1 } });
    expect(await t.store.feedback.pendingForPr(REPO, 7)).toEqual([]);
  });

  test('totals by repository: posted line comments (not shadow ones) and counted feedback', async () => {
    const thread = (commentId: string, repo = REPO) => ({
      repo,
      prNumber: 7,
      fingerprint: `fp_${commentId}`,
      runId: 'run_1',
      reviewId: '5555',
      commentId,
      commentNodeId: null,
      path: 'src/cache.ts',
      line: 2,
      url: null,
    });
    await t.store.reviewThreads.recordMany([
      thread('700'),
      thread('701'),
      thread('702'),
      thread('shadow:run_1:fp_x'),
      thread('800', 'acme/api'),
    ]);
    await t.store.feedback.record(event({ repo: 'octo/demo' }));
    await t.store.feedback.record(event({ key: 'reaction:2', kind: 'up', counts: { up: 1 } }));
    await t.store.feedback.record(
      event({ key: 'addressed:701', commentId: '701', kind: 'addressed', counts: { addressed: 1 } }),
    );
    await t.store.feedback.record(
      event({
        key: 'thread:PRRT_9:resolved',
        kind: 'resolved',
        pending: true,
        counts: { dismissed: 1 },
        cluster: null,
      }),
    );
    expect(await t.store.feedback.totalsByRepo()).toEqual([
      { repo: 'acme/api', posted: 1, up: 0, down: 0, dismissed: 0, addressed: 0 },
      { repo: 'Octo/Demo', posted: 3, up: 1, down: 1, dismissed: 1, addressed: 1 },
    ]);
    // The report's source: each posted line comment with what was counted on it.
    const source = await t.store.reads.reportSource({ repo: null }, DEFAULT_REPORT_LIMITS);
    const rows = source.lineComments
      .map((c) => [c.repo, c.commentId, c.up, c.down, c.dismissed, c.addressed])
      .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    expect(rows).toEqual([
      [REPO, '700', 1, 1, 1, 0],
      [REPO, '701', 0, 0, 0, 1],
      [REPO, '702', 0, 0, 0, 0],
      ['acme/api', '800', 0, 0, 0, 0],
    ]);
  });

  test('the recorder folds a finding into the most alike cluster of its repository, else a new one', async () => {
    const run = 'run_1';
    await t.store.findings.recordMany(
      { runId: run, reviewKey: 'k', repo: REPO, prNumber: 7, headSha: 'a'.repeat(40) },
      [
        {
          severity: 'high',
          category: 'concurrency',
          path: 'src/cache.ts',
          line: 2,
          title: 'Race between evict() and set()',
          body: 'If evict() runs while another request calls set(), the write is lost because evict deletes the key between get and set.',
          fingerprint: 'fp_race',
          outsideDiff: false,
        },
        {
          severity: 'low',
          category: 'style',
          path: 'src/log.ts',
          line: 3,
          title: 'Use the logger instead of console.log',
          body: 'console.log bypasses the structured logger.',
          fingerprint: 'fp_log',
          outsideDiff: false,
        },
      ],
    );
    const existing = await t.store.memory.createCluster({
      repo: 'octo/demo',
      label: 'Eviction races',
      exemplar: {
        title: 'Eviction races with concurrent writes',
        body: 'evict() runs between get() and set(), so a concurrent write can be lost when the key is evicted.',
      },
      actor: 'op',
    });
    // A cluster of another repository, word for word the same: never used for this one.
    await t.store.memory.createCluster({
      repo: 'other/repo',
      label: 'x',
      exemplar: {
        title: 'Race between evict() and set()',
        body: 'If evict() runs while another request calls set().',
      },
      actor: 'op',
    });
    const thread = (commentId: string, fingerprint: string): ReviewThreadRecord => ({
      id: 1,
      repo: REPO,
      prNumber: 7,
      fingerprint,
      runId: run,
      reviewId: '5555',
      commentId,
      commentNodeId: null,
      path: 'src/cache.ts',
      line: 2,
      url: null,
      status: 'open',
      resolvedRunId: null,
      createdAt: 0,
      updatedAt: 0,
    });
    const recorder = new FeedbackRecorder({ store: t.store, log: createLogger('silent') });
    const reply = { owner: 'Octo', repo: 'Demo', number: 7, author: 'mona', path: 'src/cache.ts' };
    const race = await recorder.ignore(thread('700', 'fp_race'), { ...reply, commentId: 9001 });
    expect(race.event.clusterId).toBe(existing.id);
    expect(await t.store.memory.getCluster(existing.id)).toMatchObject({
      action: 'suppress',
      size: 1,
      feedback: { dismissed: 1 },
    });
    const log = await recorder.record(thread('701', 'fp_log'), {
      key: 'reaction:5',
      kind: 'up',
      counts: { up: 1 },
      actor: 'github:mona',
    });
    expect(log).toMatchObject({ recorded: true, clusterCreated: true });
    expect(await t.store.memory.getCluster(log.event.clusterId!)).toMatchObject({
      repo: REPO,
      action: 'none',
      label: 'Use the logger instead of console.log',
      exemplar: { title: 'Use the logger instead of console.log', category: 'style', path: 'src/log.ts' },
      feedback: { up: 1 },
    });
    // learn: a context of the repository for the path, created once for a reply.
    const learned = await recorder.learn(
      thread('700', 'fp_race'),
      { ...reply, commentId: 9002 },
      'Evict under the lock.\nAlways.',
    );
    expect(learned.context).toMatchObject({
      repo: 'Octo/Demo',
      paths: ['src/cache.ts'],
      title: 'Evict under the lock.',
      body: 'Evict under the lock.\nAlways.',
      source: 'comment',
      createdBy: 'github:mona',
      enabled: true,
    });
    const again = await recorder.learn(
      thread('700', 'fp_race'),
      { ...reply, commentId: 9002 },
      'Evict under the lock.',
    );
    expect(again.recorded.recorded).toBe(false);
    expect(again.context.id).toBe(learned.context.id);
    expect(await t.store.memory.listContexts({ limit: 10 })).toHaveLength(1);
  });

  test('migration 024 goes down and up', async () => {
    const knex = t.store.db.knex;
    await t.store.feedback.record(event());
    await migrateDownTo(knex, '023-alerts');
    expect(await knex.schema.hasTable('memory_feedback')).toBe(false);
    await knex.migrate.latest({ migrationSource });
    expect(await t.store.feedback.get('reaction:1')).toBeNull();
    expect((await t.store.feedback.record(event())).recorded).toBe(true);
  });
}
