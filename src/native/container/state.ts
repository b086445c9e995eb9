import { randomId, systemClock } from '../../clock.js';
import { openStore, type Store } from '../../store/index.js';
import { NATIVE_STATE_TABLES, type StateBundle, type StateFlush, type StateTable } from '../protocol.js';

type Row = Record<string, unknown>;
/** Rows of a table by their key, as JSON: what the container was handed (or last flushed). */
type Snapshot = Map<string, Map<string, string>>;

const keyOf = (table: StateTable, row: Row): string => JSON.stringify(table.key.map((k) => row[k] ?? null));

/**
 * The container's state: the project's own store on an in-memory SQLite database (migrations run),
 * hydrated from the worker's bundle. `changes()` answers what the review did since the bundle (or the
 * last successful flush): rows it created go in `insert` (without a generated key: the worker assigns
 * it), rows it changed go in `upsert` by key. Foreign keys are off: a bundle holds the rows a review
 * reads, not every row they point at (a run's job lives in the worker's queue, not here).
 */
export class ContainerState {
  private baseline: Snapshot = new Map();

  private constructor(readonly store: Store) {}

  /**
   * `runId`: the id the worker gave the run; the run this store creates (when the bundle holds none) gets
   * it, so that the rows flushed back name the worker's run.
   */
  static async open(dedupeTtlSeconds: number, runId?: string): Promise<ContainerState> {
    const ids = (prefix: string) => (prefix === 'run' && runId ? runId : randomId(prefix));
    const store = await openStore(
      { client: 'sqlite', filename: ':memory:' },
      { clock: systemClock, ids, dedupeTtlSeconds },
    );
    await store.db.knex.raw('PRAGMA foreign_keys = OFF');
    return new ContainerState(store);
  }

  /** Writes the bundle's rows into their tables; rows of tables the contract does not name are refused. */
  async hydrate(bundle: StateBundle): Promise<void> {
    const known = new Set(NATIVE_STATE_TABLES.map((t) => t.table));
    const unknown = Object.keys(bundle.tables).filter((t) => !known.has(t));
    if (unknown.length > 0)
      throw new Error(`state bundle names tables outside the contract: ${unknown.join(', ')}`);
    const knex = this.store.db.knex;
    await knex.transaction(async (trx) => {
      for (const { table } of NATIVE_STATE_TABLES) {
        const rows = bundle.tables[table] ?? [];
        if (rows.length === 0) continue;
        // The bundle's rows replace what the migrations seeded (the default review policy row); a key
        // on an expression (memory_knowledge's lower(repo)) leaves no column list to merge on.
        await trx(table).del();
        for (let i = 0; i < rows.length; i += 100) await trx(table).insert(rows.slice(i, i + 100));
      }
    });
    this.baseline = await this.snapshot();
  }

  private async snapshot(): Promise<Snapshot> {
    const out: Snapshot = new Map();
    for (const table of NATIVE_STATE_TABLES) {
      const rows = (await this.store.db.knex(table.table).select('*')) as Row[];
      out.set(table.table, new Map(rows.map((r) => [keyOf(table, r), JSON.stringify(r)])));
    }
    return out;
  }

  /** What changed since the baseline, per table (tables without changes are left out). */
  async changes(): Promise<{ tables: StateFlush['tables']; current: Snapshot }> {
    const current = await this.snapshot();
    const tables: StateFlush['tables'] = {};
    for (const table of NATIVE_STATE_TABLES) {
      const before = this.baseline.get(table.table) ?? new Map<string, string>();
      const insert: Row[] = [];
      const upsert: Row[] = [];
      for (const [key, json] of current.get(table.table) ?? []) {
        const previous = before.get(key);
        if (previous === json) continue;
        const row = JSON.parse(json) as Row;
        if (previous === undefined) {
          if (table.generated) for (const k of table.key) delete row[k];
          insert.push(row);
        } else {
          upsert.push(row);
        }
      }
      if (insert.length > 0 || upsert.length > 0) tables[table.table] = { insert, upsert };
    }
    return { tables, current };
  }

  /**
   * Tables outside the contract that hold rows after the review (the store wrote them, no flush carries
   * them): logged by the container so that a gap in NATIVE_STATE_TABLES shows.
   */
  async outsideContract(): Promise<string[]> {
    const knex = this.store.db.knex;
    const known = new Set(NATIVE_STATE_TABLES.map((t) => t.table));
    const tables = (await knex('sqlite_master').where({ type: 'table' }).pluck('name')) as string[];
    const out: string[] = [];
    for (const name of tables) {
      if (known.has(name) || name.startsWith('knex_') || name.startsWith('sqlite_')) continue;
      const row = (await knex(name).count({ n: '*' }).first()) as { n: number } | undefined;
      if (Number(row?.n ?? 0) > 0) out.push(name);
    }
    return out;
  }

  /** The flush of `current` succeeded: later changes are counted from it. */
  flushed(current: Snapshot): void {
    this.baseline = current;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
