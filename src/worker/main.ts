import { loadConfigOrExit } from '../config/index.js';
import { createLogger, stopOnSignals } from '../logger.js';
import { startWorkerLanes } from './lanes.js';

/**
 * `npm run worker`: a worker process beside the server (run the server with VERDICT_WORKER_INLINE=0, or
 * add workers to one that has its own). It runs reviews from the queue that review-engine 8 selects, and
 * the `webhooks` lane when that queue is the store's own job table (lanes.ts). SIGTERM stops claiming and
 * lets in-flight jobs finish (or releases them).
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  const starting = startWorkerLanes(config, log);
  // At once: a SIGTERM that comes while the lanes start still stops them gracefully.
  stopOnSignals(log, 'worker stopping: no new claims, finishing in-flight jobs', async () =>
    (await starting).stop(),
  );
  await starting;
}

main().catch((error) => {
  console.error(`Verdict worker failed to start: ${(error as Error).message}`);
  process.exit(1);
});
