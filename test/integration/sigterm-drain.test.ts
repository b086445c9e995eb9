import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { randomId, systemClock } from '../../src/clock.js';
import { freePort } from '../helpers/net.js';
import { eventually, example, sign, TEST_SECRET } from '../helpers/webhooks.js';

/**
 * SIGTERM under keep-alive traffic (issue 37): `verdict serve` (what `npm start` runs, the inline worker on)
 * with 16 keep-alive connections posting signed webhooks back to back (autocannon: a connection is never
 * idle) stops accepting, answers what is in flight with `Connection: close`, stops its workers and exits 0
 * (before the fix it was still running, accepting webhooks, 25 s after SIGTERM); every delivery it answered
 * 202 is stored.
 */
const BIN = join(process.cwd(), 'bin', 'verdict.mjs');

test('16 busy keep-alive senders do not keep a stopping server alive; what it accepted is stored', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-drain-'));
  const db = join(dir, 'verdict.sqlite');
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--init'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      GITHUB_WEBHOOK_SECRET: TEST_SECRET,
      VERDICT_SCHEDULER: '0',
      LOG_LEVEL: 'warn',
    },
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<number | string | null>((r) =>
    child.on('exit', (code, signal) => r(code ?? signal)),
  );
  try {
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
      return res?.ok ?? false;
    }, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`verdict serve did not start: ${output}`, { cause: error });
  }
  // 16 keep-alive connections, each sending its next request the moment an answer arrives (never idle).
  const raw = JSON.stringify(example('pull_request', 'opened'));
  let accepted = 0;
  const load = autocannon(
    {
      url: `http://127.0.0.1:${port}/github/webhooks`,
      connections: 16,
      duration: 60,
      method: 'POST',
      body: raw,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-hub-signature-256': sign(raw),
      },
      requests: [
        {
          setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'x-github-delivery': randomUUID() } }),
        },
      ],
    },
    () => undefined,
  );
  load.on('response', (_client: unknown, status: number) => {
    if (status === 202) accepted += 1;
  });
  try {
    await eventually(async () => accepted >= 200, 30_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    load.stop();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  // Every delivery answered 202 was stored.
  const store = await openStore(
    { client: 'sqlite', filename: db },
    { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
  );
  try {
    // Every answer 202 was a new delivery id, and each is stored.
    const stored = Number((await store.db.knex('deliveries').count({ n: '*' }).first())!.n);
    expect(stored).toBe(accepted);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // Nothing failed while stopping (the example's reviews dead-letter for want of an installation: not this).
  expect(output).not.toMatch(/http-handler-failed|"level":60/);
}, 90_000);
