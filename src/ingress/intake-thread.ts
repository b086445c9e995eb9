import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { StoreConfig } from '../config/index.js';
import type { IncomingDelivery, RecordResult } from '../store/deliveries.js';
import type { Store } from '../store/index.js';

/** The intake writer thread (intake-writer.ts) as the server thread sees it. */
export type IntakeWriter = {
  /** Records a batch in the thread; rejects when the thread is gone (the caller records it itself). */
  record(items: IncomingDelivery[]): Promise<RecordResult[]>;
  /** True until the thread stopped or failed. */
  readonly running: boolean;
  /** Answers the batches it holds, then closes its connection and ends. */
  stop(): Promise<void>;
};

type Reply =
  | { type: 'started' }
  | { type: 'stopped' }
  | { type: 'failed'; error: string }
  | { type: 'recorded'; id: number; results: RecordResult[] };

/**
 * A copy of a body's bytes in memory of its own, transferred to the thread: the server thread keeps its
 * Buffer (it records the batch itself if the thread is gone), and a Buffer that is a slice of a pool is not
 * sent with the whole pool.
 */
const transferable = (raw: Buffer | string): Uint8Array | string =>
  typeof raw === 'string' ? raw : new Uint8Array(raw);

/**
 * Starts the intake writer (`VERDICT_INTAKE_THREAD`, docs/operator.md) on the SQLite file `store`.
 * Resolves once its connection is open; rejects when it could not start (the caller then records
 * deliveries in its own thread).
 */
export function startIntakeThread(
  store: Extract<StoreConfig, { client: 'sqlite' }>,
  dedupeTtlSeconds: number,
  log: Logger,
): Promise<IntakeWriter> {
  const worker = new Worker(new URL('../worker/thread-boot.mjs', import.meta.url), {
    workerData: {
      entry: new URL('./intake-writer.ts', import.meta.url).href,
      filename: store.filename,
      dedupeTtlSeconds,
    },
  });
  const waiting = new Map<number, { resolve: (r: RecordResult[]) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let running = false;
  let stopped: (() => void) | null = null;
  const gone = (error: Error) => {
    running = false;
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
    stopped?.();
  };
  return new Promise((resolve, reject) => {
    worker.on('message', (m: Reply) => {
      if (m.type === 'recorded') {
        waiting.get(m.id)?.resolve(m.results);
        waiting.delete(m.id);
      } else if (m.type === 'started') {
        running = true;
        resolve(writer);
      } else if (m.type === 'stopped') {
        void worker.terminate();
      } else if (!running) {
        void worker.terminate();
        reject(new Error(m.error));
      } else {
        log.error({ event: 'intake-thread-stop-failed', err: m.error }, 'intake thread stop failed');
        void worker.terminate();
      }
    });
    worker.on('error', (error) => {
      log.error(
        { event: 'intake-thread-failed', err: error },
        'the intake thread failed: deliveries are recorded in the server thread',
      );
      if (!running) reject(error);
      gone(error);
    });
    worker.on('exit', () => gone(new Error('the intake thread ended')));
    const writer: IntakeWriter = {
      get running() {
        return running;
      },
      record(items) {
        if (!running) return Promise.reject(new Error('the intake thread is not running'));
        const id = nextId++;
        const sent = items.map((item) => ({ ...item, raw: transferable(item.raw) }));
        const transfer = sent.flatMap((item) =>
          typeof item.raw === 'string' ? [] : [item.raw.buffer as ArrayBuffer],
        );
        return new Promise<RecordResult[]>((res, rej) => {
          waiting.set(id, { resolve: res, reject: rej });
          worker.postMessage({ id, items: sent }, transfer);
        });
      },
      stop() {
        if (!running) return Promise.resolve();
        return new Promise<void>((done) => {
          stopped = done;
          worker.postMessage('stop');
        });
      },
    };
  });
}

/**
 * Records a batch in the intake thread while it runs, else in this thread. A batch the thread could not
 * answer (it ended) is recorded here: what it had committed finds its markers and answers as duplicates.
 */
export async function recordThrough(
  intake: IntakeWriter | null,
  store: Pick<Store, 'deliveries' | 'shownWrites'>,
  items: IncomingDelivery[],
): Promise<RecordResult[]> {
  if (intake?.running) {
    try {
      const results = await intake.record(items);
      store.shownWrites.wrote();
      return results;
    } catch {
      // the thread is gone: below
    }
  }
  return store.deliveries.recordBatch(items);
}
