import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { StoreConfig } from '../config.js';
import { migrationSource } from './migrations/index.js';

// PostgreSQL returns BIGINT as strings; every BIGINT here is a millisecond timestamp or a counter that
// fits a double exactly, so parse them as numbers on both dialects.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type Dialect = 'sqlite' | 'pg';

export type Db = {
  knex: Knex;
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
    client: 'sqlite3',
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
  return { knex, dialect: config.client, close: () => knex.destroy() };
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
