import { randomId, systemClock } from '../clock.js';
import { loadConfigOrExit } from '../config/index.js';
import { createProbot } from '../github/probot.js';
import { createLogger, stopOnSignals } from '../logger.js';
import { openQueue } from '../queue/select.js';
import { createReviewWorker, createWebhookWorker, loadApp, reviewEngineFor } from '../compose/parts.js';
import { openConfiguredStore } from '../store/index.js';
import type { QueueWorker } from './runner.js';

/**
 * `npm run worker`: a worker process beside the server (run the server with VERDICT_WORKER_INLINE=0, or
 * add workers to one that has its own). It runs reviews from the queue that review-engine 8 selects; the
 * `webhooks` lane runs when that queue is the store's own job table, where ingress records deliveries
 * and their jobs together. SIGTERM stops claiming and lets in-flight jobs finish (or releases them).
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  const store = await openConfiguredStore(config);
  const queue = await openQueue(config.queue, { store, clock: systemClock, ids: randomId, log });
  const probot = createProbot(config.github, log);
  await loadApp(probot, store, config, log);
  const workers: QueueWorker[] = [];
  if (queue.sharesStore) {
    workers.push(createWebhookWorker(store, probot, config, log));
  } else {
    log.info(
      { event: 'lane-skipped', lane: 'webhooks' },
      `webhooks lane not run: deliveries and their jobs live in the store, and this worker claims from the ${queue.describe}`,
    );
  }
  // The review lane: the review engine with the configured model providers.
  workers.push(
    createReviewWorker(store, queue.backend, reviewEngineFor(store, probot, config, log), config, log),
  );
  for (const worker of workers) worker.start();
  log.info(
    {
      event: 'worker-started',
      queue: queue.describe,
      owner: `${config.worker.id}:${process.pid}`,
      lanes: workers.length,
      leaseMs: config.worker.leaseMs,
      concurrency: config.worker.concurrency,
      maxJobs: config.worker.maxJobs,
    },
    'worker started',
  );
  stopOnSignals(log, 'worker stopping: no new claims, finishing in-flight jobs', async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await queue.close();
    await store.close();
  });
}

main().catch((error) => {
  console.error(`Verdict worker failed to start: ${(error as Error).message}`);
  process.exit(1);
});
