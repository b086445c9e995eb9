import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { inspect } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { StoreConfig } from '../config.js';
import { Checkpointer } from './checkpointer.js';
import { migrationSource } from './migrations/index.js';
import { ReadWorkers } from './read-workers.js';
import { cachingBetterSqliteClient, READER_PRAGMAS, writerClient, type ScriptStep } from './sqlite-client.js';

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
  /** On a SQLite file opened with `checkpointer`, the thread that checkpoints its WAL; null elsewhere. */
  checkpointer: Checkpointer | null;
  dialect: Dialect;
  /**
   * Settles now the writes the SQLite writer thread has already answered, instead of when the event
   * loop next gets to them (on a busy loop, milliseconds later). Does nothing on PostgreSQL.
   */
  pollWriter(): void;
  close(): Promise<void>;
};

/** The writer's `pollAnswers` (writerClient), where the knex client has one. */
function writerPoll(knex: Knex): () => void {
  const client = knex.client as { pollAnswers?(): void };
  return client.pollAnswers ? () => client.pollAnswers!() : () => undefined;
}

export function createKnex(config: StoreConfig): Knex {
  if (config.client === 'pg') {
    return knexFactory({
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
    client: writerClient(),
    connection: { filename: config.filename },
    useNullAsDefault: true,
    // One connection: SQLite has one writer anyway, and a single connection keeps transactions simple
    // inside this process. Other processes wait on the busy timeout.
    pool: { min: 1, max: 1 },
  });
}

/**
 * Runs the statements in one transaction and returns the rows of each (none for a write). On SQLite the
 * writer thread runs the whole transaction for one message; elsewhere they run one after the other in a
 * knex transaction.
 */
export async function runScript(knex: Knex, steps: readonly ScriptStep[]): Promise<unknown[][]> {
  const client = knex.client as { runScript?(steps: readonly ScriptStep[]): Promise<unknown[][]> };
  if (client.runScript) return client.runScript(steps);
  return knex.transaction(async (trx) => {
    const results: unknown[][] = [];
    for (const step of steps) {
      const result = await trx.raw(step.sql, step.bindings as Knex.RawBinding[]);
      results.push(Array.isArray(result) ? result : (result.rows ?? []));
    }
    return results;
  });
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

/**
 * Opens (and migrates) the store's database. `checkpointer`: on a SQLite file, checkpoint the WAL from a
 * thread of its own instead of inside the writer's commits (checkpointer.ts); the ingress's process asks
 * for it, where commits are on every webhook's path.
 */
export async function openDb(config: StoreConfig, opts: { checkpointer?: boolean } = {}): Promise<Db> {
  const file = config.client === 'sqlite' && config.filename !== ':memory:';
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
  if (config.client === 'pg' || !file) {
    return {
      knex,
      reader: knex,
      readWorkers: null,
      checkpointer: null,
      dialect: config.client,
      pollWriter: writerPoll(knex),
      close: () => knex.destroy(),
    };
  }
  let checkpointer: Checkpointer | null = null;
  if (opts.checkpointer) {
    try {
      checkpointer = await Checkpointer.start(config.filename);
    } catch (error) {
      await knex.destroy();
      throw error;
    }
  }
  // The reader runs a query synchronously on the main thread, in a fraction of the time a message to a
  // thread takes; read-only, and never inside the writer's transactions. It is the same copy of SQLite
  // as the writer thread's (better-sqlite3), so the process's locks on the file are kept while any of
  // its connections holds one (docs/decisions.md, "One copy of SQLite per process"). Its one connection
  // stays open for the life of the store (min 1: never closed for being idle) and closes after the writer.
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
    checkpointer,
    dialect: config.client,
    pollWriter: writerPoll(knex),
    // The checkpointer, then the writer; then the better-sqlite3 connections (the read workers' and the
    // reader's).
    close: async () => {
      await checkpointer?.close();
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
