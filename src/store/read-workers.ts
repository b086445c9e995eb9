import type { Knex } from 'knex';
import { READER_PRAGMAS } from './sqlite-client.js';
import { SqliteThread } from './sqlite-thread.js';

/**
 * Read-only connections to the SQLite file in worker threads, for the reads where SQLite itself does
 * the heavy work and hands back little (the PR detail, whose JSON SQLite builds): they run beside the
 * event loop, which keeps taking webhooks and serving cached reads, and on other cores.
 *
 * They use better-sqlite3, the same copy of SQLite as the writer thread and the main thread's reader (a
 * native module is loaded once per process: docs/decisions.md, "One copy of SQLite per process"). A
 * connection stays open for the life of the store and closes after the writer. A worker answers every
 * error instead of throwing, so it does not stop on its own; if one stops anyway its queries fail and it
 * gets none again.
 */
export class ReadWorkers {
  private started: Promise<SqliteThread[]> | null = null;
  private workers: SqliteThread[] = [];
  private failed = false;
  private closing = false;

  /**
   * Threads start at the first query, not before: processes that never serve operator reads (queue
   * workers, the bridge, the CLI) never start them.
   */
  constructor(
    private readonly filename: string,
    private readonly size = 2,
  ) {}

  /** False once the threads failed to start or have all stopped: use the main thread's reader then. */
  get available(): boolean {
    return !this.failed && !this.closing && (this.started === null || this.workers.some((w) => w.alive));
  }

  /** How many threads run now. */
  get running(): number {
    return this.workers.filter((w) => w.alive).length;
  }

  /**
   * The rows of `sql` with its parameters (named: `:name` in the text, `{name}` here; or positional
   * `?`), on the running worker with the fewest queries in flight.
   */
  async all<T>(sql: string, params: Record<string, unknown> | readonly unknown[]): Promise<T[]> {
    const workers = await this.start();
    let worker: SqliteThread | undefined;
    for (const w of workers) if (w.alive && (!worker || w.pending.size < worker.pending.size)) worker = w;
    if (!worker) throw new Error("The store's read workers have stopped");
    return (await worker.request<{ rows: T[] }>({ sql, params })).rows;
  }

  /** Closes every connection (after the writer: see above) and stops the threads. */
  async close(): Promise<void> {
    this.closing = true;
    const workers = await this.started?.catch(() => []);
    for (const w of workers ?? []) await w.close();
  }

  private start(): Promise<SqliteThread[]> {
    this.started ??= (async () => {
      try {
        for (let i = 0; i < this.size; i++)
          this.workers.push(
            await SqliteThread.open(
              new URL('./read-worker.mjs', import.meta.url),
              { filename: this.filename, pragmas: READER_PRAGMAS },
              'read worker',
            ),
          );
        return this.workers;
      } catch (error) {
        this.failed = true;
        for (const w of this.workers) await w.close();
        throw error;
      }
    })();
    return this.started;
  }
}

/**
 * The rows of a read-only knex query: in a read worker when the store has them (SQLite file), else on
 * the reader. For reads whose SQLite work is large next to their rows.
 */
export async function readRows<T>(
  db: { reader: Knex; readWorkers: ReadWorkers | null },
  query: Knex.QueryBuilder | Knex.Raw,
): Promise<T[]> {
  if (!db.readWorkers?.available) return (await query) as T[];
  const { sql, bindings } = query.toSQL().toNative();
  // Bound as the reader's own client binds them (SQLite has no booleans or dates).
  const client = db.reader.client as { _formatBindings(bindings: readonly unknown[]): unknown[] };
  return db.readWorkers.all<T>(sql, client._formatBindings(bindings));
}
