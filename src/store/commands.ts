import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { numberOrNull, parseJson, type ShownWrites } from './db.js';

export const COMMAND_KINDS = ['requeue', 'retry-publish', 'replay-webhook', 'sync-repositories'] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];
export const COMMAND_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

export type Command = {
  id: string;
  kind: CommandKind;
  status: CommandStatus;
  payload: Record<string, unknown>;
  repo: string | null;
  prNumber: number | null;
  reviewKey: string | null;
  deliveryId: string | null;
  reason: string | null;
  actor: string;
  requestedActorId: string | null;
  error: string | null;
  result: unknown;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  completedAt: number | null;
  /** The bridge that claimed it (null until claimed). */
  claimedBy: string | null;
};

export type CommandEvent = {
  id: number;
  commandId: string;
  /** `skipped`: a bridge lost the claim to another bridge and did not execute the command. */
  type: 'created' | 'status' | 'skipped';
  fromStatus: CommandStatus | null;
  toStatus: CommandStatus | null;
  actor: string;
  createdAt: number;
};

export type NewCommand = Pick<Command, 'id' | 'kind' | 'payload' | 'actor'> &
  Partial<Pick<Command, 'repo' | 'prNumber' | 'reviewKey' | 'deliveryId' | 'reason' | 'requestedActorId'>>;

export type CommandPatch = {
  status: CommandStatus;
  startedAt?: number;
  completedAt?: number;
  error?: string | null;
  result?: unknown;
};

export type PatchResult =
  | { ok: true; command: Command }
  | { ok: false; code: 'not_found' }
  | { ok: false; code: 'invalid_transition'; command: Command }
  | { ok: false; code: 'bridge_owned'; command: Command };

/**
 * The transition table of operator-api 3 ("Command status"): queued → running, running → succeeded or
 * failed, and the same status again; any other pair is refused.
 */
export function transitionAllowed(from: CommandStatus, to: CommandStatus): boolean {
  if (from === to) return true;
  return (
    (from === 'queued' && to === 'running') || (from === 'running' && (to === 'succeeded' || to === 'failed'))
  );
}

type Raw = Record<string, unknown>;

function mapCommand(row: Raw): Command {
  return {
    id: String(row.id),
    kind: row.kind as CommandKind,
    status: row.status as CommandStatus,
    payload: parseJson<Record<string, unknown>>(row.payload, {}),
    repo: (row.repo as string | null) ?? null,
    prNumber: numberOrNull(row.pr_number),
    reviewKey: (row.review_key as string | null) ?? null,
    deliveryId: (row.delivery_id as string | null) ?? null,
    reason: (row.reason as string | null) ?? null,
    actor: String(row.actor),
    requestedActorId: (row.requested_actor_id as string | null) ?? null,
    error: (row.error as string | null) ?? null,
    result: parseJson(row.result, null),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    startedAt: numberOrNull(row.started_at),
    completedAt: numberOrNull(row.completed_at),
    claimedBy: (row.claimed_by as string | null) ?? null,
  };
}

/** Writes a command's event. */
function addEvent(
  trx: Knex.Transaction,
  commandId: string,
  type: CommandEvent['type'],
  [from, to]: [CommandStatus | null, CommandStatus | null],
  actor: string,
  now: number,
): Promise<unknown> {
  return trx('operator_command_events').insert({
    command_id: commandId,
    type,
    from_status: from,
    to_status: to,
    actor,
    created_at: now,
  });
}

/** Operator commands and their events. */
export class CommandStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly shown: ShownWrites,
  ) {}

  /**
   * Creates the command unless its id exists (idempotent by id: the existing one is returned as it is,
   * its payload not compared). The row and its `created` event are written in one transaction; concurrent
   * creations with one id leave exactly one command.
   */
  async create(input: NewCommand): Promise<{ created: boolean; command: Command }> {
    const now = this.clock.now();
    const created = await this.shown.transaction(this.knex, async (trx) => {
      const inserted = await trx('operator_commands')
        .insert({
          id: input.id,
          kind: input.kind,
          status: 'queued',
          payload: JSON.stringify(input.payload),
          repo: input.repo ?? null,
          pr_number: input.prNumber ?? null,
          review_key: input.reviewKey ?? null,
          delivery_id: input.deliveryId ?? null,
          reason: input.reason ?? null,
          actor: input.actor,
          requested_actor_id: input.requestedActorId ?? null,
          created_at: now,
          updated_at: now,
        })
        .onConflict('id')
        .ignore()
        .returning('id');
      if (inserted.length === 0) return false;
      await addEvent(trx, input.id, 'created', [null, 'queued'], input.actor, now);
      return true;
    });
    const command = await this.get(input.id);
    if (!command) throw new Error(`command ${input.id} vanished after creation`);
    return { created, command };
  }

  async get(id: string): Promise<Command | null> {
    const row = await this.knex('operator_commands').where({ id }).first();
    return row ? mapCommand(row) : null;
  }

  async list(filter: { status?: CommandStatus; limit?: number } = {}): Promise<Command[]> {
    let q = this.knex('operator_commands')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 50);
    if (filter.status) q = q.where('status', filter.status);
    return (await q).map(mapCommand);
  }

  async events(commandId: string): Promise<CommandEvent[]> {
    const rows: Raw[] = await this.knex('operator_command_events')
      .where({ command_id: commandId })
      .orderBy('id');
    return rows.map((r) => ({
      id: Number(r.id),
      commandId: String(r.command_id),
      type: r.type as CommandEvent['type'],
      fromStatus: (r.from_status as CommandStatus | null) ?? null,
      toStatus: (r.to_status as CommandStatus | null) ?? null,
      actor: String(r.actor),
      createdAt: Number(r.created_at),
    }));
  }

  /**
   * The generic PATCH: applies the transition table with a conditional update (the row must still have
   * the status the decision was made on), so two racing updates cannot both move a command.
   * `sync-repositories` commands belong to the bridge and are refused here.
   */
  async patch(id: string, patch: CommandPatch, actor: string): Promise<PatchResult> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.get(id);
      if (!current) return { ok: false, code: 'not_found' };
      if (current.kind === 'sync-repositories') return { ok: false, code: 'bridge_owned', command: current };
      if (!transitionAllowed(current.status, patch.status)) {
        return { ok: false, code: 'invalid_transition', command: current };
      }
      const now = this.clock.now();
      const values: Raw = { status: patch.status, updated_at: now };
      if (patch.startedAt !== undefined) values.started_at = patch.startedAt;
      else if (patch.status === 'running' && current.startedAt === null) values.started_at = now;
      if (patch.completedAt !== undefined) values.completed_at = patch.completedAt;
      else if ((patch.status === 'succeeded' || patch.status === 'failed') && current.completedAt === null) {
        values.completed_at = now;
      }
      if (patch.error !== undefined) values.error = patch.error;
      if (patch.result !== undefined) values.result = JSON.stringify(patch.result);
      const moved = await this.shown.transaction(this.knex, async (trx) => {
        const n = await trx('operator_commands').where({ id, status: current.status }).update(values);
        if (n !== 1) return false;
        if (current.status !== patch.status) {
          await addEvent(trx, id, 'status', [current.status, patch.status], actor, now);
        }
        return true;
      });
      if (moved) return { ok: true, command: (await this.get(id))! };
      // Someone else moved it between our read and our write: decide again on the new status.
    }
    const latest = await this.get(id);
    return latest
      ? { ok: false, code: 'invalid_transition', command: latest }
      : { ok: false, code: 'not_found' };
  }

  /** Queued commands, oldest first: what a bridge works through. */
  async queued(limit: number): Promise<Command[]> {
    const rows: Raw[] = await this.knex('operator_commands')
      .where({ status: 'queued' })
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit);
    return rows.map(mapCommand);
  }

  /**
   * The bridge's claim (review-engine 3.5): `queued` → `running` with a conditional update, so of two
   * bridges claiming one command exactly one wins. The loser records a `skipped` event and gets null.
   */
  async claim(id: string, bridge: string): Promise<Command | null> {
    const now = this.clock.now();
    const won = await this.shown.transaction(this.knex, async (trx) => {
      const n = await trx('operator_commands')
        .where({ id, status: 'queued' })
        .update({ status: 'running', started_at: now, updated_at: now, claimed_by: bridge });
      const claimed = n === 1;
      await addEvent(
        trx,
        id,
        claimed ? 'status' : 'skipped',
        ['queued', claimed ? 'running' : null],
        bridge,
        now,
      );
      return claimed;
    });
    return won ? this.get(id) : null;
  }

  /**
   * The bridge finishes a command it claimed: `running` → `succeeded` with a result or `failed` with an
   * error, conditional on it still being this bridge's running command. False when it was not.
   */
  async finish(
    id: string,
    bridge: string,
    outcome: { status: 'succeeded'; result: unknown } | { status: 'failed'; error: string; result?: unknown },
  ): Promise<boolean> {
    const now = this.clock.now();
    return this.shown.transaction(this.knex, async (trx) => {
      const n = await trx('operator_commands')
        .where({ id, status: 'running', claimed_by: bridge })
        .update({
          status: outcome.status,
          completed_at: now,
          updated_at: now,
          error: outcome.status === 'failed' ? outcome.error.slice(0, 4000) : null,
          result: outcome.result === undefined ? null : JSON.stringify(outcome.result),
        });
      if (n !== 1) return false;
      await addEvent(trx, id, 'status', ['running', outcome.status], bridge, now);
      return true;
    });
  }

  /** Commands a bridge claimed before `before` and has not finished (a bridge that died mid-command). */
  async runningSince(before: number, limit = 20): Promise<Command[]> {
    const rows: Raw[] = await this.knex('operator_commands')
      .where({ status: 'running' })
      .andWhere('started_at', '<', before)
      .orderBy('started_at')
      .limit(limit);
    return rows.map(mapCommand);
  }
}
