import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '../clock.js';
import type { QueueSelection } from '../config/index.js';
import { openDb } from '../store/db.js';
import type { Store } from '../store/index.js';
import { JobStore } from '../store/jobs.js';
import { HttpQueue } from './http-client.js';
import type { QueueBackend } from './types.js';

export type OpenedQueue = {
  backend: QueueBackend;
  /** True when the jobs live in the application store itself (enqueued with the rows they refer to). */
  sharesStore: boolean;
  /** Where the jobs are, for the start-up log line (never the token). */
  describe: string;
  close(): Promise<void>;
};

/**
 * Opens the queue a worker claims from (review-engine 8, "Queue selection"): the HTTP queue of a
 * Verdict server, a SQLite queue file, the application store's job table (PostgreSQL or SQLite), or a
 * process-local memory queue (a job table in an in-memory SQLite database), which is logged as losing
 * its jobs on exit.
 */
export async function openQueue(
  selection: QueueSelection,
  deps: { store: Store; clock: Clock; ids: IdGenerator; log: Logger },
): Promise<OpenedQueue> {
  switch (selection.kind) {
    case 'http':
      return {
        backend: new HttpQueue({ url: selection.url, token: selection.token }),
        sharesStore: false,
        describe: `http queue at ${withoutCredentials(selection.url)}`,
        close: async () => undefined,
      };
    case 'sqlite':
      return sqliteQueue(selection.filename, deps, `sqlite queue at ${selection.filename}`);
    case 'memory':
      deps.log.warn(
        { event: 'memory-queue' },
        'using a process-local memory queue: only this process can enqueue into it, and its jobs are lost on exit',
      );
      return sqliteQueue(':memory:', deps, 'process-local memory queue');
    case 'store':
      return {
        backend: deps.store.jobs,
        sharesStore: true,
        describe: `${deps.store.db.dialect} store job table`,
        close: async () => undefined,
      };
  }
}

/**
 * A job table of its own in a SQLite file, or in this process's memory (`:memory:`): the same JobStore
 * either way, so the memory queue has the job table's semantics by construction.
 */
async function sqliteQueue(
  filename: string,
  deps: { clock: Clock; ids: IdGenerator },
  describe: string,
): Promise<OpenedQueue> {
  const db = await openDb({ client: 'sqlite', filename });
  return {
    backend: new JobStore(db.knex, 'sqlite', deps.clock, deps.ids),
    sharesStore: false,
    describe,
    close: () => db.close(),
  };
}

/** A URL for the log: any user name or password in it is dropped. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(unparseable URL)';
  }
}
