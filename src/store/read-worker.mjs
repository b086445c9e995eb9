// A read worker of the store (see read-workers.ts): one read-only better-sqlite3 connection to the
// SQLite file, running the statements the main thread sends it and answering with their rows. It never
// throws: an error is answered to the query that caused it, so the connection stays open for the life
// of the store (closing it early would drop the writer's locks: docs/decisions.md).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.filename, { readonly: true, fileMustExist: true });
// The reader's settings (READER_PRAGMAS in sqlite-client.ts), sent by the main thread.
for (const pragma of workerData.pragmas) db.pragma(pragma);
const statements = new Map();

parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    parentPort.postMessage({ closed: true });
    parentPort.close();
    return;
  }
  try {
    let statement = statements.get(message.sql);
    if (!statement) {
      statement = db.prepare(message.sql);
      if (statements.size >= 100) statements.delete(statements.keys().next().value);
      statements.set(message.sql, statement);
    }
    parentPort.postMessage({ id: message.id, rows: statement.all(message.params) });
  } catch (error) {
    parentPort.postMessage({
      id: message.id,
      error: { message: String(error?.message ?? error), code: error?.code ?? null },
    });
  }
});
parentPort.postMessage({ ready: true });
