// The store's writer on SQLite (writerClient in sqlite-client.ts): one better-sqlite3 connection in a thread,
// running what the main thread sends it. A statement, or a script (several statements in one
// transaction, in a single message). It never throws: an error is answered to the request that caused
// it, and a failed script is rolled back before the answer.
import { parentPort, workerData } from 'node:worker_threads';
import { brotliCompressSync, constants } from 'node:zlib';
import Database from 'better-sqlite3';

const db = new Database(workerData.filename);
// The writer's settings (WRITER_PRAGMAS in sqlite-client.ts), sent by the main thread.
for (const pragma of workerData.pragmas) db.pragma(pragma);
const statements = new Map();

// Text to Brotli bytes (quality 1: about 10x smaller for a webhook payload, some 30 µs for 20 KB), for
// the payloads the ingress writes (migration 014). Runs here, beside the event loop.
db.function('verdict_compress', { deterministic: true }, (text) =>
  text === null
    ? null
    : brotliCompressSync(Buffer.from(String(text), 'utf8'), {
        params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_SIZE_HINT]: text.length },
      }),
);

function prepare(sql) {
  let statement = statements.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    if (statements.size >= 200) statements.delete(statements.keys().next().value);
    statements.set(sql, statement);
  }
  return statement;
}

// A Buffer arrives on the main thread as a plain Uint8Array: say so, and the main thread makes Buffers of
// them again (as the other SQLite drivers give BLOBs).
function hasBlobs(rows) {
  for (const row of rows) for (const key in row) if (row[key] instanceof Uint8Array) return true;
  return false;
}

// `all` answers the statement's rows (none for a statement that returns no data), `run` answers none;
// both answer the changes and the last inserted rowid, as the sqlite3 driver does.
function execute(sql, params, method) {
  const statement = prepare(sql);
  if (method === 'all' && statement.reader) {
    const rows = statement.all(params);
    return { rows, changes: 0, lastID: 0, blobs: hasBlobs(rows) };
  }
  const result = statement.run(params);
  return {
    rows: method === 'all' ? [] : null,
    changes: result.changes,
    lastID: Number(result.lastInsertRowid),
  };
}

function script(steps) {
  if (db.inTransaction) throw new Error('A script cannot run inside an open transaction');
  db.exec('BEGIN IMMEDIATE');
  try {
    const answers = steps.map((step) => execute(step.sql, step.params, 'all'));
    db.exec('COMMIT');
    return { results: answers.map((a) => a.rows), blobs: answers.some((a) => a.blobs) };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    parentPort.postMessage({ closed: true });
    parentPort.close();
    return;
  }
  try {
    if (message.steps) parentPort.postMessage({ id: message.id, ...script(message.steps) });
    else parentPort.postMessage({ id: message.id, ...execute(message.sql, message.params, message.method) });
  } catch (error) {
    parentPort.postMessage({
      id: message.id,
      error: { message: String(error?.message ?? error), code: error?.code ?? null },
    });
  }
});
parentPort.postMessage({ ready: true });
