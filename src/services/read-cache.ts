type Entry = { generation: number; at: number; value: Promise<unknown> };

/**
 * A short-lived cache of operator reads (the snapshot, PR detail) for dashboards that many people poll:
 * identical reads within `ttlMs` share one result, and concurrent identical reads share one query. Every
 * write this process makes through the store to a table those reads show drops it at once (`invalidate`,
 * subscribed to `store.shownWrites`); writes by other processes (workers) show within `ttlMs`. The snapshot promises
 * freshness for 15 s (`ttlSeconds`), so `ttlMs` never exceeds that.
 */
export class ReadCache {
  private generation = 0;
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
    private readonly maxEntries = 1000,
  ) {}

  /** Drops every entry. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return load();
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.generation === this.generation && now - hit.at < this.ttlMs)
      return hit.value as Promise<T>;
    const value = load();
    const entry: Entry = { generation: this.generation, at: now, value };
    this.entries.delete(key);
    this.entries.set(key, entry);
    // A failed read is never served again.
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}

/**
 * A cache of serialized reads validated by a stamp: before an entry is served, a cheap query computes
 * the stamp of what the read shows (row counts and last-change columns over indexed rows); a different
 * stamp reloads. Writes by any process show at once, as long as they change the stamp. As a safety net an
 * entry is never served longer than `maxAgeMs` (15 s, the snapshot's freshness promise), which bounds a
 * change by another process that leaves the stamp as it was (two changes within one millisecond). Entries are kept
 * as JSON text, least recently used dropped first beyond `maxBytes`.
 */
export class StampedCache {
  private readonly entries = new Map<string, { stamp: string; at: number; json: string }>();
  private bytes = 0;
  private generation = 0;

  constructor(
    readonly enabled: boolean,
    private readonly maxAgeMs = 15_000,
    private readonly maxBytes = 96 * 1024 * 1024,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * This process wrote to a table the cached reads show (subscribed to `store.shownWrites`). The count is part
   * of every stamp: a local write always reloads, even one that lands in the same millisecond as the
   * previous change.
   */
  written(): void {
    this.generation++;
  }

  /**
   * The JSON of `key`: the entry when `stamp()` still gives its stamp, else `load()`, which answers the
   * JSON with the stamp it was read at (read before it, or with it). A key without a live entry loads at
   * once, without asking for the stamp first.
   */
  async get(
    key: string,
    stamp: () => Promise<string>,
    load: () => Promise<{ stamp: string; json: string }>,
  ): Promise<string> {
    if (!this.enabled) return (await load()).json;
    const hit = this.entries.get(key);
    if (hit && this.now() - hit.at < this.maxAgeMs) {
      const generation = this.generation;
      if (hit.stamp === `${generation}|${await stamp()}` && this.now() - hit.at < this.maxAgeMs) {
        this.entries.delete(key);
        this.entries.set(key, hit);
        return hit.json;
      }
    }
    const generation = this.generation;
    const now = this.now();
    const loaded = await load();
    this.drop(key);
    if (loaded.json.length <= this.maxBytes) {
      this.entries.set(key, { stamp: `${generation}|${loaded.stamp}`, at: now, json: loaded.json });
      this.bytes += loaded.json.length;
      while (this.bytes > this.maxBytes) this.drop(this.entries.keys().next().value!);
    }
    return loaded.json;
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.json.length;
  }
}
