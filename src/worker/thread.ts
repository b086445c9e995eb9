import { parentPort } from 'node:worker_threads';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../logger.js';
import { startWorkerLanes } from './lanes.js';

/**
 * The inline worker's thread (thread-host.ts starts it): the worker lanes with their own store connection,
 * so their database work and CPU never block the server thread's webhook intake. The parent sends `kick`
 * (a delivery was recorded) and `stop`; this thread answers `started`, `stopped`, or `failed`.
 */
const port = parentPort;
if (!port) throw new Error('src/worker/thread.ts runs only as a worker thread');

const config = loadConfig(process.env);
const log = createLogger(config.logLevel, undefined, config.logFormat).child({ thread: 'worker' });
/**
 * Webhook intake first: while the server thread is taking webhooks in (it says `busy`), the lanes hold off
 * claiming, so their writes do not make intake wait for SQLite's write lock; they claim once intake has
 * been quiet for QUIET_MS, and at least once a second whatever the traffic, so the work is never starved.
 */
const QUIET_MS = 100;
const MAX_HOLD_MS = 1000;
let busyAt = 0;
let heldSince: number | null = null;
const mayClaim = () => {
  const now = Date.now();
  const wait = busyAt + QUIET_MS - now;
  if (wait <= 0) {
    heldSince = null;
    return 0;
  }
  heldSince ??= now;
  if (now - heldSince >= MAX_HOLD_MS) {
    heldSince = null;
    return 0;
  }
  return wait;
};
try {
  const lanes = await startWorkerLanes(config, log, mayClaim);
  port.on('message', (message: unknown) => {
    if (message === 'busy') busyAt = Date.now();
    if (message === 'kick') lanes.kick();
    if (message === 'stop') {
      void lanes.stop().then(
        () => port.postMessage({ type: 'stopped' }),
        (error: unknown) => port.postMessage({ type: 'failed', error: (error as Error).message }),
      );
    }
  });
  port.postMessage({ type: 'started' });
} catch (error) {
  port.postMessage({ type: 'failed', error: (error as Error).message });
}
