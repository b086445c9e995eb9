import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { inspect } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { StoreConfig } from '../config/index.js';
import { migrationNames, migrationSource } from './migrations/index.js';

// PostgreSQL returns BIGINT as strings; every BIGINT here is a millisecond timestamp or a counter that
// fits a double exactly, so parse them as numbers on both dialects.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type Dialect = 'sqlite' | 'pg';

export type Db = {
  knex: Knex;
  dialect: Dialect;
  close(): Promise<void>;
};

/**
 * Every SQLite connection's settings. WAL lets readers in other processes (the CLI) read while this one
 * writes; `synchronous = FULL` makes a commit durable when it returns (one fsync of the WAL per commit, so
 * per group commit of deliveries): a webhook answered 2xx survives a power loss (docs/architecture.md).
 */
export const SQLITE_PRAGMAS = [
  'journal_mode = WAL',
  'synchronous = FULL',
  'busy_timeout = 5000',
  'foreign_keys = ON',
] as const;

type SqliteConnection = { pragma(sql: string): unknown };

/** `log`: where knex's own messages go (default: the console), e.g. a quiet one for a check that reports them. */
export function createKnex(config: StoreConfig, opts: { log?: Knex.Logger } = {}): Knex {
  const log = opts.log ? { log: opts.log } : {};
  if (config.client === 'pg') {
    return knexFactory({
      ...log,
      client: 'pg',
      connection: config.connectionString,
      searchPath: config.schema ? [config.schema] : undefined,
      pool: { min: 0, max: config.poolMax },
    });
  }
  if (config.filename !== ':memory:') {
    const dir = dirname(config.filename);
    try {
      mkdirSync(dir, { recursive: true });
      accessSync(dir, fsConstants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(
        `cannot open the SQLite store ${config.filename} (VERDICT_DB_PATH): its directory ${dir} cannot be created or written (${code ?? (error as Error).message})`,
        { cause: error },
      );
    }
  }
  return knexFactory({
    ...log,
    client: 'better-sqlite3',
    connection: { filename: config.filename },
    useNullAsDefault: true,
    // One connection: SQLite has one writer anyway, and better-sqlite3 runs every statement on this thread,
    // so a second connection in the same process would only interleave transactions. Other processes wait
    // on the busy timeout.
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) => {
        try {
          for (const pragma of SQLITE_PRAGMAS) conn.pragma(pragma);
          done(null, conn);
        } catch (error) {
          done(error as Error, conn);
        }
      },
    },
  });
}

/** True when the knex instance (or a transaction of it) speaks to SQLite. */
export function isSqlite(knex: Knex): boolean {
  return knex.client.config.client === 'better-sqlite3';
}

/**
 * A transaction that reads and then writes. On SQLite it takes the write lock with its first statement (a
 * write that changes nothing), as `BEGIN IMMEDIATE` would: a transaction that read first could not take the
 * lock after another process committed (SQLITE_BUSY_SNAPSHOT, at once, whatever the busy timeout), while a
 * transaction that asks for the lock first waits on the busy timeout like any write. On PostgreSQL it is a
 * plain transaction.
 */
export function writeTransaction<T>(knex: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    if (isSqlite(knex)) await trx.raw('UPDATE knex_migrations_lock SET is_locked = is_locked WHERE 0');
    return work(trx);
  });
}

/**
 * The store's writes to the tables the operator's reads show (pull requests, runs, findings, deliveries,
 * commands, publications, repositories, memory): each write path of those tables calls `wrote` (or writes
 * in its transactions, which call it when settled, failed too), and the read caches subscribe.
 */
export class ShownWrites {
  private readonly listeners = new Set<() => void>();

  /** Calls `listener` after every write to a shown table. */
  subscribe(listener: () => void): void {
    this.listeners.add(listener);
  }

  wrote(): void {
    for (const listener of this.listeners) listener();
  }

  writeTransaction<T>(knex: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return writeTransaction(knex, work).finally(() => this.wrote());
  }

  transaction<T>(knex: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return knex.transaction(work).finally(() => this.wrote());
  }
}

/** One statement of a script: SQL with positional `?` parameters. */
export type ScriptStep = { sql: string; bindings: readonly unknown[] };

/**
 * Runs the statements one after the other in one transaction and returns the rows of each (none for a
 * write). The first statement should be a write: on SQLite it then takes the write lock before anything
 * is read (see writeTransaction), at no extra statement's cost.
 */
export async function runScript(knex: Knex, steps: readonly ScriptStep[]): Promise<unknown[][]> {
  return knex.transaction(async (trx) => {
    const results: unknown[][] = [];
    for (const step of steps) {
      const result = await trx.raw(step.sql, step.bindings as Knex.RawBinding[]);
      results.push(Array.isArray(result) ? result : (result.rows ?? []));
    }
    return results;
  });
}

/** The part of a better-sqlite3 connection a script runs on (its public API). */
export type SqliteDatabase = {
  prepare(sql: string): {
    readonly reader: boolean;
    all(...bindings: unknown[]): unknown[];
    run(...bindings: unknown[]): unknown;
  };
  transaction<F extends (...args: never[]) => unknown>(fn: F): F;
};

/**
 * `runScript` on a better-sqlite3 connection of one's own, without knex: each statement is prepared once
 * and kept (by its text; a batch of n rows always has the same text), the script runs in one
 * transaction. At most `cacheSize` statements are kept.
 */
export function sqliteScriptRunner(
  database: SqliteDatabase,
  cacheSize = 256,
): (steps: readonly ScriptStep[]) => Promise<unknown[][]> {
  const statements = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  const statement = (sql: string) => {
    let prepared = statements.get(sql);
    if (!prepared) {
      if (statements.size >= cacheSize) statements.clear();
      prepared = database.prepare(sql);
      statements.set(sql, prepared);
    }
    return prepared;
  };
  const script = database.transaction((steps: readonly ScriptStep[]) =>
    steps.map((step) => {
      const prepared = statement(step.sql);
      // Values as better-sqlite3 binds them (numbers, strings, bigints, buffers, null; no booleans).
      const bindings = step.bindings;
      if (prepared.reader) return prepared.all(...bindings);
      prepared.run(...bindings);
      return [];
    }),
  );
  return async (steps) => script(steps);
}

/**
 * An error opening the store that names the store and says why: drivers and pools can reject with
 * objects that are not Errors, which would print as `[object Object]`.
 */
function openError(config: StoreConfig, error: unknown): Error {
  const where = config.client === 'sqlite' ? `the SQLite store ${config.filename}` : 'the PostgreSQL store';
  const why =
    error instanceof Error
      ? error.message.includes('[object Object]') && error.cause !== undefined
        ? inspect(error.cause, { depth: 2, breakLength: Infinity })
        : error.message
      : inspect(error, { depth: 2, breakLength: Infinity });
  return new Error(`cannot open ${where}: ${why}`, { cause: error });
}

/** Opens (and migrates) the store's database. */
export async function openDb(config: StoreConfig): Promise<Db> {
  const knex = createKnex(config);
  try {
    if (config.client === 'pg' && config.schema) {
      await knex.raw('CREATE SCHEMA IF NOT EXISTS ??', [config.schema]);
    }
    await knex.migrate.latest({ migrationSource });
  } catch (error) {
    await knex.destroy();
    throw openError(config, error);
  }
  return { knex, dialect: config.client, close: () => knex.destroy() };
}

export type MigrationState = {
  /** Migrations the database has run, in the order it ran them. */
  applied: string[];
  /** This code's migrations the database has not run (opening the store runs them). */
  pending: string[];
  /** Migrations the database has run that this code does not know (a newer Verdict migrated it). */
  unknown: string[];
};

/** Where a database stands with this code's migrations; it only reads (an empty database has run none). */
export async function migrationState(knex: Knex): Promise<MigrationState> {
  const applied = (await knex.schema.hasTable('knex_migrations'))
    ? (await knex('knex_migrations').select('name').orderBy('id')).map((row: { name: string }) => row.name)
    : [];
  const known = new Set(migrationNames);
  const done = new Set(applied);
  return {
    applied,
    pending: migrationNames.filter((name) => !done.has(name)),
    unknown: applied.filter((name) => !known.has(name)),
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

/** A nullable number column: null (or a column the row lacks) stays null. */
export function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function toBool(value: unknown): boolean {
  return value === true || value === 1 || value === '1' || value === 't';
}

/** A unique-constraint violation on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT' || /UNIQUE constraint/.test(e.message ?? '');
}
