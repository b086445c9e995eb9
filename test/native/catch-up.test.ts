import { generateKeyPairSync } from 'node:crypto';
import { startIngress, until, type Harness } from './harness.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

const NOW = Date.parse('2026-11-20T12:00:00Z');
const at = (hoursAgo: number) => new Date(NOW - hoursAgo * 3_600_000).toISOString();
const HEAD_1 = '1'.repeat(40);
const HEAD_2 = '2'.repeat(40);
const API = 'https://api.github.test';

const attempt = (id: number, guid: string, hoursAgo: number, status: number) => ({
  id,
  guid,
  delivered_at: at(hoursAgo),
  status_code: status,
  event: 'pull_request',
  action: 'opened',
});

const calls: string[] = [];

/** GitHub's App and installation endpoints of the loop, shaped as the REST API answers them. */
function github(request: Request): Response {
  const url = new URL(request.url);
  const path = `${url.pathname}${url.search}`;
  calls.push(`${request.method} ${path}`);
  if (path === '/app/hook/deliveries?per_page=100') {
    // Newest first; the next page is named in the link header.
    return Response.json(
      [
        attempt(12, 'g1', 0.5, 502),
        attempt(22, 'g2', 1, 200),
        attempt(21, 'g2', 2, 500),
        attempt(11, 'g1', 3, 500),
      ],
      { headers: { link: `<${API}/app/hook/deliveries?per_page=100&cursor=p2>; rel="next"` } },
    );
  }
  if (path === '/app/hook/deliveries?per_page=100&cursor=p2') {
    return Response.json([attempt(31, 'g3', 4, 500), attempt(41, 'g4', 80, 500)]);
  }
  if (request.method === 'POST' && /^\/app\/hook\/deliveries\/\d+\/attempts$/.test(url.pathname)) {
    return Response.json({}, { status: 202 });
  }
  if (request.method === 'POST' && url.pathname === '/app/installations/77/access_tokens') {
    return Response.json({ token: 'ghs_77', expires_at: '2030-01-01T00:00:00Z' }, { status: 201 });
  }
  if (path === '/repos/acme/web/pulls?state=open&per_page=100') {
    return Response.json([
      { number: 1, head: { sha: HEAD_1 } },
      { number: 2, head: { sha: HEAD_2 } },
    ]);
  }
  if (path === '/repos/acme/off/pulls?state=open&per_page=100') {
    return Response.json([{ number: 3, head: { sha: HEAD_1 } }]);
  }
  return Response.json({ message: 'Not Found' }, { status: 404 });
}

let h: Harness;
beforeAll(async () => {
  h = await startIngress({
    github,
    bindings: { APP_ID: '4242', PRIVATE_KEY: privateKey, GITHUB_API_URL: API },
  });
});
afterAll(() => h.close());

const fire = async (cron = '2-59/15 * * * *') => {
  const worker: any = await h.mf.getWorker('verdict');
  await worker.scheduled({ cron, scheduledTime: new Date(NOW) });
  if (cron !== '2-59/15 * * * *') return null;
  const db = await h.d1();
  const row: any = await db
    .prepare("SELECT detail FROM native_job_runs WHERE job = 'pr-agent-loop' ORDER BY seq DESC LIMIT 1")
    .first();
  return JSON.parse(row.detail);
};

describe('native pr-agent-loop (6.4): the catch-up pass', () => {
  it('redelivers what never arrived and queues the open pull requests whose head has no run, once', async () => {
    // Held here already: g3's marker is in KV. Reviewed already: acme/web#2 at HEAD_2. Disabled: acme/off.
    await (await h.kv()).put('delivery:g3', 'x');
    const db = await h.d1();
    await fire('* * * * *'); // the command bridge's minute: creates the schema, queues nothing
    await db
      .prepare(
        `INSERT INTO native_runs (id, review_key, repo, pr_number, head_sha, trigger, status, created_at, updated_at)
         VALUES ('r2', ?, 'acme/web', 2, ?, 'opened', 'completed', 'x', 'x')`,
      )
      .bind(`acme/web#2@${HEAD_2}`, HEAD_2)
      .run();
    const repo = (name: string, config: string | null) =>
      db
        .prepare(
          `INSERT INTO repositories (full_name, owner, name, installation_id, installed, config, created_at, updated_at)
           VALUES (?, 'acme', ?, 77, 1, ?, 1, 1)`,
        )
        .bind(`acme/${name}`, name, config)
        .run();
    await repo('web', '{"enabled":true}');
    await repo('off', '{"enabled":false}');
    await repo('unconfigured', null); // no stored configuration: not caught up
    calls.length = 0;

    const pass = await fire();
    expect(pass).toEqual({
      generatedAt: new Date(NOW).toISOString(),
      redelivered: ['g1'],
      enqueued: [`acme/web#1@${HEAD_1}`],
      deferred: 0,
      errors: [],
      // No pull request of acme/web has a line comment of Verdict: no reaction is read.
      reactions: 0,
      reactionsWaiting: [],
    });
    // The delivery that never arrived is an alert, as in the Node loop (kept in D1; no alert URL here).
    const alerts = await db.prepare('SELECT kind, severity, message, count FROM native_alerts').all();
    expect(alerts.results).toEqual([
      {
        kind: 'webhook_deliveries_failed',
        severity: 'warning',
        message: '1 webhook deliveries of the last 72 hours never reached Verdict; 1 were redelivered',
        count: 1,
      },
    ]);
    // The latest attempt of g1 is the one redelivered; repositories not enabled are not listed.
    expect(calls).toContain('POST /app/hook/deliveries/12/attempts');
    expect(calls.filter((c) => c.includes('/attempts'))).toHaveLength(1);
    expect(calls.filter((c) => c.includes('/pulls'))).toEqual([
      'GET /repos/acme/web/pulls?state=open&per_page=100',
    ]);

    const messages = await until(
      () => h.seen(),
      (seen) => seen.some((m) => m.deliveryId === `catch-up:acme/web#1@${HEAD_1}`),
    );
    const message = messages.find((m) => m.deliveryId === `catch-up:acme/web#1@${HEAD_1}`)!;
    expect(JSON.parse(message.body)).toEqual({
      action: 'catch_up',
      number: 1,
      pull_request: { number: 1, head: { sha: HEAD_1 } },
      repository: { full_name: 'acme/web' },
      installation: { id: 77 },
    });

    // The next pass queues nothing again (the catch-up is recorded under its id).
    const again = await fire();
    expect(again.enqueued).toEqual([]);
  });
});
