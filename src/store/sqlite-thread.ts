import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

type Answer = { ready: true } | { closed: true } | ({ id: number } & Record<string, unknown>);

type Pending = { resolve(answer: Record<string, unknown>): void; reject(error: Error): void };

/**
 * A worker thread that holds one better-sqlite3 connection (the read workers' `read-worker.mjs`, the
 * writer's `writer-thread.mjs`), and the requests it has in flight. A request is a message with an `id`;
 * the thread answers each with the same `id`, and an `error` (message and SQLite code) when it failed.
 * The answers come on a channel of their own (`workerData.answers`), which `poll()` can read at once.
 *
 * The thread keeps the process alive only while it has requests in flight, as a socket would.
 */
export class SqliteThread {
  readonly pending = new Map<number, Pending>();
  alive = true;
  private nextId = 0;
  private closed: (() => void) | null = null;

  private constructor(
    readonly worker: Worker,
    private readonly answers: MessagePort,
    private readonly label: string,
  ) {
    answers.on('message', (answer: Answer) => this.settle(answer));
    answers.unref();
    worker.on('message', (answer: Answer) => {
      if ('closed' in answer) this.closed?.();
    });
    const stop = (error: Error) => {
      this.alive = false;
      this.poll(); // answers the thread sent before it stopped still count
      answers.close();
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
      this.closed?.();
    };
    worker.on('error', (error) => stop(error));
    worker.on('exit', (code) => stop(new Error(`The store's ${this.label} stopped (exit code ${code})`)));
  }

  private settle(answer: Answer): void {
    if (!('id' in answer)) return;
    const pending = this.pending.get(answer.id);
    this.pending.delete(answer.id);
    if (this.pending.size === 0) this.worker.unref();
    const error = answer.error as { message: string; code: string | null } | undefined;
    if (error) pending?.reject(Object.assign(new Error(error.message), { code: error.code }));
    else pending?.resolve(answer);
  }

  /**
   * Takes the answers that have already arrived, now, instead of when the event loop next polls (which
   * on a busy loop can be several milliseconds later). Their promises settle as usual.
   */
  poll(): void {
    if (this.pending.size === 0) return;
    for (let m = receiveMessageOnPort(this.answers); m; m = receiveMessageOnPort(this.answers)) {
      this.settle(m.message as Answer);
    }
  }

  /** Sends a request and waits for its answer. */
  request<A extends Record<string, unknown>>(message: Record<string, unknown>): Promise<A> {
    if (!this.alive) return Promise.reject(new Error(`The store's ${this.label} has stopped`));
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<A>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as Pending['resolve'], reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  /** Starts the thread and waits until its connection is open. */
  static open(script: URL, workerData: unknown, label: string): Promise<SqliteThread> {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(script, {
      workerData: { ...(workerData as object), answers: port2 },
      transferList: [port2],
    });
    return new Promise<SqliteThread>((resolve, reject) => {
      const failed = (error: Error) => {
        off();
        port1.close();
        void worker.terminate();
        reject(error);
      };
      const exited = (code: number) =>
        failed(new Error(`The store's ${label} did not start (exit code ${code})`));
      const ready = () => {
        off();
        worker.unref();
        resolve(new SqliteThread(worker, port1, label));
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

  /** Closes the connection, then stops the thread. */
  async close(): Promise<void> {
    if (!this.alive) return;
    // Held while it closes: an idle thread is unreferenced, and nothing else may keep the process up.
    this.worker.ref();
    await new Promise<void>((resolve) => {
      this.closed = resolve;
      this.worker.postMessage({ close: true });
    });
    this.alive = false;
    await this.worker.terminate();
  }
}
