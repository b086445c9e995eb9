import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import type { JobStore, EnqueueInput } from './jobs.js';

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
  raw: string;
  bytes: number;
  repo: string | null;
  prNumber: number | null;
  installationId: number | null;
  /** Set when the delivery asks for work; null records it as ignored with `outcome`. */
  job: (Omit<EnqueueInput, 'payload'> & { payload?: unknown }) | null;
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

/** Every column but the payload: listings and lookups never read whole payloads. */
const DELIVERY_COLUMNS = [
  'id',
  'event',
  'action',
  'status',
  'outcome',
  'repo',
  'pr_number',
  'installation_id',
  'payload_bytes',
  'attempts',
  'error',
  'received_at',
  'processed_at',
];

export const markerKey = (deliveryId: string): string => `delivery:${deliveryId}`;

const CHUNK = 100;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export class DeliveryStore {
  constructor(
    private readonly knex: Knex,
    private readonly jobs: JobStore,
    private readonly clock: Clock,
    private readonly dedupeTtlMs: number,
  ) {}

  /**
   * Group commit: records a batch of deliveries in ONE transaction — delivery markers (dedupe),
   * delivery rows with their payloads, and their jobs. Either all of a delivery's rows are written or
   * none. When the batch fails, each delivery is retried alone so one bad delivery cannot fail the
   * others; a delivery that still fails gets its marker removed so GitHub's redelivery is accepted.
   */
  async recordBatch(items: IncomingDelivery[]): Promise<RecordResult[]> {
    try {
      return await this.knex.transaction((trx) => this.writeBatch(trx, items));
    } catch {
      const results: RecordResult[] = [];
      for (const item of items) {
        try {
          const [result] = await this.knex.transaction((trx) => this.writeBatch(trx, [item]));
          results.push(result!);
        } catch (error) {
          await this.knex('dedupe_markers')
            .where({ key: markerKey(item.id) })
            .del()
            .catch(() => undefined);
          results.push({
            status: 'failed',
            code: item.job ? 'enqueue_failed' : 'delivery_record_failed',
            error: (error as Error).message,
          });
        }
      }
      return results;
    }
  }

  private async writeBatch(trx: Knex.Transaction, items: IncomingDelivery[]): Promise<RecordResult[]> {
    const now = this.clock.now();
    const expiresAt = now + this.dedupeTtlMs;
    const results: RecordResult[] = new Array(items.length);
    // A second copy of a delivery inside the same batch is a duplicate of the first.
    const firstIndex = new Map<string, number>();
    items.forEach((item, i) => {
      if (!firstIndex.has(item.id)) firstIndex.set(item.id, i);
    });
    const unique = [...firstIndex.keys()];
    // One statement claims the markers: a new key is inserted, an expired one is renewed, a live one is
    // left alone and not returned, which makes its delivery a duplicate.
    const fresh = new Set<string>();
    for (const part of chunks(unique)) {
      const placeholders = part.map(() => '(?, ?)').join(', ');
      const bindings = part.flatMap((id) => [markerKey(id), expiresAt]);
      const result = await trx.raw(
        `INSERT INTO dedupe_markers (key, expires_at) VALUES ${placeholders}
         ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe_markers.expires_at <= ?
         RETURNING key`,
        [...bindings, now],
      );
      const rows: Array<{ key: string }> = Array.isArray(result) ? result : result.rows;
      for (const row of rows) fresh.add(String(row.key).slice('delivery:'.length));
    }
    const accepted: IncomingDelivery[] = [];
    items.forEach((item, i) => {
      if (firstIndex.get(item.id) === i && fresh.has(item.id)) {
        accepted.push(item);
        results[i] = { status: 'recorded', outcome: item.outcome, enqueued: item.job !== null };
      } else {
        results[i] = { status: 'duplicate' };
      }
    });
    if (accepted.length === 0) return results;
    for (const part of chunks(accepted)) {
      await trx('deliveries')
        .insert(
          part.map((item) => ({
            id: item.id,
            event: item.event,
            action: item.action,
            status: item.job ? 'queued' : 'ignored',
            outcome: item.outcome,
            repo: item.repo,
            pr_number: item.prNumber,
            installation_id: item.installationId,
            payload: item.raw,
            payload_bytes: item.bytes,
            attempts: 1,
            error: null,
            received_at: now,
            processed_at: item.job ? null : now,
          })),
        )
        .onConflict('id')
        .merge({
          status: trx.raw('excluded.status'),
          outcome: trx.raw('excluded.outcome'),
          payload: trx.raw('excluded.payload'),
          payload_bytes: trx.raw('excluded.payload_bytes'),
          attempts: trx.raw('deliveries.attempts + 1'),
          error: null,
          received_at: trx.raw('excluded.received_at'),
          processed_at: trx.raw('excluded.processed_at'),
        });
    }
    const jobs = accepted.flatMap((item) =>
      item.job ? [{ ...item.job, payload: item.job.payload ?? { deliveryId: item.id } }] : [],
    );
    await this.jobs.enqueueMany(jobs, trx);
    return results;
  }

  async get(id: string): Promise<Delivery | null> {
    const row = await this.knex('deliveries')
      .where({ id })
      .first(...DELIVERY_COLUMNS);
    return row ? mapDelivery(row) : null;
  }

  async payload(id: string): Promise<string | null> {
    const row = await this.knex('deliveries').where({ id }).first('payload');
    return row ? String(row.payload) : null;
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
  }

  async setOutcome(id: string, outcome: string): Promise<void> {
    await this.knex('deliveries').where({ id }).update({ outcome });
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
    return this.knex('deliveries')
      .whereIn('id', ids)
      .whereIn('status', ['processed', 'ignored', 'failed'])
      .del();
  }
}
