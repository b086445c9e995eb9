import { parentPort, workerData } from 'node:worker_threads';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../logger.js';
import { intakeHold } from './intake-hold.js';
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
/** When the server thread last took a webhook in (thread-host.ts), in shared memory. */
const intake = (workerData as { intake: BigInt64Array }).intake;
const mayClaim = intakeHold(() => Number(Atomics.load(intake, 0)));
try {
  const lanes = await startWorkerLanes(config, log, mayClaim);
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
