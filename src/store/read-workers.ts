import { Worker } from 'node:worker_threads';
import type { Knex } from 'knex';
import { READER_PRAGMAS } from './sqlite-client.js';

type Answer =
  | { ready: true }
  | { closed: true }
  | { id: number; rows: unknown[] }
  | { id: number; error: { message: string; code: string | null } };

type Pending = { resolve(rows: unknown[]): void; reject(error: Error): void };

/** One worker thread with its connection, and the queries it has in flight. */
class ReadWorker {
  readonly pending = new Map<number, Pending>();
  alive = true;
  private closed: (() => void) | null = null;

  private constructor(readonly worker: Worker) {
    worker.on('message', (answer: Answer) => {
      if ('closed' in answer) return this.closed?.();
      if (!('id' in answer)) return;
      const pending = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if ('rows' in answer) pending?.resolve(answer.rows);
      else pending?.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
    });
    const stop = (error: Error) => {
      this.alive = false;
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
      this.closed?.();
    };
    worker.on('error', (error) => stop(error));
    worker.on('exit', (code) => stop(new Error(`The store's read worker stopped (exit code ${code})`)));
  }

  /** Sends a query. The thread keeps the process alive only while it has queries in flight. */
  send(id: number, sql: string, params: unknown, pending: Pending): void {
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(id, pending);
    this.worker.postMessage({ id, sql, params });
  }

  static open(filename: string): Promise<ReadWorker> {
    const worker = new Worker(new URL('./read-worker.mjs', import.meta.url), {
      workerData: { filename, pragmas: READER_PRAGMAS },
    });
    return new Promise<ReadWorker>((resolve, reject) => {
      const failed = (error: Error) => {
        off();
        void worker.terminate();
        reject(error);
      };
      const exited = (code: number) =>
        failed(new Error(`The store's read worker did not start (exit code ${code})`));
      const ready = () => {
        off();
        worker.unref();
        resolve(new ReadWorker(worker));
      };
      // Only these listeners: a Worker keeps its own on itself.
      const off = () => {
        worker.off('error', failed);
        worker.off('exit', exited);
        worker.off('message', ready);
      };
      worker.once('error', failed);
      worker.once('exit', exited);
      worker.once('message', ready);
    });
  }

  async close(): Promise<void> {
    if (!this.alive) return;
    // Held while it closes: an idle thread is unreferenced, and nothing else may keep the process up.
    this.worker.ref();
    await new Promise<void>((resolve) => {
      this.closed = resolve;
      this.worker.postMessage({ close: true });
    });
    await this.worker.terminate();
  }
}

/**
 * Read-only connections to the SQLite file in worker threads, for the reads where SQLite itself does
 * the heavy work and hands back little (the PR detail, whose JSON SQLite builds): they run beside the
 * event loop, which keeps taking webhooks and serving cached reads, and on other cores.
 *
 * They use better-sqlite3, the same copy of SQLite as the main thread's reader (a native module is
 * loaded once per process), so the rule of that copy holds for them too: a connection stays open for the
 * life of the store and closes after the writer (docs/decisions.md, "Two copies of SQLite in one
 * process"). A worker answers every error instead of throwing, so it does not stop on its own; if one
 * stops anyway its queries fail and it gets none again.
 */
export class ReadWorkers {
  private nextId = 0;
  private started: Promise<ReadWorker[]> | null = null;
  private workers: ReadWorker[] = [];
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
    let worker: ReadWorker | undefined;
    for (const w of workers) if (w.alive && (!worker || w.pending.size < worker.pending.size)) worker = w;
    if (!worker) throw new Error("The store's read workers have stopped");
    const id = this.nextId++;
    const chosen = worker;
    return new Promise<T[]>((resolve, reject) =>
      chosen.send(id, sql, params, { resolve: resolve as (rows: unknown[]) => void, reject }),
    );
  }

  /** Closes every connection (after the writer: see above) and stops the threads. */
  async close(): Promise<void> {
    this.closing = true;
    const workers = await this.started?.catch(() => []);
    for (const w of workers ?? []) await w.close();
  }

  private start(): Promise<ReadWorker[]> {
    this.started ??= (async () => {
      try {
        for (let i = 0; i < this.size; i++) this.workers.push(await ReadWorker.open(this.filename));
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
