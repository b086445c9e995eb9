import type { Knex } from 'knex';

/** Tables whose rows the snapshot and PR detail show: a write to one of them drops the cache. */
const SHOWN_TABLES =
  /\b(pull_requests|runs|findings|deliveries|operator_commands|publications|repositories)\b/i;
const WRITE = /^\s*(insert|update|delete|with|replace)\b/i;

type Entry = { generation: number; at: number; value: Promise<unknown> };

/**
 * A short-lived cache of operator reads (the snapshot, PR detail) for dashboards that many people poll:
 * identical reads within `ttlMs` share one result, and concurrent identical reads share one query. Every
 * write this process makes to a table those reads show drops it at once (`watch`); writes by other
 * processes (workers) show within `ttlMs`. The snapshot promises freshness for 15 s (`ttlSeconds`), so
 * `ttlMs` never exceeds that.
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

  /** Drops the cache whenever `knex` writes to a table the cached reads show. */
  watch(knex: Knex): void {
    knex.on('query', (query: { sql?: string }) => {
      const sql = query.sql ?? '';
      if (WRITE.test(sql) && SHOWN_TABLES.test(sql)) this.invalidate();
    });
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
