import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../clock.js';
import { SQLITE_PRAGMAS, sqliteScriptRunner, type SqliteDatabase } from '../store/db.js';
import { DeliveryRecorder, type IncomingDelivery } from '../store/deliveries.js';

type Connection = SqliteDatabase & { pragma(sql: string): unknown; close(): void };
const Database = createRequire(import.meta.url)('better-sqlite3') as new (filename: string) => Connection;

/**
 * The intake writer's thread (intake-thread.ts starts it): it records the server thread's batches of
 * deliveries on its own SQLite connection (better-sqlite3's, without knex), so the statements, the LZ4 compression and the commit's fsync
 * run beside the server thread instead of on its event loop. The parent sends `{ id, items }` (each body's
 * bytes transferred) and `stop`; this thread answers `started`, `{ id, results }`, `stopped` or `failed`.
 */
const port = parentPort;
if (!port) throw new Error('src/ingress/intake-writer.ts runs only as a worker thread');

const { filename, dedupeTtlSeconds } = workerData as { filename: string; dedupeTtlSeconds: number };
try {
  // A connection of its own, with the store's settings; its statements are prepared once (db.ts).
  const connection = new Database(filename);
  for (const pragma of SQLITE_PRAGMAS) connection.pragma(pragma);
  const deliveries = new DeliveryRecorder(
    'sqlite',
    systemClock,
    dedupeTtlSeconds * 1000,
    sqliteScriptRunner(connection),
  );
  const inFlight = new Set<Promise<void>>();
  port.on('message', (message: 'stop' | { id: number; items: IncomingDelivery[] }) => {
    if (message === 'stop') {
      // The batches already received are answered before the connection closes.
      void Promise.all(inFlight)
        .then(() => connection.close())
        .then(
          () => port.postMessage({ type: 'stopped' }),
          (error: unknown) => port.postMessage({ type: 'failed', error: (error as Error).message }),
        );
      return;
    }
    // A body arrives as a Uint8Array over the transferred bytes: a Buffer over the same memory, no copy.
    const items = message.items.map((item) => ({
      ...item,
      raw:
        typeof item.raw === 'string'
          ? item.raw
          : Buffer.from(item.raw.buffer, item.raw.byteOffset, item.raw.byteLength),
    }));
    const done = deliveries
      .recordBatch(items)
      .catch((error: unknown) =>
        items.map((item) => ({
          status: 'failed' as const,
          code: item.job ? ('enqueue_failed' as const) : ('delivery_record_failed' as const),
          error: (error as Error).message,
        })),
      )
      .then((results) => port.postMessage({ type: 'recorded', id: message.id, results }))
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  });
  port.postMessage({ type: 'started' });
} catch (error) {
  port.postMessage({ type: 'failed', error: (error as Error).message });
}
