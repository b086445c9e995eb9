import { existsSync } from 'node:fs';
import { loadConfigOrExit } from './config/index.js';
import { createLogger, stopOnSignals } from './logger.js';
import { createVerdict } from './compose/server.js';
import { logStartupChecks } from './doctor/index.js';

/**
 * Process entry: `.env` (as Probot's entry reads it), config, store (migrated), server, in-process worker,
 * smee forwarding.
 */
async function main(): Promise<void> {
  loadDotEnv('.env');
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  const verdict = await createVerdict(config, { log, workerThreadEnv: process.env });
  let smee: { stop(): Promise<void> } | null = null;
  // Before listening: a SIGTERM that comes while the server starts still stops it gracefully.
  stopOnSignals(log, 'stopping: no new claims, finishing in-flight jobs', async () => {
    await smee?.stop().catch(() => undefined);
    await verdict.stop();
  });
  const port = await verdict.listen();
  const base = `http://localhost:${port}`;
  log.info(
    {
      event: 'server-started',
      pid: process.pid,
      port,
      store: config.store.client,
      workerInline: config.workerInline,
    },
    `Verdict listening on ${base} (webhooks at ${base}/github/webhooks)`,
  );
  // The doctor's checks without the network (docs/operator.md): logged as warnings, the server keeps running.
  await logStartupChecks(config, { log, env: process.env, knex: verdict.store.db.knex, serverUrl: base });
  if (config.github.webhookProxyUrl) {
    const { SmeeClient } = await import('smee-client');
    const client = new SmeeClient({
      source: config.github.webhookProxyUrl,
      target: `http://127.0.0.1:${port}/github/webhooks`,
      logger: {
        info: (m: string) => log.info({ event: 'smee' }, m),
        error: (m: string) => log.error({ event: 'smee' }, m),
      },
    });
    await client.start();
    smee = client;
    log.info(
      { event: 'smee-forwarding', source: config.github.webhookProxyUrl },
      'forwarding webhooks from smee',
    );
  }
}

/**
 * Sets the variables of the `.env` file in the working directory, when there is one, that the environment
 * does not set already (a variable set in the environment, even empty, wins over the file).
 */
function loadDotEnv(path: string): void {
  if (!existsSync(path)) return;
  try {
    process.loadEnvFile(path);
  } catch (error) {
    console.error(`Verdict cannot read ${path}: ${(error as Error).message}`);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(`Verdict failed to start: ${(error as Error).message}`);
  process.exit(1);
});
