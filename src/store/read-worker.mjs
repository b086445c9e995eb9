// A read worker of the store (see read-workers.ts): one read-only better-sqlite3 connection to the
// SQLite file, running the statements the main thread sends it and answering with their rows. It never
// throws (thread-serve.mjs), so the connection stays open for the life of the store.
import { openConnection, serve, statementCache } from './thread-serve.mjs';

// The reader's settings (READER_PRAGMAS in sqlite-client.ts) come with workerData.
const db = openConnection({ readonly: true, fileMustExist: true });
const prepare = statementCache(db, 100);

serve(db, (message) => ({ rows: prepare(message.sql).all(message.params) }));
