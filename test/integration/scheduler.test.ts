import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.js';
import { createProbot } from '../../src/github/probot.js';
import { createCommandBridge, createScheduler } from '../../src/compose/parts.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import type { IncomingDelivery } from '../../src/store/deliveries.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

const silent = pino({ level: 'silent' });
const DAY = 86_400_000;

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore('sqlite');
});
afterEach(async () => {
  await t.cleanup();
});

function runtimeScheduler(env: Record<string, string>, fetchImpl?: typeof fetch) {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const probot = createProbot(config.github, silent);
  const bridge = createCommandBridge(t.store, probot, config, silent, { clock: t.clock });
  return createScheduler(t.store, bridge, config, silent, { timers: t.clock, fetch: fetchImpl });
}

describe('scheduler', () => {
  // The ticks run on a manual clock: croner says when each is due, the scheduler waits for it on the
  // injected timers, and the test moves the clock instead of waiting for the minute.
  test('a job runs when the clock reaches its cron time (UTC), with a heartbeat and an artifact; stop() ends the ticks', async () => {
    const clock = t.clock;
    clock.set(Date.UTC(2026, 0, 1, 10, 0, 30));
    const ticks: string[] = [];
    const scheduler = new Scheduler({
      store: t.store.scheduler,
      log: silent,
      timers: clock,
      jobs: [
        {
          name: 'every-minute',
          expression: '* * * * *',
          run: async () => {
            ticks.push(new Date(clock.now()).toISOString());
            return { n: ticks.length };
          },
        },
      ],
    });
    scheduler.start();
    expect(scheduler.startedAt).toBe(Date.UTC(2026, 0, 1, 10, 0, 30));
    clock.advance(29_999);
    await scheduler.idle();
    expect(ticks).toEqual([]);
    expect(await t.store.scheduler.get('every-minute')).toBeNull();
    clock.advance(1);
    await scheduler.idle();
    expect(ticks).toEqual(['2026-01-01T10:01:00.000Z']);
    expect(await t.store.scheduler.get('every-minute')).toMatchObject({
      expression: '* * * * *',
      lastStatus: 'ok',
      runs: 1,
      artifact: { n: 1, generatedAt: '2026-01-01T10:01:00.000Z' },
    });
    for (let minute = 0; minute < 3; minute++) {
      clock.advance(60_000);
      await scheduler.idle();
    }
    expect(ticks).toEqual([
      '2026-01-01T10:01:00.000Z',
      '2026-01-01T10:02:00.000Z',
      '2026-01-01T10:03:00.000Z',
      '2026-01-01T10:04:00.000Z',
    ]);
    expect(await t.store.scheduler.get('every-minute')).toMatchObject({ runs: 4 });
    await scheduler.stop();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(10 * 60_000);
    await scheduler.idle();
    expect(ticks).toHaveLength(4);
  });

  test('a tick that finds the previous run still going is skipped and logged: a job never overlaps itself', async () => {
    const clock = t.clock;
    clock.set(Date.UTC(2026, 0, 1, 10, 0, 0));
    const warnings: Array<{ event?: string; job?: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    let runs = 0;
    let entered!: () => void;
    const first = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<Record<string, unknown>>((r) => (release = () => r({ slow: true })));
    const scheduler = new Scheduler({
      store: t.store.scheduler,
      log,
      timers: clock,
      jobs: [
        {
          name: 'slow',
          expression: '* * * * *',
          run: () => {
            runs++;
            entered();
            return runs === 1 ? gate : Promise.resolve({ slow: false });
          },
        },
      ],
    });
    scheduler.start();
    try {
      clock.advance(60_000); // 10:01: the first run starts and hangs
      await first;
      clock.advance(60_000); // 10:02: still going, so this tick is skipped
      release();
      await scheduler.idle();
      expect(runs).toBe(1);
      expect(warnings).toEqual([expect.objectContaining({ event: 'cron-overlap', job: 'slow' })]);
      clock.advance(60_000); // 10:03: runs again
      await scheduler.idle();
      expect(runs).toBe(2);
      expect(await t.store.scheduler.get('slow')).toMatchObject({ runs: 2, artifact: { slow: false } });
    } finally {
      await scheduler.stop();
    }
  });

  test('a tick further away than one timer can wait is reached in several waits', async () => {
    const clock = t.clock;
    clock.set(Date.UTC(2026, 0, 1, 0, 0, 30));
    let runs = 0;
    const scheduler = new Scheduler({
      store: t.store.scheduler,
      log: silent,
      timers: clock,
      jobs: [{ name: 'yearly', expression: '0 0 1 1 *', run: async () => ({ n: ++runs }) }],
    });
    scheduler.start();
    try {
      const tick = Date.UTC(2027, 0, 1);
      clock.advance(tick - clock.now() - 1);
      await scheduler.idle();
      expect(runs).toBe(0);
      clock.advance(1);
      await scheduler.idle();
      expect(runs).toBe(1);
      expect((await t.store.scheduler.get('yearly'))!.artifact).toEqual({
        n: 1,
        generatedAt: '2027-01-01T00:00:00.000Z',
      });
    } finally {
      await scheduler.stop();
    }
  });

  test('a bad cron expression stops start-up', () => {
    expect(
      () =>
        new Scheduler({
          store: t.store.scheduler,
          log: silent,
          timers: t.clock,
          jobs: [{ name: 'broken', expression: '61 * * * *', run: async () => ({}) }],
        }),
    ).toThrow();
  });

  test('a failing job records its error and answers it to runNow', async () => {
    const scheduler = new Scheduler({
      store: t.store.scheduler,
      log: silent,
      timers: t.clock,
      jobs: [
        { name: 'fails', expression: '* * * * *', run: async () => Promise.reject(new Error('disk full')) },
      ],
    });
    expect(await scheduler.runNow('fails')).toEqual({ status: 'error', error: 'disk full' });
    expect(await t.store.scheduler.get('fails')).toMatchObject({
      lastStatus: 'error',
      lastError: 'disk full',
    });
  });

  test('maintenance expires dedupe markers and dashboard sessions and deletes finished deliveries past the retention', async () => {
    const delivery = (id: string): IncomingDelivery => ({
      id,
      event: 'ping',
      action: null,
      raw: '{}',
      bytes: 2,
      repo: null,
      prNumber: null,
      installationId: null,
      outcome: 'unsupported_event',
      job: null,
    });
    t.clock.set(Date.UTC(2026, 0, 1));
    await t.store.deliveries.recordBatch([delivery('old')]);
    t.clock.set(Date.UTC(2026, 0, 1) + 10 * DAY);
    await t.store.deliveries.recordBatch([delivery('recent')]);
    const session = await t.store.uiSessions.create('mona', 'github', DAY);
    t.clock.set(Date.UTC(2026, 0, 1) + 40 * DAY);
    const scheduler = runtimeScheduler({ VERDICT_DELIVERY_RETENTION_DAYS: '35' });
    const run = await scheduler.runNow('maintenance');
    // Both markers expired (the 7-day TTL); only the 40-day-old delivery is past the 35-day retention.
    expect(run).toMatchObject({
      status: 'ok',
      artifact: { markersExpired: 2, deliveriesDeleted: 1, sessionsExpired: 1, retentionDays: 35 },
    });
    expect(await t.store.uiSessions.find(session.token)).toBeNull();
    expect((await t.store.deliveries.list()).map((d) => d.id)).toEqual(['recent']);
    const keepAll = runtimeScheduler({ VERDICT_DELIVERY_RETENTION_DAYS: '0' });
    t.clock.advance(400 * DAY);
    expect(await keepAll.runNow('maintenance')).toMatchObject({ artifact: { deliveriesDeleted: 0 } });
  });

  describe('watchdog alert delivery', () => {
    let server: Server;
    let received: any[];
    let status: number;
    let url: string;
    beforeEach(async () => {
      received = [];
      status = 204;
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          received.push({ headers: req.headers, body: JSON.parse(body) });
          res.writeHead(status).end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`;
    });
    afterEach(async () => {
      await new Promise((r) => server.close(r));
    });

    test('off by default: messages are only logged and stored', async () => {
      const scheduler = runtimeScheduler({});
      await t.store.scheduler.started('maintenance', '17 * * * *');
      await t.store.scheduler.finished('maintenance', { status: 'ok', artifact: { cleaned: 1 } });
      const run = await scheduler.runNow('watchdog');
      expect(run).toMatchObject({
        status: 'ok',
        artifact: { alert: 'disabled', messages: ['maintenance artifact has a missing generatedAt'] },
      });
      expect(received).toEqual([]);
    });

    test('a command claimed more than 10 minutes ago and never finished is reported', async () => {
      const scheduler = runtimeScheduler({});
      await t.store.commands.create({ id: 'cmd-stuck', kind: 'requeue', payload: {}, actor: 'test' });
      await t.store.commands.claim('cmd-stuck', 'bridge:dead:1');
      t.clock.advance(10 * 60_000);
      expect(await scheduler.runNow('watchdog')).toMatchObject({ artifact: { messages: [] } });
      t.clock.advance(1);
      const run = await scheduler.runNow('watchdog');
      expect(run).toMatchObject({
        artifact: {
          messages: [
            `command cmd-stuck (requeue) has been running since ${new Date(t.clock.now() - 10 * 60_000 - 1).toISOString()}, claimed by bridge:dead:1`,
          ],
        },
      });
    });

    test('with VERDICT_WATCHDOG_ALERT_URL the messages are POSTed as JSON; nothing is sent when all is well', async () => {
      const scheduler = runtimeScheduler({ VERDICT_WATCHDOG_ALERT_URL: url });
      expect(await scheduler.runNow('watchdog')).toMatchObject({ artifact: { alert: 'none', messages: [] } });
      expect(received).toEqual([]);
      await t.store.scheduler.started('command-bridge', '* * * * *');
      await t.store.scheduler.finished('command-bridge', { status: 'ok', artifact: { generatedAt: 'soon' } });
      expect(await scheduler.runNow('watchdog')).toMatchObject({ artifact: { alert: 'delivered' } });
      expect(received).toHaveLength(1);
      expect(received[0].headers['content-type']).toBe('application/json');
      expect(received[0].body).toEqual({
        source: 'Verdict watchdog',
        generatedAt: new Date(t.clock.now()).toISOString(),
        messages: ['command-bridge artifact has an invalid generatedAt: "soon"'],
      });
      status = 500;
      expect(await scheduler.runNow('watchdog')).toMatchObject({ artifact: { alert: 'failed' } });
    });
  });
});
