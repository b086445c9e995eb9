import type { Knex } from 'knex';
import type { Clock, IdGenerator } from '../clock.js';
import { toBool, writeTransaction } from './db.js';

export type AlertSeverity = 'info' | 'warning' | 'critical';

/** An SCM alert as the operator API shows it (NAMES.md "Never missing a pull request"). */
export type Alert = {
  id: string;
  kind: string;
  repo: string | null;
  severity: AlertSeverity;
  message: string;
  firstSeenAt: string;
  lastSeenAt: string;
  count: number;
  revision: number;
  dismissedAt: string | null;
};

/** A condition to raise: `key` distinguishes conditions of one kind and repository (default none). */
export type AlertInput = Pick<Alert, 'kind' | 'repo' | 'severity' | 'message'> & { key?: string };

export type RaisedAlert = {
  alert: Alert;
  /** True when this occurrence opened a new alert (none of its key was open). */
  created: boolean;
  /** True when the alert should be delivered now: it is new, or its last delivery did not succeed. */
  deliver: boolean;
};

export type DismissResult =
  | { status: 'dismissed'; alert: Alert }
  | { status: 'not_found' }
  | { status: 'revision_conflict'; currentRevision: number };

type Raw = Record<string, unknown>;

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();

function mapAlert(r: Raw): Alert {
  return {
    id: String(r.id),
    kind: String(r.kind),
    repo: (r.repo as string | null) ?? null,
    severity: String(r.severity) as AlertSeverity,
    message: String(r.message),
    firstSeenAt: iso(r.first_seen_at),
    lastSeenAt: iso(r.last_seen_at),
    count: Number(r.count),
    revision: Number(r.revision),
    dismissedAt: r.dismissed_at === null || r.dismissed_at === undefined ? null : iso(r.dismissed_at),
  };
}

/** The dedupe key of a condition: kind, repository and its own key. */
export function alertKey(input: Pick<AlertInput, 'kind' | 'repo' | 'key'>): string {
  return `${input.kind}|${(input.repo ?? '').toLowerCase()}|${input.key ?? ''}`;
}

/**
 * Alerts: a condition raised again while its alert is open (not dismissed) updates that alert's
 * `lastSeenAt`, `count`, message and severity (revision + 1) instead of adding one; a dismissed alert
 * stays as it was and the next occurrence opens a new one.
 */
export class AlertStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async raise(input: AlertInput): Promise<RaisedAlert> {
    const key = alertKey(input);
    const now = this.clock.now();
    return writeTransaction(this.knex, async (trx) => {
      const open: Raw | undefined = await trx('alerts')
        .where({ dedupe_key: key })
        .whereNull('dismissed_at')
        .orderBy('first_seen_at', 'desc')
        .first();
      if (open) {
        await trx('alerts')
          .where({ id: open.id })
          .update({
            last_seen_at: now,
            count: trx.raw('count + 1'),
            revision: trx.raw('revision + 1'),
            message: input.message,
            severity: input.severity,
          });
        const row: Raw = await trx('alerts').where({ id: open.id }).first();
        return { alert: mapAlert(row), created: false, deliver: toBool(row.delivery_pending) };
      }
      const row = {
        id: this.ids('alert'),
        kind: input.kind,
        repo: input.repo,
        severity: input.severity,
        message: input.message,
        dedupe_key: key,
        first_seen_at: now,
        last_seen_at: now,
        count: 1,
        revision: 1,
        dismissed_at: null,
        delivery_pending: true,
      };
      await trx('alerts').insert(row);
      return { alert: mapAlert(row), created: true, deliver: true };
    });
  }

  /** Records how the alert's delivery went: a failure keeps it pending for the next occurrence. */
  async markDelivery(id: string, error: string | null): Promise<void> {
    await this.knex('alerts')
      .where({ id })
      .update({ delivery_pending: error !== null, delivery_error: error });
  }

  async get(id: string): Promise<Alert | null> {
    const row: Raw | undefined = await this.knex('alerts').where({ id }).first();
    return row ? mapAlert(row) : null;
  }

  /** Open alerts first (newest occurrence first), then the most recently dismissed; at most `limit`. */
  async list(opts: { includeDismissed?: boolean; limit?: number } = {}): Promise<Alert[]> {
    const q = this.knex('alerts');
    if (!opts.includeDismissed) q.whereNull('dismissed_at');
    const rows: Raw[] = await q
      .orderByRaw('CASE WHEN dismissed_at IS NULL THEN 0 ELSE 1 END')
      .orderBy([
        { column: 'last_seen_at', order: 'desc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(opts.limit ?? 200);
    return rows.map(mapAlert);
  }

  /** How many alerts are open, by severity. */
  async openCounts(): Promise<Record<AlertSeverity, number>> {
    const rows: Raw[] = await this.knex('alerts')
      .whereNull('dismissed_at')
      .select('severity')
      .count({ n: '*' })
      .groupBy('severity');
    const counts: Record<AlertSeverity, number> = { info: 0, warning: 0, critical: 0 };
    for (const r of rows) counts[String(r.severity) as AlertSeverity] = Number(r.n);
    return counts;
  }

  /**
   * Dismisses an open alert at `revision` (revision + 1, `dismissedAt` set). A dismissed alert answers
   * as it is when dismissed again at its current revision.
   */
  async dismiss(id: string, revision: number, actor: string): Promise<DismissResult> {
    const now = this.clock.now();
    return writeTransaction(this.knex, async (trx) => {
      const row: Raw | undefined = await trx('alerts').where({ id }).first();
      if (!row) return { status: 'not_found' };
      if (Number(row.revision) !== revision) {
        return { status: 'revision_conflict', currentRevision: Number(row.revision) };
      }
      if (row.dismissed_at !== null && row.dismissed_at !== undefined) {
        return { status: 'dismissed', alert: mapAlert(row) };
      }
      const changed = await trx('alerts')
        .where({ id, revision })
        .update({ dismissed_at: now, dismissed_by: actor, revision: revision + 1 });
      if (changed !== 1) {
        const current: Raw = await trx('alerts').where({ id }).first();
        return { status: 'revision_conflict', currentRevision: Number(current.revision) };
      }
      return { status: 'dismissed', alert: mapAlert(await trx('alerts').where({ id }).first()) };
    });
  }
}
