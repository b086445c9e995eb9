import type { Logger } from 'pino';
import { randomId, systemClock } from '../clock.js';
import type { Config } from '../config/index.js';
import { createProbot } from '../github/probot.js';
import { openQueue } from '../queue/select.js';
import { createReviewWorker, createWebhookWorker, loadApp, reviewEngineFor } from '../compose/parts.js';
import { openConfiguredStore } from '../store/index.js';
import type { QueueWorker } from './runner.js';

/** Worker lanes running in this thread: wake the webhook lane, or stop them all and close what they opened. */
export type WorkerLanes = { kick(): void; stop(): Promise<void> };

/**
 * The worker lanes of a process or thread of their own (`npm run worker`, and the inline worker's thread
 * of `npm start`): their own store connection, the queue review-engine 8 selects, the Probot app and the
 * review engine. The `webhooks` lane runs when that queue is the store's own job table, where ingress
 * records deliveries and their jobs together; a finished webhook job wakes the review lane.
 */
export async function startWorkerLanes(
  config: Config,
  log: Logger,
  /** How long to hold off claiming (see QueueWorker's `mayClaim`); absent: never. */
  mayClaim?: () => number,
): Promise<WorkerLanes> {
  const store = await openConfiguredStore(config);
  const queue = await openQueue(config.queue, { store, clock: systemClock, ids: randomId, log });
  const probot = createProbot(config.github, log);
  await loadApp(probot, store, config, log);
  let review: QueueWorker | null = null;
  let webhooks: QueueWorker | null = null;
  if (queue.sharesStore) {
    webhooks = createWebhookWorker(store, probot, config, log, () => review?.kick(), undefined, mayClaim);
  } else {
    log.info(
      { event: 'lane-skipped', lane: 'webhooks' },
      `webhooks lane not run: deliveries and their jobs live in the store, and this worker claims from the ${queue.describe}`,
    );
  }
  const engine = reviewEngineFor(store, probot, config, log);
  review = createReviewWorker(store, queue.backend, engine, config, log, undefined, mayClaim);
  const workers = [webhooks, review].filter((w): w is QueueWorker => w !== null);
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
  return {
    kick: () => webhooks?.kick(),
    stop: async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await queue.close();
      await store.close();
    },
  };
}
