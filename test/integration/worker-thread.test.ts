import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomId, systemClock } from '../../src/clock.js';
import { openStore, type Store } from '../../src/store/index.js';
import { freePort } from '../helpers/net.js';
import { eventually, example, postWebhook, TEST_SECRET } from '../helpers/webhooks.js';

/**
 * `npm start`'s threads (issue 37), each with its own store connection: the inline worker's (the server
 * thread only takes webhooks in; the thread processes them) and the intake writer's (the server thread
 * hands it the deliveries to record). With `VERDICT_WORKER_THREAD=0` / `VERDICT_INTAKE_THREAD=0` the same
 * work runs in the server thread.
 */
const BIN = join(process.cwd(), 'bin', 'verdict.mjs');

type Served = {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | string | null>;
  base: string;
  store: Store;
  dir: string;
};

/** `verdict serve` on a new SQLite file with `env`, once the line `ready` is logged; a store on the file. */
async function serve(env: Record<string, string>, ready: string): Promise<Served> {
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
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      ...env,
    },
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<number | string | null>((r) =>
    child.on('exit', (code, signal) => r(code ?? signal)),
  );
  try {
    await eventually(async () => output.includes(ready), 60_000);
    const store = await openStore(
      { client: 'sqlite', filename: db },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
    );
    return { child, output: () => output, exited, base: `http://127.0.0.1:${port}`, store, dir };
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`verdict serve did not start: ${output}`, { cause: error });
  }
}

/** Closes the test's store, stops the server with SIGTERM; its exit code. */
async function stop(s: Served): Promise<number | string | null> {
  await s.store.close();
  s.child.kill('SIGTERM');
  const code = await s.exited;
  rmSync(s.dir, { recursive: true, force: true });
  return code;
}

const logged = (output: string, event: string) => output.split('\n').find((l) => l.includes(`"${event}"`));

test.each([
  ['1', 'in a worker thread'],
  ['0', 'in the server thread'],
])(
  'VERDICT_WORKER_THREAD=%s: deliveries are processed %s, and SIGTERM stops it',
  async (flag) => {
    // The thread's lanes log their start; the server thread's worker starts with the server.
    const s = await serve(
      { VERDICT_WORKER_THREAD: flag },
      flag === '1' ? '"worker-started"' : '"server-started"',
    );
    try {
      const started = logged(s.output(), 'worker-started');
      if (flag === '1') expect(JSON.parse(started!).thread).toBe('worker');
      else expect(started).toBeUndefined();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await postWebhook(s.base, 'pull_request', example('pull_request', 'opened'));
        expect(res.status).toBe(202);
        ids.push(res.deliveryId);
      }
      // Processed by the worker lanes (its own connection, when in the thread), not left queued.
      await eventually(async () => {
        const statuses = await Promise.all(ids.map(async (id) => (await s.store.deliveries.get(id))?.status));
        return statuses.every((st) => st === 'processed' || st === 'failed') ? statuses : null;
      }, 30_000);
    } finally {
      expect(await stop(s)).toBe(0);
    }
  },
  120_000,
);

test.each([
  ['1', 'by the intake thread'],
  ['0', 'by the server thread'],
])(
  'VERDICT_INTAKE_THREAD=%s: deliveries are recorded %s, a repeated one is a duplicate, and SIGTERM stops it',
  async (flag) => {
    const s = await serve({ VERDICT_INTAKE_THREAD: flag, VERDICT_WORKER_INLINE: '0' }, '"server-started"');
    try {
      const started = logged(s.output(), 'intake-thread-started');
      if (flag === '1') expect(JSON.parse(started!).thread).toBe('intake');
      else expect(started).toBeUndefined();
      const payload = example('pull_request', 'opened');
      const sent = await Promise.all(
        Array.from({ length: 20 }, () => postWebhook(s.base, 'pull_request', payload)),
      );
      expect(sent.map((r) => r.status)).toEqual(Array(20).fill(202));
      const again = await postWebhook(s.base, 'pull_request', payload, { deliveryId: sent[0]!.deliveryId });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ ignored: true, outcome: 'duplicate_delivery' });
      // Acknowledged means stored: each one is in the store with its body and its job (no worker here).
      for (const { deliveryId } of sent) {
        expect((await s.store.deliveries.get(deliveryId))?.status).toBe('queued');
        expect(JSON.parse((await s.store.deliveries.payload(deliveryId))!)).toEqual(payload);
      }
      expect(await s.store.jobs.list({ queue: 'webhooks', limit: 100 })).toHaveLength(20);
    } finally {
      expect(await stop(s)).toBe(0);
    }
  },
  120_000,
);
