import { loadConfigOrExit } from './config/index.js';
import { createLogger, stopOnSignals } from './logger.js';
import { createVerdict } from './compose/server.js';

/** Process entry: config, store (migrated), server, in-process worker, smee forwarding. */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel);
  const verdict = await createVerdict(config, { log });
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
  if (!config.github.webhookSecret) {
    log.warn(
      { event: 'webhook-secret-missing' },
      'GITHUB_WEBHOOK_SECRET (or WEBHOOK_SECRET) is not set: every webhook is refused with 401 invalid_signature',
    );
  }
  if (!config.github.hasCredentials) {
    log.warn(
      { event: 'shadow-mode' },
      'No GitHub App credentials (APP_ID + PRIVATE_KEY or PRIVATE_KEY_PATH): publication stays in shadow mode. ' +
        'Register the App from app.yml (GitHub → Settings → Developer settings → GitHub Apps, or the manifest flow ' +
        'described in README.md) and put its credentials in .env.',
    );
  }
  let smee: { stop(): Promise<void> } | null = null;
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
  stopOnSignals(log, 'stopping: no new claims, finishing in-flight jobs', async () => {
    await smee?.stop().catch(() => undefined);
    await verdict.stop();
  });
}

main().catch((error) => {
  console.error(`Verdict failed to start: ${(error as Error).message}`);
  process.exit(1);
});
