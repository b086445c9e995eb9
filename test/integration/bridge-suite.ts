import { pino } from 'pino';
import { CommandBridge, type CommandExecutors } from '../../src/bridge/command-bridge.js';
import { CommandFailure } from '../../src/bridge/command-rules.js';
import { randomId, type Clock } from '../../src/clock.js';
import type { Command } from '../../src/store/commands.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { IncomingDelivery } from '../../src/store/deliveries.js';
import { openTestStore, type TestDialect, type TestStore } from '../helpers/store.js';

const silent = pino({ level: 'silent' });

/**
 * A meeting point for `parties` bridges: each one's first command waits there until every bridge has
 * started a command, so that in a race each bridge runs at least one (however fast the other is).
 */
function meetingPoint(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const everyone = new Promise<void>((r) => (open = r));
  return async () => {
    if (++arrived === parties) open();
    await everyone;
  };
}

/** Executors that count how often each command ran. */
function countingExecutors(
  counts: Map<string, number>,
  ranBy: Map<string, string>,
  bridge: string,
  meet?: () => Promise<void>,
) {
  const run = async (command: Command) => {
    counts.set(command.id, (counts.get(command.id) ?? 0) + 1);
    ranBy.set(command.id, bridge);
    await meet?.();
    if (command.payload.fail) throw new CommandFailure('planned_failure', `command ${command.id} fails`);
    return { ran: command.id };
  };
  return {
    requeue: run,
    'retry-publish': run,
    'replay-webhook': run,
    'sync-repositories': run,
  } satisfies CommandExecutors;
}

async function createCommands(store: Store, n: number, payload: Record<string, unknown> = {}) {
  for (let i = 0; i < n; i++) {
    await store.commands.create({
      id: `cmd-${String(i).padStart(3, '0')}`,
      kind: 'requeue',
      payload: { reviewKey: `acme/web#${i + 1}@${'a'.repeat(40)}`, ...payload },
      actor: 'test',
    });
  }
}

/** Command claims, the bridge race and scheduler records, run once per dialect. */
export function bridgeSuite(dialect: TestDialect): void {
  let t: TestStore;
  let second: Store | null = null;
  beforeEach(async () => {
    t = await openTestStore(dialect);
  });
  afterEach(async () => {
    await second?.close();
    second = null;
    await t.cleanup();
  });

  test('claim is conditional: the second claim of a command gets null and records a skipped event', async () => {
    await createCommands(t.store, 1);
    const won = await t.store.commands.claim('cmd-000', 'bridge-a');
    expect(won).toMatchObject({ status: 'running', claimedBy: 'bridge-a' });
    expect(won!.startedAt).not.toBeNull();
    expect(await t.store.commands.claim('cmd-000', 'bridge-b')).toBeNull();
    // Only the claimant finishes it.
    expect(await t.store.commands.finish('cmd-000', 'bridge-b', { status: 'succeeded', result: {} })).toBe(
      false,
    );
    expect(
      await t.store.commands.finish('cmd-000', 'bridge-a', { status: 'succeeded', result: { n: 1 } }),
    ).toBe(true);
    const events = await t.store.commands.events('cmd-000');
    expect(events.map((e) => [e.type, e.fromStatus, e.toStatus, e.actor])).toEqual([
      ['created', null, 'queued', 'test'],
      ['status', 'queued', 'running', 'bridge-a'],
      ['skipped', 'queued', null, 'bridge-b'],
      ['status', 'running', 'succeeded', 'bridge-a'],
    ]);
    expect(await t.store.commands.get('cmd-000')).toMatchObject({
      status: 'succeeded',
      result: { n: 1 },
      error: null,
    });
  });

  test('two bridges racing over 100 commands: each command is executed exactly once', async () => {
    await createCommands(t.store, 100);
    // On PostgreSQL the second bridge has a connection pool of its own, as a second bridge process has. On
    // SQLite (one process per file: better-sqlite3 runs statements on the event loop's thread, so a second
    // connection in this process would wait on the busy timeout with the loop held) the two bridges share
    // the store, their claims interleaving at every await.
    const other =
      dialect === 'pg'
        ? (second = await openStore(t.config, {
            clock: t.clock as Clock,
            ids: randomId,
            dedupeTtlSeconds: 604800,
          }))
        : t.store;
    const counts = new Map<string, number>();
    const ranBy = new Map<string, string>();
    // The first bridge to start a command waits there for the other: each executes at least one, and
    // the one that read its batch first then finds a command of that batch claimed by the other.
    const meet = meetingPoint(2);
    const bridge = (store: Store, id: string) =>
      new CommandBridge({
        store,
        id,
        authority: 'live',
        log: silent,
        batch: 10,
        executors: countingExecutors(counts, ranBy, id, meet),
      });
    const [a, b] = await Promise.all([
      bridge(t.store, 'bridge-a').runOnce(),
      bridge(other, 'bridge-b').runOnce(),
    ]);
    if (a.dryRun || b.dryRun) throw new Error('live bridges plan nothing');
    // Both bridges really competed: each executed some commands and lost some claims.
    expect(a.executed.length).toBeGreaterThan(0);
    expect(b.executed.length).toBeGreaterThan(0);
    expect(a.skipped.length + b.skipped.length).toBeGreaterThan(0);
    expect(counts.size).toBe(100);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const executedA = new Set(a.executed.map((e) => e.id));
    const executedB = new Set(b.executed.map((e) => e.id));
    expect(executedA.size + executedB.size).toBe(100);
    expect([...executedA].some((id) => executedB.has(id))).toBe(false);
    // What one bridge skipped, the other executed; skips are recorded as events by the loser.
    for (const id of a.skipped) expect(executedB.has(id)).toBe(true);
    for (const id of b.skipped) expect(executedA.has(id)).toBe(true);
    const skippedEvents = await t.store.db
      .knex('operator_command_events')
      .where({ type: 'skipped' })
      .count({ n: '*' });
    expect(Number(skippedEvents[0]!.n)).toBe(a.skipped.length + b.skipped.length);
    const all = await t.store.commands.list({ limit: 100 });
    expect(all.every((c) => c.status === 'succeeded')).toBe(true);
    for (const c of all) expect(c.claimedBy).toBe(ranBy.get(c.id));
  });

  test('a failing command ends failed with its error and code; shadow authority only plans', async () => {
    await createCommands(t.store, 2, { fail: true });
    const counts = new Map<string, number>();
    const bridge = (authority: 'live' | 'shadow') =>
      new CommandBridge({
        store: t.store,
        id: `bridge-${authority}`,
        authority,
        log: silent,
        executors: countingExecutors(counts, new Map(), `bridge-${authority}`),
      });
    const planned = await bridge('shadow').runOnce();
    expect(planned).toMatchObject({ authority: 'shadow', dryRun: true });
    expect(planned.dryRun && planned.planned.map((p) => p.id)).toEqual(['cmd-000', 'cmd-001']);
    expect(counts.size).toBe(0);
    expect((await t.store.commands.list()).map((c) => c.status)).toEqual(['queued', 'queued']);

    const pass = await bridge('live').runOnce();
    expect(pass.dryRun === false && pass.executed.map((e) => e.status)).toEqual(['failed', 'failed']);
    expect(await t.store.commands.get('cmd-000')).toMatchObject({
      status: 'failed',
      error: 'command cmd-000 fails',
      result: { code: 'planned_failure' },
    });
    expect((await t.store.commands.get('cmd-000'))!.completedAt).not.toBeNull();
  });

  test('scheduled job heartbeats and artifacts', async () => {
    await t.store.scheduler.started('command-bridge', '* * * * *');
    expect(await t.store.scheduler.get('command-bridge')).toMatchObject({ lastStatus: 'running', runs: 1 });
    await t.store.scheduler.finished('command-bridge', {
      status: 'ok',
      artifact: { generatedAt: '2026-11-23T10:00:00.000Z', executed: 2 },
    });
    await t.store.scheduler.started('command-bridge', '* * * * *');
    await t.store.scheduler.finished('command-bridge', { status: 'error', error: 'boom' });
    expect(await t.store.scheduler.get('command-bridge')).toMatchObject({
      runs: 2,
      lastStatus: 'error',
      lastError: 'boom',
      // A failed run keeps the last artifact.
      artifact: { generatedAt: '2026-11-23T10:00:00.000Z', executed: 2 },
    });
  });

  test('delivery retention deletes finished deliveries before the cut-off, never queued ones', async () => {
    const delivery = (id: string, job: boolean): IncomingDelivery => ({
      id,
      event: 'pull_request',
      action: 'opened',
      raw: '{}',
      bytes: 2,
      repo: 'acme/web',
      prNumber: 1,
      installationId: 1,
      outcome: job ? 'enqueued' : 'unsupported_action',
      job: job ? { queue: 'webhooks', kind: 'webhook', payload: { deliveryId: id } } : null,
    });
    t.clock.set(1_000_000);
    await t.store.deliveries.recordBatch([delivery('old-processed', true), delivery('old-ignored', false)]);
    await t.store.deliveries.recordBatch([delivery('old-queued', true)]);
    await t.store.deliveries.finish('old-processed', 'processed', undefined);
    t.clock.set(5_000_000);
    await t.store.deliveries.recordBatch([delivery('new-ignored', false)]);
    expect(await t.store.deliveries.pruneFinished(2_000_000, 1)).toBe(1);
    expect(await t.store.deliveries.pruneFinished(2_000_000)).toBe(1);
    expect(await t.store.deliveries.pruneFinished(2_000_000)).toBe(0);
    const left = (await t.store.deliveries.list()).map((d) => d.id).sort();
    expect(left).toEqual(['new-ignored', 'old-queued']);
  });
}
