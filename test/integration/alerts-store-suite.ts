import { migrationSource } from '../../src/store/migrations/index.js';
import { migrateDownTo, openTestStore, type TestDialect, type TestStore } from '../helpers/store.js';

/** The alert store (NAMES.md "Never missing a pull request"), run once per dialect. */
export function alertStoreSuite(dialect: TestDialect): void {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const input = { kind: 'reviews_failing', repo: 'octo/demo', severity: 'warning' as const, message: 'm1' };

  test('a repeated condition counts on its open alert; another repository or key is another alert', async () => {
    const first = await t.store.alerts.raise(input);
    expect(first).toMatchObject({ created: true, deliver: true });
    expect(first.alert).toMatchObject({
      kind: 'reviews_failing',
      repo: 'octo/demo',
      severity: 'warning',
      message: 'm1',
      count: 1,
      revision: 1,
      dismissedAt: null,
      firstSeenAt: new Date(t.clock.now()).toISOString(),
    });
    await t.store.alerts.markDelivery(first.alert.id, null);
    t.clock.advance(60_000);
    const again = await t.store.alerts.raise({
      ...input,
      repo: 'Octo/Demo',
      message: 'm2',
      severity: 'critical',
    });
    expect(again).toMatchObject({ created: false, deliver: false });
    expect(again.alert).toMatchObject({
      id: first.alert.id,
      count: 2,
      revision: 2,
      message: 'm2',
      severity: 'critical',
      firstSeenAt: first.alert.firstSeenAt,
      lastSeenAt: new Date(t.clock.now()).toISOString(),
    });
    t.clock.advance(-30_000);
    const other = await t.store.alerts.raise({ ...input, repo: 'octo/other' });
    const keyed = await t.store.alerts.raise({ ...input, key: 'run-1' });
    t.clock.advance(30_000);
    expect(new Set([first.alert.id, other.alert.id, keyed.alert.id]).size).toBe(3);
    // Newest occurrence first: the repeated one was seen last.
    expect((await t.store.alerts.list()).map((a) => a.id)[0]).toBe(first.alert.id);
    expect(await t.store.alerts.list()).toHaveLength(3);
    expect(await t.store.alerts.openCounts()).toEqual({ info: 0, warning: 2, critical: 1 });
  });

  test('a failed delivery stays pending, so the next occurrence is delivered again', async () => {
    const first = await t.store.alerts.raise(input);
    await t.store.alerts.markDelivery(first.alert.id, 'Telegram answered 500');
    expect((await t.store.alerts.raise(input)).deliver).toBe(true);
    await t.store.alerts.markDelivery(first.alert.id, null);
    expect((await t.store.alerts.raise(input)).deliver).toBe(false);
  });

  test('dismissal at the current revision; stale is a conflict, unknown is not found; the next occurrence opens a new alert', async () => {
    const { alert } = await t.store.alerts.raise(input);
    await t.store.alerts.raise(input); // revision 2
    expect(await t.store.alerts.dismiss(alert.id, 1, 'op')).toEqual({
      status: 'revision_conflict',
      currentRevision: 2,
    });
    expect(await t.store.alerts.dismiss('alert_missing', 1, 'op')).toEqual({ status: 'not_found' });
    t.clock.advance(1000);
    const dismissed = await t.store.alerts.dismiss(alert.id, 2, 'op');
    expect(dismissed).toMatchObject({
      status: 'dismissed',
      alert: { id: alert.id, revision: 3, dismissedAt: new Date(t.clock.now()).toISOString() },
    });
    expect(await t.store.alerts.list()).toEqual([]);
    expect((await t.store.alerts.list({ includeDismissed: true })).map((a) => a.id)).toEqual([alert.id]);
    const reopened = await t.store.alerts.raise(input);
    expect(reopened.created).toBe(true);
    expect(reopened.alert.id).not.toBe(alert.id);
  });

  test('migration 023 goes down and up again', async () => {
    const knex = t.store.db.knex;
    await t.store.alerts.raise(input);
    await migrateDownTo(knex, '022-memory');
    expect(await knex.schema.hasTable('alerts')).toBe(false);
    await knex.migrate.latest({ migrationSource });
    expect(await knex.schema.hasTable('alerts')).toBe(true);
    expect(await t.store.alerts.list()).toEqual([]);
  });
}
