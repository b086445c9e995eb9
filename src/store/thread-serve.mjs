// What the store's SQLite threads share (read-worker.mjs, writer-thread.mjs): the thread's one
// better-sqlite3 connection, its prepared statements, and the loop that answers the main thread's
// requests (see sqlite-thread.ts). A request's error is answered to that request; the thread never
// throws, so its connection stays open for the life of the store.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

export { statementCache } from './statement-cache.mjs';

/** Opens the connection to `workerData.filename` with `workerData.pragmas`. */
export function openConnection(options = {}) {
  const db = new Database(workerData.filename, options);
  for (const pragma of workerData.pragmas) db.pragma(pragma);
  return db;
}

/**
 * Answers each request (`{id, ...}`) with `{id, ...answer(request)}`, or `{id, error}`, on the port
 * `workerData.answers` (SqliteThread reads it, also synchronously). `{close: true}` closes the
 * connection, answers `{closed: true}` and ends the thread. Says `{ready: true}` first.
 */
export function serve(db, answer) {
  parentPort.on('message', (message) => {
    if (message.close) {
      db.close();
      parentPort.postMessage({ closed: true });
      parentPort.close();
      return;
    }
    try {
      workerData.answers.postMessage({ id: message.id, ...answer(message) });
    } catch (error) {
      workerData.answers.postMessage({
        id: message.id,
        error: { message: String(error?.message ?? error), code: error?.code ?? null },
      });
    }
  });
  parentPort.postMessage({ ready: true });
}
