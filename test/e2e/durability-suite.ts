import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createKnex } from '../../src/store/db.js';
import { makeStoreConfig, type TestDialect } from '../helpers/store.js';
import { freePort } from '../helpers/net.js';
import { example, sign, TEST_SECRET } from '../helpers/webhooks.js';

/** `npm start`'s command line, run directly so that the SIGKILL reaches Verdict's own process. */
function startArgv(): string[] {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  const argv = scripts.start!.split(/\s+/);
  // `exec node …`: the shell's exec, then node's own arguments.
  return [process.execPath, ...argv.slice(argv.indexOf('node') + 1)];
}

const ROUNDS = 5;
const SENDERS = 16;

/** The guarantee of docs/architecture.md ("Acknowledged means stored"), run once per dialect. */
export function durabilitySuite(dialect: TestDialect): void {
  describe(`acknowledged means stored (${dialect}): the process killed (SIGKILL) under load`, () => {
    let store: Awaited<ReturnType<typeof makeStoreConfig>>;
    let child: ChildProcess | null = null;
    beforeEach(async () => {
      store = await makeStoreConfig(dialect);
    });
    afterEach(async () => {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      await store.cleanup();
    });

    test(`${ROUNDS} kills mid-load: every delivery answered 2xx is stored once, with its one job`, async () => {
      const config = store.config;
      const storeEnv =
        config.client === 'sqlite'
          ? { VERDICT_DB_PATH: config.filename }
          : { DATABASE_URL: config.connectionString, VERDICT_PG_SCHEMA: config.schema! };
      const raw = JSON.stringify(example('pull_request', 'opened'));
      const signature = sign(raw);
      const acknowledged = new Set<string>();
      let sent = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const port = await freePort();
        const [command, ...args] = startArgv();
        const proc = spawn(command!, args, {
          env: {
            ...process.env,
            NODE_OPTIONS: '',
            PORT: String(port),
            HOST: '127.0.0.1',
            ...storeEnv,
            GITHUB_WEBHOOK_SECRET: TEST_SECRET,
            APP_ID: '',
            PRIVATE_KEY: '',
            // Ingress only: the deliveries and their jobs stay as the ingress wrote them.
            VERDICT_WORKER_INLINE: '0',
            LOG_LEVEL: 'warn',
          },
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        child = proc;
        const exited = new Promise((resolve) => proc.on('exit', resolve));
        const base = `http://127.0.0.1:${port}`;
        let up = false;
        for (let i = 0; i < 300 && !up; i++) {
          up = (await fetch(`${base}/health`).catch(() => null))?.status === 200;
          if (!up) await new Promise((r) => setTimeout(r, 100));
        }
        expect(up).toBe(true);
        let killed = false;
        const sender = async () => {
          while (!killed) {
            const id = randomUUID();
            sent++;
            try {
              const res = await fetch(`${base}/github/webhooks`, {
                method: 'POST',
                headers: {
                  'content-type': 'application/json',
                  'x-github-delivery': id,
                  'x-github-event': 'pull_request',
                  'x-hub-signature-256': signature,
                },
                body: raw,
              });
              await res.arrayBuffer();
              if (res.status >= 200 && res.status < 300) acknowledged.add(id);
            } catch {
              // The connection died with the process: not acknowledged.
            }
          }
        };
        const load = Array.from({ length: SENDERS }, sender);
        // Killed at a different moment of the load each round: after a number of acknowledged deliveries
        // that grows with the round (not after a fixed time, which a loaded machine fills with fewer).
        const target = acknowledged.size + 60 + round * 25;
        const deadline = Date.now() + 30_000;
        while (acknowledged.size < target && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 10));
        }
        proc.kill('SIGKILL');
        killed = true;
        await exited;
        await Promise.all(load);

        const knex = createKnex(config);
        try {
          const stored = new Map(
            ((await knex('deliveries').select('id', 'status')) as Array<{ id: string; status: string }>).map(
              (r) => [r.id, r.status],
            ),
          );
          const jobs = new Map<string, number>();
          for (const row of (await knex('jobs').where({ queue: 'webhooks' }).select('payload')) as Array<{
            payload: string;
          }>) {
            const id = (JSON.parse(row.payload) as { deliveryId: string }).deliveryId;
            jobs.set(id, (jobs.get(id) ?? 0) + 1);
          }
          const markers = new Set(await knex('dedupe_markers').pluck('key'));
          const missing = [...acknowledged].filter((id) => !stored.has(id));
          expect(missing).toEqual([]);
          for (const id of acknowledged) {
            expect(stored.get(id)).toBe('queued');
            expect(jobs.get(id)).toBe(1);
            expect(markers.has(`delivery:${id}`)).toBe(true);
          }
          // Nothing half-written: every stored delivery has its job and its marker.
          for (const id of stored.keys()) {
            expect(jobs.get(id)).toBe(1);
            expect(markers.has(`delivery:${id}`)).toBe(true);
          }
        } finally {
          await knex.destroy();
        }
      }
      // The load was real: hundreds of deliveries acknowledged across the rounds.
      expect(acknowledged.size).toBeGreaterThan(200);
      expect(sent).toBeGreaterThan(acknowledged.size);
    }, 300_000);
  });
}
