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
    expect(row).toEqual({
      status: 'failed',
      error: 'no_native_executor: command kind replay has no native executor',
    });
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

describe('native nightly-audit (6.4): the checks of the Node audit over D1', () => {
  it('finds unpublished and pending analyses, dead letters, stuck commands, unprocessed deliveries and failing repositories', async () => {
    const posted: any[] = [];
    const telegram: any[] = [];
    const alertUrl = async (request: Request) => {
      const body = await request.json();
      if (new URL(request.url).host === 'telegram.example.test') {
        telegram.push({ url: request.url, body });
        return new Response(JSON.stringify({ ok: true, result: {} }));
      }
      posted.push({ url: request.url, body });
      return new Response('ok');
    };
    const audit = await startIngress({
      github: alertUrl,
      bindings: {
        VERDICT_WATCHDOG_ALERT_URL: 'https://alerts.example.test/verdict',
        VERDICT_TELEGRAM_BOT_TOKEN: 'tg-token',
        VERDICT_TELEGRAM_API_URL: 'https://telegram.example.test',
      },
    });
    try {
      const at = Date.parse('2026-01-10T23:30:00Z'); // 23:30 in London
      const hours = (n: number) => at - n * 3_600_000;
      const iso = (ms: number) => new Date(ms).toISOString();
      await fire(audit, '* * * * *', iso(hours(1))); // creates the schema
      const db = await audit.d1();
      const run = (id: string, repo: string, status: string, analysis: string, publish: string, t: number) =>
        db
          .prepare(
            `INSERT INTO runs (id, review_key, repo, pr_number, trigger, status, analysis_status, publish_status, created_at, updated_at)
             VALUES (?, ?, ?, 1, 'opened', ?, ?, ?, ?, ?)`,
          )
          .bind(id, `${repo}#1@${id}`, repo, status, analysis, publish, t, t)
          .run();
      await run('unpub', 'acme/web', 'completed', 'analysed', 'failed', hours(3));
      await run('pend', 'acme/web', 'running', 'analysed', 'pending', hours(2));
      await run('fresh', 'acme/web', 'running', 'analysed', 'pending', hours(0.1)); // under an hour: not yet
      for (const [i, h] of [5, 4, 3].entries())
        await run(`f${i}`, 'acme/broken', 'failed', 'failed', 'pending', hours(h));
      // acme/broken's operator configuration asks for its alerts on Telegram (NAMES.md).
      await db
        .prepare(
          "INSERT INTO repositories (full_name, owner, name, installed, config, created_at, updated_at) VALUES ('acme/broken', 'acme', 'broken', 1, ?, 1, 1)",
        )
        .bind(JSON.stringify({ enabled: true, alerts: { telegram: true, target: '-1001234' } }))
        .run();
      const delivery = (id: string, outcome: string | null, reason: string | null, t: number) =>
        db
          .prepare(
            `INSERT INTO native_deliveries (id, event, outcome, bytes, received_at, dispatch_outcome, dispatch_reason)
             VALUES (?, 'pull_request', 'enqueued', 1, ?, ?, ?)`,
          )
          .bind(id, iso(t), outcome, reason)
          .run();
      await delivery('d-dead', 'dead_lettered', 'max_attempts', hours(5));
      await delivery('d-waiting', null, null, hours(2));
      await delivery('d-new', null, null, hours(0.2));
      await db
        .prepare(
          "INSERT INTO native_commands (id, kind, status, created_at, updated_at) VALUES ('c1', 'replay', 'running', ?, ?)",
        )
        .bind(iso(hours(1)), iso(hours(1)))
        .run();

      // The month's spend: one model span per analysed run, 1.2 USD in all, against a budget of 1 USD.
      await db
        .prepare("UPDATE review_policies SET document = ? WHERE workspace = 'default'")
        .bind(JSON.stringify({ monthlyModelBudgetUsd: 1 }))
        .run();
      for (const [i, runId] of ['unpub', 'pend', 'fresh'].entries()) {
        await db
          .prepare(
            "INSERT INTO traces (id, run_id, name, status, started_at) VALUES (?, ?, 'review', 'ok', ?)",
          )
          .bind(`t-${runId}`, runId, hours(3))
          .run();
        await db
          .prepare(
            `INSERT INTO spans (trace_id, span_id, kind, name, status, provider, model, input_tokens, output_tokens, cost_usd, started_at)
             VALUES (?, ?, 'model', 'call', 'ok', 'openai', 'gpt-4o-mini', 1000, 100, ?, ?)`,
          )
          .bind(`t-${runId}`, `s-${runId}`, [0.5, 0.5, 0.2][i], hours(3))
          .run();
      }
      await fire(audit, '30 23 * * *', iso(at));
      const row: any = await db
        .prepare("SELECT detail FROM native_job_runs WHERE job = 'nightly-audit' ORDER BY seq DESC LIMIT 1")
        .first();
      const detail = JSON.parse(row.detail);
      expect(detail.checks).toEqual({
        analysedNeverPublished: { count: 1, sample: ['acme/web#1@unpub'] },
        publicationsPending: { count: 1, sample: ['acme/web#1@pend'] },
        deadLetters: { count: 1, sample: ['d-dead (max_attempts)'] },
        commandsStuck: { count: 1, sample: ['c1 (replay)'] },
        deliveriesNotProcessed: { count: 1, sample: ['d-waiting'] },
        reviewsFailing: { count: 1, sample: ['acme/broken'] },
        budget: { budgetUsd: 1, spentUsd: 1.2, reached: true, known: true },
      });
      expect(detail.findings).toHaveLength(7);
      expect(detail.findings).toContain('budget: 1.2 USD spent of 1 this month');

      // Each finding is an alert, delivered to the alert URL as the Node runtime delivers it.
      const kinds = [
        'audit_inconsistency',
        'audit_inconsistency',
        'audit_inconsistency',
        'audit_inconsistency',
        'dead_letters',
        'reviews_failing',
        'budget_reached',
      ];
      expect(posted.map((p) => p.body.alert.kind)).toEqual(kinds);
      expect(posted[0]).toMatchObject({
        url: 'https://alerts.example.test/verdict',
        body: { source: 'verdict alerts', alert: { severity: 'warning', count: 1, dismissedAt: null } },
      });
      expect(posted[5].body.alert).toMatchObject({
        repo: 'acme/broken',
        message: 'The last 3 reviews of acme/broken failed',
      });
      // ...and to Telegram for the repository that asks for it, with the Node runtime's text; no other.
      expect(telegram).toEqual([
        {
          url: 'https://telegram.example.test/bottg-token/sendMessage',
          body: {
            chat_id: '-1001234',
            text: 'Verdict critical: The last 3 reviews of acme/broken failed\nreviews_failing · acme/broken',
          },
        },
      ]);
      // The next night finds the dead letter again: counted on its alert, not delivered again.
      await fire(audit, '30 23 * * *', iso(at + 86_400_000));
      expect(posted).toHaveLength(7);
      const dead = await db.prepare("SELECT count FROM native_alerts WHERE kind = 'dead_letters'").first();
      expect(dead).toEqual({ count: 2 });

      // The watchdog's messages go to the same URL, as the Node watchdog sends them.
      await fire(audit, '3-59/15 * * * *', iso(at));
      expect(posted.at(-1)).toEqual({
        url: 'https://alerts.example.test/verdict',
        body: { source: 'Verdict watchdog', generatedAt: iso(at), messages: ['no cron heartbeat'] },
      });
    } finally {
      await audit.close();
    }
  });
});
