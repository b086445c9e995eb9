import { SqliteThread } from './sqlite-thread.js';

/** The checkpointer connection's settings: the checkpoint syncs as the writer's commits do. */
const CHECKPOINTER_PRAGMAS = ['busy_timeout = 0', 'synchronous = NORMAL'];

/** Between passes while the WAL changes, and while it does not. */
const BUSY_MS = 25;
const IDLE_MS = 250;

export type CheckpointResult = {
  /** 1 when the checkpoint could not run (another connection was checkpointing). */
  busy: number;
  /** Frames in the WAL. */
  log: number;
  /** Frames of the WAL now in the database file. */
  checkpointed: number;
};

/**
 * Checkpoints a SQLite file's WAL from a worker thread of its own (`checkpoint-thread.mjs`), so the
 * writer's commits do not wait for the copy into the database file and its fsyncs (docs/decisions.md,
 * "A checkpointer beside the writer"). It runs a PASSIVE checkpoint every 25 ms while the WAL
 * changes and every 250 ms while it does not; a PASSIVE checkpoint never waits on the writer or on
 * readers, and the writer never waits on it. The ingress's process runs one; other processes (queue
 * workers, the bridge, the CLI) leave checkpoints to their writer. Every writer still checkpoints by
 * itself past `WRITER_WAL_PAGES` (sqlite-client.ts), which is what starts the WAL over under load.
 */
export class Checkpointer {
  private constructor(private readonly thread: SqliteThread) {}

  static async start(filename: string): Promise<Checkpointer> {
    const thread = await SqliteThread.open(
      new URL('./checkpoint-thread.mjs', import.meta.url),
      { filename, pragmas: CHECKPOINTER_PRAGMAS, busyMs: BUSY_MS, idleMs: IDLE_MS },
      'checkpointer',
    );
    return new Checkpointer(thread);
  }

  /** Runs one checkpoint now (besides the timed ones) and answers SQLite's figures. */
  async pass(): Promise<CheckpointResult> {
    return this.thread.request<CheckpointResult>({ pass: true });
  }

  get alive(): boolean {
    return this.thread.alive;
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
