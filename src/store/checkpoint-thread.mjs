// The store's checkpointer on SQLite (Checkpointer in checkpointer.ts): one better-sqlite3 connection in
// a worker thread that copies the WAL's committed pages into the database file, beside the writer, so
// the writer's commits do not wait on that copy and its two fsyncs. A PASSIVE checkpoint never takes the
// write lock and never waits on the writer or on readers. Requests: `{pass: true}` runs one pass now and
// answers SQLite's figures (tests and diagnostics).
import { workerData } from 'node:worker_threads';
import { openConnection, serve } from './thread-serve.mjs';

const db = openConnection();
const { busyMs, idleMs } = workerData;

/** One PASSIVE checkpoint: `log` frames in the WAL, `checkpointed` of them now in the database file. */
function pass() {
  const [result] = db.pragma('wal_checkpoint(PASSIVE)');
  return { busy: Number(result.busy), log: Number(result.log), checkpointed: Number(result.checkpointed) };
}

// Every `busyMs` while the WAL changes, every `idleMs` when the last pass found it as the one before
// left it. The timer does not keep the thread alive: it ends when the store closes the connection.
let last = { log: -1, checkpointed: -1 };
function tick() {
  if (!db.open) return;
  let changed = false;
  try {
    const now = pass();
    changed = now.log !== last.log || now.checkpointed !== last.checkpointed;
    last = now;
  } catch {
    // SQLITE_BUSY from another process's checkpoint, or the file gone: the next pass tries again.
  }
  setTimeout(tick, changed ? busyMs : idleMs).unref();
}
setTimeout(tick, busyMs).unref();

serve(db, (message) => {
  if (message.pass) return pass();
  throw new Error('The checkpointer runs passes only');
});
