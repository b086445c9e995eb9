import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomId, systemClock } from '../../src/clock.js';
import { openStore } from '../../src/store/index.js';
import { freePort } from '../helpers/net.js';
import { eventually, example, postWebhook, TEST_SECRET } from '../helpers/webhooks.js';

/**
 * `npm start`'s inline worker runs in a worker thread with its own store connection (issue 37): the server
 * thread only takes webhooks in; the thread processes them. With `VERDICT_WORKER_THREAD=0` the same lanes
 * run in the server thread.
 */
const BIN = join(process.cwd(), 'bin', 'verdict.mjs');

test.each([
  ['1', 'in a worker thread'],
  ['0', 'in the server thread'],
])(
  'VERDICT_WORKER_THREAD=%s: deliveries are processed %s, and SIGTERM stops it',
  async (flag) => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-thread-'));
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
        VERDICT_WORKER_THREAD: flag,
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
      },
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const exited = new Promise<number | string | null>((r) =>
      child.on('exit', (code, signal) => r(code ?? signal)),
    );
    const base = `http://127.0.0.1:${port}`;
    const store = await (async () => {
      try {
        // The thread's lanes log their start; the server thread's worker starts with the server.
        const ready = flag === '1' ? '"worker-started"' : '"server-started"';
        await eventually(async () => output.includes(ready), 60_000);
        return await openStore(
          { client: 'sqlite', filename: db },
          { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
        );
      } catch (error) {
        child.kill('SIGKILL');
        throw new Error(`verdict serve did not start: ${output}`, { cause: error });
      }
    })();
    try {
      const started = output.split('\n').find((l) => l.includes('"worker-started"'));
      if (flag === '1') expect(JSON.parse(started!).thread).toBe('worker');
      else expect(started).toBeUndefined();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await postWebhook(base, 'pull_request', example('pull_request', 'opened'));
        expect(res.status).toBe(202);
        ids.push(res.deliveryId);
      }
      // Processed by the worker lanes (its own connection, when in the thread), not left queued.
      await eventually(async () => {
        const statuses = await Promise.all(ids.map(async (id) => (await store.deliveries.get(id))?.status));
        return statuses.every((s) => s === 'processed' || s === 'failed') ? statuses : null;
      }, 30_000);
    } finally {
      await store.close();
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  },
  120_000,
);
