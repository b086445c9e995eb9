import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { StoreConfig } from '../config.js';
import { migrationSource } from './migrations/index.js';
import { ReadWorkers } from './read-workers.js';
import { cachingBetterSqliteClient, immediateSqlite3Client, READER_PRAGMAS } from './sqlite-client.js';

// PostgreSQL returns BIGINT as strings; every BIGINT here is a millisecond timestamp or a counter that
// fits a double exactly, so parse them as numbers on both dialects.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type Dialect = 'sqlite' | 'pg';

export type Db = {
  /** Writes and everything transactional. */
  knex: Knex;
  /**
   * Read-only queries that need no transaction (operator reads). On a SQLite file this is a separate
   * read-only connection (better-sqlite3), so dashboard reads run beside the writer (WAL) instead of
   * queueing behind it; on PostgreSQL and in-memory SQLite it is `knex` itself.
   */
  reader: Knex;
  /**
   * On a SQLite file, read-only connections in worker threads, for reads whose work SQLite does itself
   * (off the event loop, on other cores); null elsewhere.
   */
  readWorkers: ReadWorkers | null;
  dialect: Dialect;
  close(): Promise<void>;
};

export function createKnex(config: StoreConfig): Knex {
  if (config.client === 'pg') {
    return knexFactory({
      client: 'pg',
      connection: config.connectionString,
      searchPath: config.schema ? [config.schema] : undefined,
      pool: { min: 0, max: config.poolMax },
    });
  }
  if (config.filename !== ':memory:') mkdirSync(dirname(config.filename), { recursive: true });
  return knexFactory({
    client: immediateSqlite3Client(),
    connection: { filename: config.filename },
    useNullAsDefault: true,
    // One connection: SQLite has one writer anyway, and a single connection keeps transactions simple
    // inside this process. Other processes wait on the busy timeout.
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: any, done: (err: Error | null, conn: any) => void) => {
        conn.serialize(() => {
          conn.run('PRAGMA busy_timeout = 5000');
          conn.run('PRAGMA journal_mode = WAL');
          conn.run('PRAGMA synchronous = NORMAL');
          conn.run('PRAGMA foreign_keys = ON', (err: Error | null) => done(err, conn));
        });
      },
    },
  });
}

/** Opens the store and brings its schema up to date. */
export async function openDb(config: StoreConfig): Promise<Db> {
  const knex = createKnex(config);
  try {
    if (config.client === 'pg' && config.schema) {
      await knex.raw('CREATE SCHEMA IF NOT EXISTS ??', [config.schema]);
    }
    await knex.migrate.latest({ migrationSource });
  } catch (error) {
    await knex.destroy();
    throw error;
  }
  if (config.client === 'pg' || config.filename === ':memory:') {
    return {
      knex,
      reader: knex,
      readWorkers: null,
      dialect: config.client,
      close: () => knex.destroy(),
    };
  }
  // better-sqlite3 runs a query synchronously in a fraction of the time the asynchronous driver needs to
  // hand rows across threads; read-only, and never inside the writer's transactions.
  //
  // better-sqlite3 brings its own copy of SQLite, and SQLite's POSIX locks belong to the process: when
  // this copy closes the database file, the locks the writer's copy (sqlite3) holds on it are gone, and
  // another process (a worker, the CLI) that then closes its last connection deletes the WAL this process
  // still writes to, so those writes are lost. So the reader's one connection stays open for the life of
  // the store (min 1: never closed for being idle), and it is closed after the writer.
  const reader = knexFactory({
    client: cachingBetterSqliteClient(),
    connection: { filename: config.filename, options: { readonly: true } },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (
        conn: { pragma(sql: string): unknown },
        done: (err: Error | null, conn: unknown) => void,
      ) => {
        try {
          for (const pragma of READER_PRAGMAS) conn.pragma(pragma);
          done(null, conn);
        } catch (error) {
          done(error as Error, conn);
        }
      },
    },
  });
  const readWorkers = new ReadWorkers(config.filename);
  return {
    knex,
    reader,
    readWorkers,
    dialect: config.client,
    // The writer first; then the better-sqlite3 connections (the read workers' and the reader's).
    close: async () => {
      await knex.destroy();
      await readWorkers.close();
      await reader.destroy();
    },
  };
}

/** Parses a JSON text column; `null` stays `null`. */
export function parseJson<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  if (typeof value !== 'string') return value as T;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

export function toBool(value: unknown): boolean {
  return value === true || value === 1 || value === '1' || value === 't';
}

/** A unique-constraint violation on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT' || /UNIQUE constraint/.test(e.message ?? '');
}
