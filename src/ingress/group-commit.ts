/**
 * Group commit: items submitted while a commit is in flight are written together by the next one, so a
 * burst of N webhooks costs a handful of transactions instead of N. Each submitter gets its own result.
 */
export class GroupCommitter<T, R> {
  private pending: Array<{ item: T; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly commit: (items: T[]) => Promise<R[]>,
    private readonly opts: {
      maxBatch: number;
      maxInFlight: number;
    } = { maxBatch: 200, maxInFlight: 1 },
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.opts.maxInFlight) return;
    this.scheduled = true;
    // Let the requests that are already readable join this batch before it starts.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0 || this.inFlight >= this.opts.maxInFlight) return;
    const batch = this.pending.splice(0, this.opts.maxBatch);
    this.inFlight++;
    try {
      const results = await this.commit(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(results[i]!));
    } catch (error) {
      for (const b of batch) b.reject(error);
    } finally {
      this.inFlight--;
      if (this.pending.length > 0) this.schedule();
    }
  }

  /** Waits until everything submitted so far has been committed. */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
  }
}
