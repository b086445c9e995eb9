import { RECHECK_MS, clusterIndex } from '../../src/memory/cluster-index.js';
import { migrationSource } from '../../src/store/migrations/index.js';
import { SuppressionStore } from '../../src/store/suppression.js';
import { migrateDownTo, openTestStore, type TestDialect, type TestStore } from '../helpers/store.js';

const REPO = 'Octo/Demo';

/** What a review reads and writes to withhold findings like dismissed ones (store/suppression.ts), per dialect. */
export function suppressionStoreSuite(dialect: TestDialect): void {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const newCluster = (id: string, title: string, over: Record<string, unknown> = {}) =>
    t.store.memory.createCluster({
      id,
      repo: REPO,
      label: title,
      exemplar: { title, body: `${title}: why it matters` },
      actor: 'test',
      ...over,
    });

  test('clusters: every cluster of the repository, in any spelling, oldest first', async () => {
    await newCluster('clu_b', 'Second', { action: 'suppress' });
    t.clock.advance(1000);
    await newCluster('clu_a', 'Third', { action: 'keep' });
    await t.store.memory.createCluster({
      id: 'clu_other',
      repo: 'octo/other',
      label: 'x',
      exemplar: { title: 'x', body: 'x' },
      actor: 'test',
    });
    expect(await t.store.suppression.clusters('octo/DEMO')).toEqual([
      {
        id: 'clu_b',
        title: 'Second',
        body: 'Second: why it matters',
        action: 'suppress',
        feedback: { up: 0, dismissed: 0 },
      },
      {
        id: 'clu_a',
        title: 'Third',
        body: 'Third: why it matters',
        action: 'keep',
        feedback: { up: 0, dismissed: 0 },
      },
    ]);
    expect(await t.store.suppression.clusters('nobody/none')).toEqual([]);
  });

  test('dismissedOnPr: the findings of the PR with a counted dismissal, any status, each once (newest)', async () => {
    const finding = (
      title: string,
      fingerprint: string,
      status: 'published' | 'suppressed' = 'published',
    ) => ({
      severity: 'medium',
      category: 'correctness',
      path: 'src/a.ts',
      line: 3,
      title,
      body: `${title} body`,
      fingerprint,
      outsideDiff: false,
      status,
    });
    const owner = (runId: string, prNumber = 7) => ({
      runId,
      reviewKey: runId,
      repo: REPO,
      prNumber,
      headSha: 'a'.repeat(40),
    });
    await t.store.findings.recordMany(owner('run_1'), [
      finding('Old title', 'fp_1'),
      finding('Kept', 'fp_2'),
    ]);
    t.clock.advance(1000);
    await t.store.findings.recordMany(owner('run_2'), [finding('New title', 'fp_1', 'suppressed')]);
    await t.store.findings.recordMany(owner('run_3', 8), [finding('Other PR', 'fp_3')]);
    const dismissal = (key: string, fingerprint: string, prNumber: number, counts: Record<string, number>) =>
      t.store.feedback.record({
        key,
        repo: 'octo/demo',
        prNumber,
        commentId: key,
        fingerprint,
        kind: 'down',
        counts,
        actor: 'github:mona',
        cluster: null,
      });
    await dismissal('reaction:1', 'fp_1', 7, { down: 1, dismissed: 1 });
    await dismissal('reaction:2', 'fp_2', 7, { up: 1 });
    await dismissal('reaction:3', 'fp_3', 8, { down: 1, dismissed: 1 });
    expect(await t.store.suppression.dismissedOnPr(REPO, 7)).toEqual([
      { fingerprint: 'fp_1', title: 'New title', body: 'New title body', path: 'src/a.ts' },
    ]);
    expect(await t.store.suppression.dismissedOnPr(REPO, 9)).toEqual([]);
  });

  test('recordWithheld: each finding once per run; a cluster grows by one and its revision moves on', async () => {
    await newCluster('clu_1', 'Suppressed', { action: 'suppress', size: 2 });
    const run = { repo: REPO, prNumber: 7, runId: 'run_1' };
    const entries = [
      { fingerprint: 'fp_a', clusterId: 'clu_1', reason: 'cluster' as const },
      { fingerprint: 'fp_b', clusterId: null, reason: 'dismissed' as const },
    ];
    expect(await t.store.suppression.recordWithheld(run, entries)).toBe(2);
    expect(await t.store.memory.getCluster('clu_1')).toMatchObject({ size: 3, revision: 2 });
    // The same run again (a retried job): nothing counts twice.
    expect(await t.store.suppression.recordWithheld(run, entries)).toBe(0);
    expect(await t.store.memory.getCluster('clu_1')).toMatchObject({ size: 3, revision: 2 });
    // The next run's finding joins again.
    expect(await t.store.suppression.recordWithheld({ ...run, runId: 'run_2' }, entries.slice(0, 1))).toBe(1);
    expect(await t.store.memory.getCluster('clu_1')).toMatchObject({ size: 4, revision: 3 });
    expect(await t.store.suppression.withheldForRun('run_1')).toEqual([
      { repo: REPO, prNumber: 7, ...entries[0] },
      { repo: REPO, prNumber: 7, ...entries[1] },
    ]);
    expect(await t.store.suppression.recordWithheld(run, [])).toBe(0);
  });

  test('clusterIndex: the texts indexed once, new clusters added, rebuilt when one is deleted', async () => {
    await newCluster('clu_1', 'Eviction races with writes');
    t.clock.advance(1000);
    await newCluster('clu_2', 'Missing null check on user');
    const ids = (index: { items: readonly { id: string }[] }) => index.items.map((c) => c.id);
    const now = () => t.clock.now();
    const first = await clusterIndex(t.store.suppression, REPO, now());
    expect(ids(first)).toEqual(['clu_1', 'clu_2']);
    const race = { title: 'Eviction races with concurrent writes', body: 'Eviction races with writes: why' };
    expect(first.best(race)?.match.id).toBe('clu_1');

    // Nothing created or deleted: the same index, in any spelling of the repository.
    const c1 = (await t.store.memory.getCluster('clu_1'))!;
    await t.store.memory.updateCluster('clu_1', c1.revision, { action: 'suppress' }, 'test');
    expect(await clusterIndex(t.store.suppression, 'octo/demo', now())).toBe(first);
    // The standing is read apart, as it is now.
    expect((await t.store.suppression.standing(['clu_1', 'gone'])).get('clu_1')).toMatchObject({
      action: 'suppress',
    });

    // A cluster created since joins the same index.
    t.clock.advance(1000);
    await newCluster('clu_3', 'SQL injection through the search term');
    const third = await clusterIndex(t.store.suppression, REPO, now());
    expect(third).toBe(first);
    expect(ids(third)).toEqual(['clu_1', 'clu_2', 'clu_3']);

    // One deleted: built again without it.
    const c2 = (await t.store.memory.getCluster('clu_2'))!;
    await t.store.memory.deleteCluster('clu_2', c2.revision, 'test');
    const fourth = await clusterIndex(t.store.suppression, REPO, now());
    expect(fourth).not.toBe(first);
    expect(ids(fourth)).toEqual(['clu_1', 'clu_3']);

    // Deleted and created between two reviews (the same count): the newest's creation tells; and past
    // RECHECK_MS the ids are read again even with the same stamp.
    const c3 = (await t.store.memory.getCluster('clu_3'))!;
    await t.store.memory.deleteCluster('clu_3', c3.revision, 'test');
    t.clock.advance(1000);
    await newCluster('clu_4', 'Unused import of lodash');
    const fifth = await clusterIndex(t.store.suppression, REPO, now());
    expect(ids(fifth)).toEqual(['clu_1', 'clu_4']);
    // (A change the stamp cannot see: a cluster's id rewritten under it.)
    await t.store.db.knex('memory_clusters').where({ id: 'clu_1' }).update({ id: 'clu_1b' });
    expect(await clusterIndex(t.store.suppression, REPO, now())).toBe(fifth);
    const later = await clusterIndex(t.store.suppression, REPO, now() + RECHECK_MS);
    expect(ids(later)).toEqual(['clu_1b', 'clu_4']);

    // Another store has its own.
    const other = new SuppressionStore(t.store.db.knex, t.clock, t.store.shownWrites);
    expect(await clusterIndex(other, REPO, now())).not.toBe(later);
    expect((await clusterIndex(t.store.suppression, 'nobody/none', now())).items).toEqual([]);
  });

  test('migration 027 steps down and up', async () => {
    const knex = t.store.db.knex;
    await migrateDownTo(knex, '025-finding-status');
    expect(await knex.schema.hasTable('memory_withheld')).toBe(false);
    await knex.migrate.latest({ migrationSource });
    expect(
      await t.store.suppression.recordWithheld({ repo: REPO, prNumber: 1, runId: 'r' }, [
        { fingerprint: 'fp', clusterId: null, reason: 'dismissed' },
      ]),
    ).toBe(1);
  });
}
