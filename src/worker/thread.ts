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
try {
  const lanes = await startWorkerLanes(config, log);
  port.on('message', (message: unknown) => {
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
