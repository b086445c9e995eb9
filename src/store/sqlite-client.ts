import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const require = createRequire(import.meta.url);

type Statement = {
  reader: boolean;
  all(bindings: unknown[]): unknown[];
  run(bindings: unknown[]): { lastInsertRowid: number | bigint; changes: number };
};
type Connection = { prepare(sql: string): Statement; __statements?: Map<string, Statement> };
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
      const cache = (connection.__statements ??= new Map());
      let statement = cache.get(obj.sql);
      if (!statement) {
        statement = connection.prepare(obj.sql);
        if (cache.size >= MAX_STATEMENTS) cache.delete(cache.keys().next().value!);
        cache.set(obj.sql, statement);
      }
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
 * knex's sqlite3 client (the writer) with transactions that start with `BEGIN IMMEDIATE`: a transaction
 * takes the write lock first, waiting on the busy timeout (in the driver's thread pool) while another
 * connection writes (a worker process, the bridge, the CLI). A deferred `BEGIN` reads first and then
 * fails at once with SQLITE_BUSY when another connection committed in between, since a stale read
 * snapshot cannot be upgraded to a write.
 */
export function immediateSqlite3Client(): typeof Knex.Client {
  const Base = require('knex/lib/dialects/sqlite3/index.js') as { new (...args: unknown[]): object };
  const BaseTransaction = require('knex/lib/dialects/sqlite3/execution/sqlite-transaction.js') as {
    new (...args: unknown[]): { query(conn: unknown, sql: string): Promise<unknown> };
  };
  class ImmediateTransaction extends BaseTransaction {
    begin(conn: unknown): Promise<unknown> {
      return this.query(conn, 'BEGIN IMMEDIATE;');
    }
  }
  class Client extends Base {
    transaction(...args: unknown[]): unknown {
      return new ImmediateTransaction(this, ...args);
    }
  }
  return Client as unknown as typeof Knex.Client;
}
