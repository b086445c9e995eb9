import { createRequire } from 'node:module';
import type { Knex } from 'knex';
import { SqliteThread } from './sqlite-thread.js';
import { statementCache } from './statement-cache.mjs';

const require = createRequire(import.meta.url);

type Statement = {
  reader: boolean;
  all(bindings: unknown[]): unknown[];
  run(bindings: unknown[]): { lastInsertRowid: number | bigint; changes: number };
};
type Connection = { prepare(sql: string): Statement; __prepare?: (sql: string) => Statement };
type QueryObject = { sql?: string; bindings?: unknown[]; response?: unknown; context?: unknown };

/**
 * The settings of every read-only better-sqlite3 connection (the reader and the read workers'). Dashboard
 * reads jump between pull requests: keep the hot pages in memory (64 MiB cache, memory-mapped reads)
 * instead of the 2 MiB default.
 */
export const READER_PRAGMAS = ['busy_timeout = 5000', 'cache_size = -65536', 'mmap_size = 268435456'];

/** Prepared statements kept per connection (the operator reads repeat a handful of SQL texts). */
const MAX_STATEMENTS = 200;

/**
 * knex's better-sqlite3 client for the read-only operator connection, keeping the connection's prepared
 * statements instead of preparing the same SQL on every call.
 */
export function cachingBetterSqliteClient(): typeof Knex.Client {
  const Base = require('knex/lib/dialects/better-sqlite3/index.js') as {
    new (...args: unknown[]): { _formatBindings(bindings: unknown[] | undefined): unknown[] };
  };
  class CachingClient extends Base {
    async _query(connection: Connection, obj: QueryObject): Promise<QueryObject> {
      if (!obj.sql) throw new Error('The query is empty');
      const statement = (connection.__prepare ??= statementCache(connection, MAX_STATEMENTS))(obj.sql);
      const bindings = this._formatBindings(obj.bindings);
      if (statement.reader) {
        obj.response = statement.all(bindings);
        return obj;
      }
      const result = statement.run(bindings);
      obj.response = result;
      obj.context = { lastID: result.lastInsertRowid, changes: result.changes };
      return obj;
    }
  }
  return CachingClient as unknown as typeof Knex.Client;
}

/**
 * The WAL size, in pages, at which a writer checkpoints by itself (SQLite's default is 1000). The
 * server's process checkpoints beside its writer (checkpointer.ts), copying pages into the database file
 * as they come; but SQLite starts the WAL over only when a write transaction begins with every page
 * copied, which under a steady stream of commits seldom happens, so a writer's own checkpoint, with
 * little left to copy by then, is what keeps the WAL file near this size (about 16 MiB at 4 KiB pages).
 * Every process's writer has the same threshold: at SQLite's 1000, a queue worker's commit would
 * checkpoint (and wait on two fsyncs) whenever the server's WAL is past 1000 pages, most of the time
 * under load. A process without a checkpointer (a worker alone, the CLI) checkpoints less often and
 * longer.
 */
export const WRITER_WAL_PAGES = 4000;

/** The writer connection's settings. */
export const WRITER_PRAGMAS = [
  'busy_timeout = 5000',
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'foreign_keys = ON',
  `wal_autocheckpoint = ${WRITER_WAL_PAGES}`,
];

/**
 * A parameter the writer thread binds as the LZ4 block of `value` (its bytes, or its text as UTF-8):
 * the compression runs in that thread, before the statement, and neither the message's statement nor
 * SQLite ever holds the uncompressed bytes (writer-thread.mjs). Only the SQLite writer knows it.
 */
export type Lz4Param = { lz4: Uint8Array | string };

export const lz4Param = (value: Uint8Array | string): Lz4Param => ({ lz4: value });

/** One statement of a script: SQL with positional `?` parameters. */
export type ScriptStep = { sql: string; bindings: readonly unknown[] };

type WriterAnswer = { rows: unknown[] | null; changes: number; lastID: number; blobs?: boolean };

/** BLOB values as Buffers (a Buffer crosses threads as a plain Uint8Array). */
function blobsAsBuffers(rows: unknown[]): void {
  for (const row of rows as Array<Record<string, unknown>>) {
    for (const key in row) {
      const value = row[key];
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) {
        row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      }
    }
  }
}

/**
 * knex's client for the writer on SQLite. Its one connection is a better-sqlite3 connection in a worker
 * thread (`writer-thread.mjs`): a statement costs one message each way, and SQLite's work, including
 * waiting on the busy timeout while another process writes, runs beside the event loop.
 *
 * - Queries are answered as knex's sqlite3 client answers them (the method decides between rows and
 *   the changes/last id), so the rest of the store reads the same shapes.
 * - Transactions start with `BEGIN IMMEDIATE`: a transaction takes the write lock first, waiting on the
 *   busy timeout while another connection writes (a worker process, the bridge, the CLI). A deferred
 *   `BEGIN` reads first and then fails at once with SQLITE_BUSY when another connection committed in
 *   between, since a stale read snapshot cannot be upgraded to a write.
 * - `runScript` sends several statements to run in one transaction as one message: the whole
 *   transaction costs one round trip, however busy the event loop is (the ingress's group commit).
 *
 * It is the same copy of SQLite as the reader's and the read workers' (better-sqlite3), so all the
 * connections of a process share SQLite's locking (docs/decisions.md, "One copy of SQLite per
 * process").
 */
export function writerClient(): typeof Knex.Client {
  const Base = require('knex/lib/dialects/better-sqlite3/index.js') as {
    new (...args: unknown[]): {
      connectionSettings: { filename: string };
      _formatBindings(bindings: readonly unknown[] | undefined): unknown[];
      acquireConnection(): Promise<SqliteThread>;
      releaseConnection(connection: SqliteThread): Promise<unknown>;
    };
  };
  const BaseTransaction = require('knex/lib/dialects/sqlite3/execution/sqlite-transaction.js') as {
    new (...args: unknown[]): { query(conn: unknown, sql: string): Promise<unknown> };
  };
  class ImmediateTransaction extends BaseTransaction {
    begin(conn: unknown): Promise<unknown> {
      return this.query(conn, 'BEGIN IMMEDIATE;');
    }
  }
  class WriterClient extends Base {
    private thread: SqliteThread | null = null;

    async acquireRawConnection(): Promise<SqliteThread> {
      this.thread = await SqliteThread.open(
        new URL('./writer-thread.mjs', import.meta.url),
        { filename: this.connectionSettings.filename, pragmas: WRITER_PRAGMAS },
        'writer',
      );
      return this.thread;
    }

    /** Settles now the requests the writer thread has already answered (SqliteThread.poll). */
    pollAnswers(): void {
      this.thread?.poll();
    }

    destroyRawConnection(connection: SqliteThread): Promise<void> {
      return connection.close();
    }

    validateConnection(connection: SqliteThread): boolean {
      return connection.alive;
    }

    async _query(connection: SqliteThread, obj: QueryObject & { method?: string; returning?: unknown }) {
      if (!obj.sql) throw new Error('The query is empty');
      // As knex's sqlite3 client: writes without RETURNING answer changes and the last id, the rest rows.
      const method =
        obj.method === 'del' ||
        obj.method === 'counter' ||
        ((obj.method === 'insert' || obj.method === 'update') && !obj.returning)
          ? 'run'
          : 'all';
      const answer = await connection.request<WriterAnswer>({
        sql: obj.sql,
        params: this._formatBindings(obj.bindings),
        method,
      });
      if (answer.blobs && answer.rows) blobsAsBuffers(answer.rows);
      obj.response = answer.rows ?? undefined;
      obj.context = { lastID: answer.lastID, changes: answer.changes };
      return obj;
    }

    transaction(...args: unknown[]): unknown {
      return new ImmediateTransaction(this, ...args);
    }

    /** Runs the steps in one transaction on the writer thread; the rows of each step (none for a write). */
    async runScript(steps: readonly ScriptStep[]): Promise<unknown[][]> {
      const message = steps.map((s) => ({ sql: s.sql, params: this._formatBindings(s.bindings) }));
      const connection = await this.acquireConnection();
      const answer = connection.request<{ results: unknown[][]; blobs: boolean }>({ steps: message });
      answer.catch(() => undefined); // awaited below; not unhandled meanwhile
      // Released as soon as the message is posted: the thread runs messages in order, so whatever the
      // next holder sends (a knex transaction's BEGIN) runs after the whole script.
      await this.releaseConnection(connection);
      const { results, blobs } = await answer;
      if (blobs) for (const rows of results) blobsAsBuffers(rows);
      return results;
    }
  }
  return WriterClient as unknown as typeof Knex.Client;
}
