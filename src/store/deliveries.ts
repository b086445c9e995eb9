import { createRequire } from 'node:module';
import { brotliDecompressSync } from 'node:zlib';
import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { runScript, type Dialect, type ScriptStep, type ShownWrites } from './db.js';
import type { EnqueueInput } from '../queue/types.js';
import { JOB_ROW, newJobRow } from './jobs.js';

const require = createRequire(import.meta.url);
let lz4: typeof import('lz4-napi') | null = null;

/**
 * LZ4 blocks of webhook bodies, as SQLite stores them (migrations 014 and 015): about 8x smaller than the
 * JSON, some 10-20 µs for 20 KB. lz4-napi, a native module, is loaded with the first one.
 */
function lz4Module(): typeof import('lz4-napi') {
  return (lz4 ??= require('lz4-napi') as typeof import('lz4-napi'));
}

export type DeliveryStatus = 'queued' | 'ignored' | 'processed' | 'failed';

export type Delivery = {
  id: string;
  event: string;
  action: string | null;
  status: DeliveryStatus;
  outcome: string | null;
  repo: string | null;
  prNumber: number | null;
  installationId: number | null;
  payloadBytes: number;
  attempts: number;
  error: string | null;
  receivedAt: number;
  processedAt: number | null;
};

/** One verified webhook, ready to be recorded (and enqueued when it asks for work). */
export type IncomingDelivery = {
  id: string;
  event: string;
  action: string | null;
  /**
   * The body as received: its bytes (the ingress), or its text. On SQLite the bytes are compressed as
   * they are, without making text of them on the way.
   */
  raw: Buffer | string;
  bytes: number;
  repo: string | null;
  prNumber: number | null;
  installationId: number | null;
  /**
   * Set when the delivery asks for work (a job without a key: each delivery is its own job); null
   * records it as ignored with `outcome`.
   */
  job: (Omit<EnqueueInput, 'payload' | 'key' | 'mode'> & { payload?: unknown }) | null;
  outcome: string;
};

export type RecordResult =
  | { status: 'recorded'; outcome: string; enqueued: boolean }
  | { status: 'duplicate' }
  | { status: 'failed'; code: 'delivery_record_failed' | 'enqueue_failed'; error: string };

type Raw = Record<string, unknown>;

function mapDelivery(row: Raw): Delivery {
  return {
    id: String(row.id),
    event: String(row.event),
    action: (row.action as string | null) ?? null,
    status: row.status as DeliveryStatus,
    outcome: (row.outcome as string | null) ?? null,
    repo: (row.repo as string | null) ?? null,
    prNumber: row.pr_number === null ? null : Number(row.pr_number),
    installationId: row.installation_id === null ? null : Number(row.installation_id),
    payloadBytes: Number(row.payload_bytes),
    attempts: Number(row.attempts),
    error: (row.error as string | null) ?? null,
    receivedAt: Number(row.received_at),
    processedAt: row.processed_at === null ? null : Number(row.processed_at),
  };
}

export const markerKey = (deliveryId: string): string => `delivery:${deliveryId}`;

const CHUNK = 100;

type Column = readonly [name: string, pgType: 'text' | 'integer' | 'bigint'];

/** The columns a new delivery row is written with, and their types (PostgreSQL needs them cast). */
const DELIVERY_ROW: readonly Column[] = [
  ['id', 'text'],
  ['event', 'text'],
  ['action', 'text'],
  ['status', 'text'],
  ['outcome', 'text'],
  ['repo', 'text'],
  ['pr_number', 'integer'],
  ['installation_id', 'bigint'],
  ['payload', 'text'],
  ['payload_bytes', 'integer'],
  ['attempts', 'integer'],
  ['error', 'text'],
  ['received_at', 'bigint'],
  ['processed_at', 'bigint'],
];

/** Every column but the payload: listings and lookups never read whole payloads. */
const DELIVERY_COLUMNS = DELIVERY_ROW.map(([name]) => name).filter((name) => name !== 'payload');

/** A delivery's row values in DELIVERY_ROW's order, then its marker key. */
function deliveryRow(item: IncomingDelivery, now: number, dialect: Dialect): unknown[] {
  const status = item.job ? 'queued' : 'ignored';
  // SQLite stores the LZ4 block of the body's bytes; PostgreSQL stores the text.
  const raw = item.raw;
  const payload =
    dialect === 'pg' ? (typeof raw === 'string' ? raw : raw.toString('utf8')) : lz4Module().compressSync(raw);
  return [
    item.id,
    item.event,
    item.action,
    status,
    item.outcome,
    item.repo,
    item.prNumber,
    item.installationId,
    payload,
    item.bytes,
    1,
    null,
    now,
    item.job ? null : now,
    markerKey(item.id),
  ];
}

/**
 * `INSERT INTO table … SELECT` of the given rows (values in `columns`' order, then a marker key), each
 * written only when no live marker has its key. `into` gives the written columns and their values as SQL
 * over `v` (the rows, by column name) when they are not the columns themselves.
 */
function insertUnmarked(
  dialect: Dialect,
  table: string,
  columns: readonly Column[],
  now: number,
  rows: unknown[][],
  opts: { into?: ReadonlyArray<readonly [column: string, value: string]>; conflict?: string } = {},
): ScriptStep {
  const cast = (type: string) => (dialect === 'pg' ? `?::${type}` : '?');
  const row = `(${[...columns.map(([, type]) => cast(type)), cast('text')].join(', ')})`;
  const into = opts.into ?? columns.map(([name]) => [name, `v.${name}`] as const);
  return {
    sql: `WITH v (${columns.map(([name]) => name).join(', ')}, marker_key) AS (VALUES ${rows.map(() => row).join(', ')})
          INSERT INTO ${table} (${into.map(([name]) => name).join(', ')})
          SELECT ${into.map(([, value]) => value).join(', ')} FROM v
          WHERE NOT EXISTS (SELECT 1 FROM dedupe_markers m WHERE m.key = v.marker_key AND m.expires_at > ${cast('bigint')})
          ${opts.conflict ?? ''}`,
    bindings: [...rows.flat(), now],
  };
}

/**
 * On SQLite the payload is written compressed (migrations 014 and 015): the row's `payload` value is its
 * LZ4 block, written to `payload_z` (`payload_codec` 'lz4'); `payload` is ''. PostgreSQL keeps the text.
 */
const SQLITE_DELIVERY_INTO = [
  ...DELIVERY_ROW.map(([name]) => [name, name === 'payload' ? "''" : `v.${name}`] as const),
  ['payload_z', 'v.payload'] as const,
  ['payload_codec', "'lz4'"] as const,
];

/** SQLite's "database is locked": another connection kept the write lock past the busy timeout. */
function isBusy(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return (
    (typeof e?.code === 'string' && e.code.startsWith('SQLITE_BUSY')) ||
    (typeof e?.message === 'string' && /database is locked/.test(e.message))
  );
}

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs a script's statements in one transaction and returns the rows of each (db.ts `runScript`). */
export type ScriptRunner = (steps: readonly ScriptStep[]) => Promise<unknown[][]>;

/**
 * Records batches of deliveries (DeliveryStore.recordBatch) through a script runner: the store's knex
 * connection, or the intake thread's own SQLite connection (src/ingress/intake-writer.ts).
 */
export class DeliveryRecorder {
  constructor(
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly dedupeTtlMs: number,
    private readonly run: ScriptRunner,
    private readonly wrote: () => void = () => {},
  ) {}
  /**
   * Group commit: records a batch of deliveries in ONE transaction: delivery markers (dedupe), delivery
   * rows with their payloads, and their jobs. Either all of a delivery's rows are written or none, its
   * marker included: a delivery that could not be recorded leaves no marker, so GitHub's redelivery is
   * accepted (nothing is deleted afterwards, which could remove the marker of an earlier copy that was
   * recorded). When the batch fails, each delivery is retried alone so one bad delivery cannot fail the
   * others; when it failed because another process held the database past the busy timeout, every
   * delivery fails at once instead (each retry would wait out the timeout again, while GitHub waits 10 s).
   */
  async recordBatch(items: IncomingDelivery[]): Promise<RecordResult[]> {
    const failed = (item: IncomingDelivery, error: unknown): RecordResult => ({
      status: 'failed',
      code: item.job ? 'enqueue_failed' : 'delivery_record_failed',
      error: (error as Error).message,
    });
    try {
      return await this.writeBatch(items);
    } catch (error) {
      if (isBusy(error)) return items.map((item) => failed(item, error));
      const results: RecordResult[] = [];
      for (const item of items) {
        try {
          const [result] = await this.writeBatch([item]);
          results.push(result!);
        } catch (itemError) {
          results.push(failed(item, itemError));
        }
      }
      return results;
    }
  }

  /**
   * One transaction of a few statements (`runScript`). The delivery rows and the jobs are written only where no
   * live marker exists; the markers are claimed last (a new key inserted, an expired one renewed, a live
   * one left alone) and the claimed keys returned: those deliveries were recorded, the rest are
   * duplicates. Within the transaction the markers do not change until that last statement, so all three
   * see the same ones. On PostgreSQL, where other transactions run meanwhile, the batch first takes a
   * transaction lock per delivery id (in id order), so two batches with one id run one after the other.
   */
  private async writeBatch(items: IncomingDelivery[]): Promise<RecordResult[]> {
    const now = this.clock.now();
    const expiresAt = now + this.dedupeTtlMs;
    // A second copy of a delivery inside the same batch is a duplicate of the first.
    const firstIndex = new Map<string, number>();
    items.forEach((item, i) => {
      if (!firstIndex.has(item.id)) firstIndex.set(item.id, i);
    });
    const unique = [...firstIndex.values()].map((i) => items[i]!);
    const pg = this.dialect === 'pg';
    const steps: ScriptStep[] = [];
    if (pg) {
      steps.push({
        sql: `SELECT pg_advisory_xact_lock(hashtextextended(k, 0))
              FROM (SELECT k FROM unnest(?::text[]) AS k ORDER BY k) AS ids`,
        bindings: [unique.map((item) => markerKey(item.id))],
      });
    }
    for (const part of chunks(unique)) {
      steps.push(
        insertUnmarked(
          this.dialect,
          'deliveries',
          DELIVERY_ROW,
          now,
          part.map((item) => deliveryRow(item, now, this.dialect)),
          {
            into: pg ? undefined : SQLITE_DELIVERY_INTO,
            conflict: `ON CONFLICT (id) DO UPDATE SET status = excluded.status, outcome = excluded.outcome,
            payload = excluded.payload, payload_z = excluded.payload_z, payload_codec = excluded.payload_codec,
            payload_bytes = excluded.payload_bytes,
            attempts = deliveries.attempts + 1, error = NULL, received_at = excluded.received_at,
            processed_at = excluded.processed_at`,
          },
        ),
      );
    }
    const withJobs = unique.filter((item) => item.job !== null);
    for (const part of chunks(withJobs)) {
      const rows = part.map((item) => {
        const row = newJobRow({ ...item.job!, payload: item.job!.payload ?? { deliveryId: item.id } }, now);
        return [...JOB_ROW.map(([column]) => row[column]), markerKey(item.id)];
      });
      steps.push(insertUnmarked(this.dialect, 'jobs', JOB_ROW, now, rows));
    }
    const claims = chunks(unique).map((part): ScriptStep => ({
      sql: `INSERT INTO dedupe_markers (key, expires_at) VALUES ${part.map(() => (pg ? '(?, ?::bigint)' : '(?, ?)')).join(', ')}
              ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe_markers.expires_at <= ?
              RETURNING key`,
      bindings: [...part.flatMap((item) => [markerKey(item.id), expiresAt]), now],
    }));
    const results = await this.run([...steps, ...claims]);
    this.wrote();
    const fresh = new Set<string>();
    for (const rows of results.slice(steps.length)) {
      for (const row of rows as Array<{ key: string }>) fresh.add(String(row.key).slice('delivery:'.length));
    }
    return items.map((item, i): RecordResult =>
      firstIndex.get(item.id) === i && fresh.has(item.id)
        ? { status: 'recorded', outcome: item.outcome, enqueued: item.job !== null }
        : { status: 'duplicate' },
    );
  }
}

export class DeliveryStore {
  private readonly recorder: DeliveryRecorder;

  constructor(
    private readonly knex: Knex,
    dialect: Dialect,
    private readonly clock: Clock,
    dedupeTtlMs: number,
    private readonly shown: ShownWrites,
  ) {
    this.recorder = new DeliveryRecorder(
      dialect,
      clock,
      dedupeTtlMs,
      (steps) => runScript(knex, steps),
      () => shown.wrote(),
    );
  }

  /** Records a batch of deliveries in one transaction (DeliveryRecorder.recordBatch). */
  recordBatch(items: IncomingDelivery[]): Promise<RecordResult[]> {
    return this.recorder.recordBatch(items);
  }

  async get(id: string): Promise<Delivery | null> {
    const row = await this.knex('deliveries')
      .where({ id })
      .first(...DELIVERY_COLUMNS);
    return row ? mapDelivery(row) : null;
  }

  async payload(id: string): Promise<string | null> {
    const row = await this.knex('deliveries').where({ id }).first('payload', 'payload_z', 'payload_codec');
    if (!row) return null;
    if (!row.payload_z) return String(row.payload);
    // LZ4 since migration 015; Brotli (no codec) for the rows of migration 014.
    const bytes =
      row.payload_codec === 'lz4'
        ? lz4Module().uncompressSync(row.payload_z)
        : brotliDecompressSync(row.payload_z);
    return bytes.toString('utf8');
  }

  /** Ends a delivery; `outcome` undefined keeps the outcome its handler recorded. */
  async finish(
    id: string,
    status: 'processed' | 'failed',
    outcome: string | null | undefined,
    error?: string,
  ): Promise<void> {
    const values: Record<string, unknown> = { status, error: error ?? null, processed_at: this.clock.now() };
    if (outcome !== undefined) values.outcome = outcome;
    await this.knex('deliveries').where({ id }).update(values);
    this.shown.wrote();
  }

  async setOutcome(id: string, outcome: string): Promise<void> {
    await this.knex('deliveries').where({ id }).update({ outcome });
    this.shown.wrote();
  }

  async list(filter: { status?: string; limit?: number } = {}): Promise<Delivery[]> {
    let q = this.knex('deliveries')
      .select(DELIVERY_COLUMNS)
      .orderBy('received_at', 'desc')
      .limit(filter.limit ?? 50);
    if (filter.status) q = q.where('status', filter.status);
    return (await q).map(mapDelivery);
  }

  async markerExists(id: string): Promise<boolean> {
    const row = await this.knex('dedupe_markers')
      .where({ key: markerKey(id) })
      .andWhere('expires_at', '>', this.clock.now())
      .first('key');
    return row !== undefined;
  }

  /** Deletes expired delivery markers; returns how many. */
  async expireMarkers(): Promise<number> {
    return this.knex('dedupe_markers').where('expires_at', '<=', this.clock.now()).del();
  }

  /**
   * Retention: deletes finished deliveries (processed, ignored, failed) received before `before`, at most
   * `batch` of them, oldest first; returns how many. Queued deliveries are never deleted.
   */
  async pruneFinished(before: number, batch = 1000): Promise<number> {
    const ids = (
      await this.knex('deliveries')
        .whereIn('status', ['processed', 'ignored', 'failed'])
        .andWhere('received_at', '<', before)
        .orderBy('received_at')
        .limit(batch)
        .select('id')
    ).map((r: Raw) => String(r.id));
    if (ids.length === 0) return 0;
    const deleted = await this.knex('deliveries')
      .whereIn('id', ids)
      .whereIn('status', ['processed', 'ignored', 'failed'])
      .del();
    this.shown.wrote();
    return deleted;
  }
}
