import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/cli/main.js';
import { freePort } from '../helpers/net.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { example, TEST_SECRET } from '../helpers/webhooks.js';

/** `verdict webhook send` against the real server, started in this process (ingress only, worker off). */

let app: RunningVerdict;
let dir: string;
beforeAll(async () => {
  app = await startVerdict({ VERDICT_WORKER_INLINE: '0' });
  dir = mkdtempSync(join(tmpdir(), 'verdict-send-'));
});
afterAll(async () => {
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function send(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['webhook', 'send', ...args], {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env,
    isTty: false,
  });
  return { code, out, err };
}

const url = () => `${app.baseUrl}/github/webhooks`;
/** The delivery id the first output line names. */
const deliveryOf = (out: string[]) => /\(x-github-delivery ([0-9a-f-]{36})\)$/.exec(out[0] ?? '')?.[1];

describe('verdict webhook send', () => {
  test('pull_request.opened: the example, signed with GITHUB_WEBHOOK_SECRET, is accepted and stored as sent', async () => {
    const result = await send(['pull_request.opened', '--url', url()], {
      GITHUB_WEBHOOK_SECRET: TEST_SECRET,
    });
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    const deliveryId = deliveryOf(result.out)!;
    expect(result.out[0]).toBe(`POST ${url()} pull_request.opened (x-github-delivery ${deliveryId})`);
    expect(result.out[1]).toBe('202 Accepted');
    expect(JSON.parse(result.out[2]!)).toEqual({
      accepted: true,
      ignored: false,
      outcome: 'enqueued',
      deliveryId,
    });
    const store = app.verdict.store;
    expect(await store.deliveries.get(deliveryId)).toMatchObject({
      event: 'pull_request',
      action: 'opened',
      status: 'queued',
      repo: 'Codertocat/Hello-World',
      prNumber: 2,
    });
    expect(JSON.parse((await store.deliveries.payload(deliveryId))!)).toEqual(
      example('pull_request', 'opened'),
    );
  });

  test('the default URL is localhost on PORT; WEBHOOK_SECRET signs when GITHUB_WEBHOOK_SECRET is unset', async () => {
    const port = new URL(app.baseUrl).port;
    const result = await send(['installation.created', '--json'], {
      PORT: port,
      WEBHOOK_SECRET: TEST_SECRET,
    });
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.out.join('\n'));
    expect(answer).toMatchObject({
      url: `http://localhost:${port}/github/webhooks`,
      event: 'installation.created',
      status: 202,
      body: { accepted: true, outcome: 'recorded' },
    });
    expect(await app.verdict.store.deliveries.get(answer.deliveryId)).toMatchObject({
      event: 'installation',
      action: 'created',
    });
  });

  test('an event without actions (push) is sent as is; the server ignores it with 200', async () => {
    const result = await send(['push', '--url', url(), '--secret', TEST_SECRET]);
    expect(result.code).toBe(0);
    expect(result.out[1]).toBe('200 OK');
    expect(JSON.parse(result.out[2]!)).toMatchObject({ ignored: true, outcome: 'unsupported_event' });
  });

  test('a wrong secret: the 401 is printed and the exit code is 1; nothing is stored', async () => {
    const result = await send(['pull_request.opened', '--url', url(), '--secret', 'not-the-secret']);
    expect(result.code).toBe(1);
    expect(result.out.slice(1)).toEqual(['401 Unauthorized', '{"error":"invalid_signature"}']);
    expect(await app.verdict.store.deliveries.get(deliveryOf(result.out)!)).toBeNull();
  });

  test('--payload sends the file’s exact bytes; a payload whose action differs is refused', async () => {
    const payload = example('pull_request', 'opened');
    payload.pull_request.title = 'From a file';
    const raw = `${JSON.stringify(payload, null, 2)}\n`;
    const file = join(dir, 'opened.json');
    writeFileSync(file, raw);
    const result = await send([
      'pull_request.opened',
      '--payload',
      file,
      '--url',
      url(),
      '--secret',
      TEST_SECRET,
    ]);
    expect(result.code).toBe(0);
    expect(await app.verdict.store.deliveries.payload(deliveryOf(result.out)!)).toBe(raw);
    const mismatch = await send(['pull_request.closed', '--payload', file, '--secret', TEST_SECRET]);
    expect(mismatch).toMatchObject({
      code: 1,
      err: [`verdict webhook: --payload ${file} has action "opened", not "closed"`],
    });
  });

  test('an unknown action or event is refused listing what is available; no secret is refused', async () => {
    const action = await send(['pull_request.frobbed', '--secret', 's']);
    expect(action.code).toBe(1);
    expect(action.err[0]).toMatch(
      /^verdict webhook: no example of pull_request\.frobbed; pull_request has examples of: .*\bopened\b.*\bsynchronize\b.* \(or pass --payload <file>\)$/,
    );
    const event = await send(['pull_requests.opened', '--secret', 's']);
    expect(event.err[0]).toMatch(
      /^verdict webhook: no example of the event "pull_requests"; the events with examples are: .*\bpull_request\b.*\bpush\b/,
    );
    const needsAction = await send(['issue_comment', '--secret', 's']);
    expect(needsAction.err[0]).toMatch(
      /^verdict webhook: issue_comment needs an action; its examples are: issue_comment\.created/,
    );
    expect(await send(['pull_request.opened'])).toMatchObject({
      code: 1,
      err: [
        'verdict webhook: no webhook secret: set GITHUB_WEBHOOK_SECRET (or WEBHOOK_SECRET), or pass --secret',
      ],
    });
    expect(await send([])).toMatchObject({
      code: 1,
      err: ['verdict webhook: send needs exactly one <event.action>'],
    });
  });

  test('no server listening: a clear error and exit 1', async () => {
    const port = await freePort();
    const result = await send(['ping', '--secret', 's', '--url', `http://127.0.0.1:${port}/github/webhooks`]);
    expect(result.code).toBe(1);
    expect(result.err[0]).toBe(
      `verdict webhook: cannot reach http://127.0.0.1:${port}/github/webhooks (ECONNREFUSED): is the server running (npm start)?`,
    );
  });
});
