import { startIngress, type Harness } from './harness.js';

let h: Harness;
let live: Harness;
beforeAll(async () => {
  h = await startIngress();
  live = await startIngress({ bindings: { VERDICT_BRIDGE_AUTHORITY: 'live' } });
});
afterAll(async () => {
  await h.close();
  await live.close();
});

const fire = async (harness: Harness, cron: string, at: string) => {
  const worker: any = await harness.mf.getWorker('verdict');
  return worker.scheduled({ cron, scheduledTime: new Date(at) });
};
const runs = async (harness: Harness) =>
  (await (await harness.d1()).prepare('SELECT job, detail FROM native_job_runs ORDER BY seq').all()).results;

async function queueCommand(harness: Harness, id: string) {
  const db = await harness.d1();
  await fire(harness, '2-59/15 * * * *', '2026-01-10T10:02:00Z'); // creates the schema
  await db
    .prepare(
      "INSERT INTO native_commands (id, kind, status, created_at, updated_at) VALUES (?, 'replay', 'queued', 'x', 'x')",
    )
    .bind(id)
    .run();
}

describe('native crons (6.4, 3.5)', () => {
  it('nightly-audit runs only at 23:30 London time, in winter and in summer', async () => {
    await fire(h, '30 22 * * *', '2026-01-10T22:30:00Z'); // 22:30 in London (GMT): gated
    await fire(h, '30 23 * * *', '2026-01-10T23:30:00Z'); // 23:30 GMT: runs
    await fire(h, '30 22 * * *', '2026-07-10T22:30:00Z'); // 23:30 BST: runs
    await fire(h, '30 23 * * *', '2026-07-10T23:30:00Z'); // 00:30 BST: gated
    const audits = (await runs(h)).filter((r: any) => r.job === 'nightly-audit');
    expect(audits).toHaveLength(2);
  });

  it('shadow bridge plans queued commands without claiming them (dryRun)', async () => {
    await queueCommand(h, 'cmd-shadow');
    await fire(h, '* * * * *', '2026-01-10T10:05:00Z');
    const bridge = (await runs(h)).filter((r: any) => r.job === 'command-bridge');
    expect(JSON.parse(bridge.at(-1).detail)).toEqual({
      authority: 'shadow',
      dryRun: true,
      planned: ['cmd-shadow'],
    });
    const row = await (
      await h.d1()
    )
      .prepare('SELECT status FROM native_commands WHERE id = ?')
      .bind('cmd-shadow')
      .first();
    expect(row.status).toBe('queued');
  });

  it('live bridge claims a queued command once', async () => {
    await queueCommand(live, 'cmd-live');
    await fire(live, '* * * * *', '2026-01-10T10:05:00Z');
    await fire(live, '* * * * *', '2026-01-10T10:06:00Z');
    const bridge = (await runs(live))
      .filter((r: any) => r.job === 'command-bridge')
      .map((r: any) => JSON.parse(r.detail));
    expect(bridge[0]).toMatchObject({ authority: 'live', dryRun: false, claimed: ['cmd-live'] });
    expect(bridge[1]).toMatchObject({ claimed: [] });
    const row = await (
      await live.d1()
    )
      .prepare('SELECT status, error FROM native_commands WHERE id = ?')
      .bind('cmd-live')
      .first();
    expect(row.status).toBe('failed');
  });

  it('the watchdog reports a missing cron heartbeat', async () => {
    await fire(live, '3-59/15 * * * *', '2026-01-10T11:03:00Z');
    const dog = (await runs(live))
      .filter((r: any) => r.job === 'watchdog')
      .map((r: any) => JSON.parse(r.detail));
    expect(dog.at(-1)).toEqual({ alerts: 'disabled', messages: ['no cron heartbeat'] });
    await fire(live, '3-59/15 * * * *', '2026-01-10T10:07:00Z');
    const fresh = (await runs(live))
      .filter((r: any) => r.job === 'watchdog')
      .map((r: any) => JSON.parse(r.detail));
    expect(fresh.at(-1).messages).toEqual([]);
  });
});
