// The store's writer on SQLite (writerClient in sqlite-client.ts): one better-sqlite3 connection in a
// worker thread, running what the main thread sends it: a statement, or a script (several statements in
// one transaction, in a single message). It never throws (thread-serve.mjs); a failed script is rolled
// back before its error is answered.
import { createRequire } from 'node:module';
import { openConnection, serve, statementCache } from './thread-serve.mjs';

// The writer's settings (WRITER_PRAGMAS in sqlite-client.ts) come with workerData.
const db = openConnection();
const prepare = statementCache(db, 200);
const require = createRequire(import.meta.url);
// lz4-napi (native) is loaded with the first payload: a process that takes no webhook (a worker, the
// CLI) never loads it into its threads.
let lz4 = null;

// A parameter `{lz4: text or bytes}` (lz4Param in sqlite-client.ts) is bound as the LZ4 block of those
// bytes (UTF-8 for text; an LZ4 block with its size before it: about 8x smaller for a webhook payload,
// some 10-20 µs for 20 KB): the payloads the ingress writes (migrations 014 and 015). Compressed here,
// beside the event loop, before the statement runs, so SQLite and the bound parameters only ever hold
// the compressed bytes. The ingress sends the body's bytes: they arrive here as bytes, with no
// conversion to text and back.
function compress(value) {
  if (value === null) return null;
  lz4 ??= require('lz4-napi');
  return lz4.compressSync(
    value instanceof Uint8Array
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      : Buffer.from(String(value), 'utf8'),
  );
}

// The statement's parameters, each lz4Param replaced by its LZ4 bytes (a copy of the array when any is).
function bound(params) {
  if (!Array.isArray(params)) return params;
  let out = params;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (p !== null && typeof p === 'object' && 'lz4' in p) {
      if (out === params) out = params.slice();
      out[i] = compress(p.lz4);
    }
  }
  return out;
}

// A Buffer arrives on the main thread as a plain Uint8Array: say so, and the main thread makes Buffers of
// them again (as the other SQLite drivers give BLOBs).
function hasBlobs(rows) {
  for (const row of rows) for (const key in row) if (row[key] instanceof Uint8Array) return true;
  return false;
}

// `all` answers the statement's rows (none for a statement that returns no data), `run` answers none;
// both answer the changes and the last inserted rowid, as the sqlite3 driver does.
function execute(sql, rawParams, method) {
  const statement = prepare(sql);
  const params = bound(rawParams);
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

serve(db, (message) =>
  message.steps ? script(message.steps) : execute(message.sql, message.params, message.method),
);
