import { randomId, systemClock } from '../clock.js';
import { loadConfigOrExit } from '../config.js';
import { createProbot } from '../github/probot.js';
import { createLogger, stopOnSignals } from '../logger.js';
import { createWebhookWorker, loadApp } from '../runtime.js';
import { openStore } from '../store/index.js';

/**
 * `npm run worker`: a worker process against the same store as the server (run the server with
 * VERDICT_WORKER_INLINE=0). It processes the `webhooks` lane; SIGTERM stops claiming and lets in-flight
 * jobs finish (or releases them).
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel);
  const store = await openStore(config.store, {
    clock: systemClock,
    ids: randomId,
    dedupeTtlSeconds: config.dedupeTtlSeconds,
  });
  const probot = createProbot(config.github, log);
  await loadApp(probot, store, config, log);
  const worker = createWebhookWorker(store, probot, config, log);
  worker.start();
  log.info(
    { event: 'worker-started', store: config.store.client, owner: `${config.workerId}:${process.pid}` },
    'worker started',
  );
  stopOnSignals(log, 'worker stopping: no new claims, finishing in-flight jobs', async () => {
    await worker.stop();
    await store.close();
  });
}

main().catch((error) => {
  console.error(`Verdict worker failed to start: ${(error as Error).message}`);
  process.exit(1);
});
