import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { parseJson } from './db.js';

export type AuditEvent = {
  id: number;
  actor: string;
  action: string;
  target: string | null;
  reason: string | null;
  detail: unknown;
  createdAt: number;
};

export type NewAuditEvent = Pick<AuditEvent, 'actor' | 'action'> &
  Partial<Pick<AuditEvent, 'target' | 'reason' | 'detail'>>;

function mapAudit(r: Record<string, unknown>): AuditEvent {
  return {
    id: Number(r.id),
    actor: String(r.actor),
    action: String(r.action),
    target: (r.target as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    detail: parseJson(r.detail, null),
    createdAt: Number(r.created_at),
  };
}

/** One audit entry without a reason, in the caller's transaction (`GET /settings/audit` lists it). */
export async function writeAudit(
  trx: Knex.Transaction,
  clock: Clock,
  actor: string,
  action: string,
  target: string,
  detail: unknown,
): Promise<void> {
  await trx('audit_events').insert({
    actor,
    action,
    target,
    reason: null,
    detail: JSON.stringify(detail),
    created_at: clock.now(),
  });
}

/** The operator audit log: who changed what, when and why. */
export class AuditStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  async record(event: NewAuditEvent, trx: Knex | Knex.Transaction = this.knex): Promise<AuditEvent> {
    const row = {
      actor: event.actor,
      action: event.action,
      target: event.target ?? null,
      reason: event.reason ?? null,
      detail: event.detail === undefined ? null : JSON.stringify(event.detail),
      created_at: this.clock.now(),
    };
    const [inserted] = await trx('audit_events').insert(row).returning('id');
    const id =
      typeof inserted === 'object' && inserted !== null ? (inserted as { id: unknown }).id : inserted;
    return {
      id: Number(id),
      actor: row.actor,
      action: row.action,
      target: row.target,
      reason: row.reason,
      detail: event.detail ?? null,
      createdAt: row.created_at,
    };
  }

  async list(filter: { action?: string; limit?: number } = {}): Promise<AuditEvent[]> {
    let q = this.knex('audit_events')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 50);
    if (filter.action) q = q.where('action', filter.action);
    const rows: Array<Record<string, unknown>> = await q;
    return rows.map(mapAudit);
  }

  /** Newest first; `q` matches actor, action, target or reason (case-insensitive). */
  async search(filter: { q?: string; limit: number; offset: number }): Promise<AuditEvent[]> {
    let query = this.knex('audit_events').orderBy('id', 'desc').limit(filter.limit).offset(filter.offset);
    if (filter.q) {
      const like = `%${filter.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query = query.where((w) =>
        w
          .whereRaw(`LOWER(actor) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(action) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(COALESCE(target, '')) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(COALESCE(reason, '')) LIKE ? ESCAPE '\\'`, [like]),
      );
    }
    const rows: Array<Record<string, unknown>> = await query;
    return rows.map(mapAudit);
  }
}
