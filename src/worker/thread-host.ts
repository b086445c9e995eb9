import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { intakeCell } from './intake-hold.js';

/** The inline worker running in a thread of its own (thread.ts), as the server thread sees it. */
export type WorkerThread = {
  kick(): void;
  /** The server thread is taking a webhook in: the lanes hold off claiming for a moment (thread.ts). */
  busy(): void;
  stop(): Promise<void>;
};

/**
 * Starts the inline worker in a worker thread (`VERDICT_WORKER_THREAD`, docs/operator.md): the review and
 * webhook lanes with their own store connection, reading the same environment. Resolves once its lanes
 * have started; rejects when the thread could not start them (the caller then runs them in its own thread).
 */
export function startWorkerThread(env: NodeJS.ProcessEnv, log: Logger): Promise<WorkerThread> {
  // When intake last took a webhook in (ms since the epoch), in memory both threads share: the thread reads
  // it before every claim without waiting for a message, which a thread busy with jobs would read late.
  const intake = intakeCell();
  const worker = new Worker(new URL('./thread-boot.mjs', import.meta.url), {
    env: { ...env },
    workerData: { intake },
  });
  let stopped: (() => void) | null = null;
  let running = false;
  return new Promise((resolve, reject) => {
    worker.on('message', (m: { type: string; error?: string }) => {
      if (m.type === 'started') {
        running = true;
        resolve({
          kick: () => worker.postMessage('kick'),
          busy: () => void Atomics.store(intake, 0, BigInt(Date.now())),
          stop: () =>
            new Promise<void>((done) => {
              stopped = done;
              worker.postMessage('stop');
            }),
        });
      } else if (m.type === 'stopped' || (m.type === 'failed' && running)) {
        if (m.type === 'failed')
          log.error({ event: 'worker-thread-stop-failed', err: m.error }, 'worker thread stop failed');
        void worker.terminate().then(() => stopped?.());
      } else if (m.type === 'failed') {
        void worker.terminate();
        reject(new Error(m.error));
      }
    });
    worker.on('error', (error) => {
      log.error(
        { event: 'worker-thread-failed', err: error },
        'the worker thread failed: reviews wait until restart',
      );
      if (!running) reject(error);
      stopped?.();
    });
    worker.on('exit', () => stopped?.());
  });
}
