import type { Knex } from 'knex';
import type { Clock, IdGenerator } from '../clock.js';
import type {
  ClaimedJob,
  DeadReason,
  EnqueueInput,
  EnqueueResult,
  FailResult,
  Job,
  JobStatus,
  QueueBackend,
} from '../queue/types.js';
import { isUniqueViolation, parseJson, writeTransaction } from './db.js';
import type { Dialect } from './db.js';

/** Why a repair was refused: nothing to act on, or the action would break an invariant. */
export type RepairRefusal =
  | { ok: false; code: 'not_found'; message: string }
  | { ok: false; code: 'waiting_job_exists'; message: string; jobId: number }
  | { ok: false; code: 'lease_active'; message: string; jobId: number; leaseExpiresAt: number };

export type RepairResult = { ok: true; job: Job } | RepairRefusal;

/** The repair refusals, worded the same on every backend. */
export const refusal = {
  notFound: (what: string): RepairRefusal => ({ ok: false, code: 'not_found', message: `No ${what}` }),
  waitingExists: (jobKey: string, jobId: number): RepairRefusal => ({
    ok: false,
    code: 'waiting_job_exists',
    message: `Job key ${jobKey} already has a waiting job`,
    jobId,
  }),
  leaseActive: (jobId: number, owner: string | null, expires: number): RepairRefusal => ({
    ok: false,
    code: 'lease_active',
    message: `The lease of job ${jobId} is held by ${owner} until ${new Date(expires).toISOString()}; use force to release it`,
    jobId,
    leaseExpiresAt: expires,
  }),
};

export const DEFAULT_MAX_ATTEMPTS = 8;

/** Retry back-off: 5 s, 10 s, 20 s … capped at 10 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(600_000, 5_000 * 2 ** Math.max(0, attempts - 1));
}

type Raw = Record<string, unknown>;

/** The columns a new job row is written with, and their types (PostgreSQL needs them cast). */
export const JOB_ROW = [
  ['queue', 'text'],
  ['kind', 'text'],
  ['job_key', 'text'],
  ['payload', 'text'],
  ['status', 'text'],
  ['priority', 'integer'],
  ['attempts', 'integer'],
  ['max_attempts', 'integer'],
  ['run_at', 'bigint'],
  ['created_at', 'bigint'],
  ['updated_at', 'bigint'],
] as const;

export function newJobRow(input: EnqueueInput, now: number): Raw {
  return {
    queue: input.queue,
    kind: input.kind,
    job_key: input.key ?? null,
    payload: JSON.stringify(input.payload ?? null),
    status: 'waiting',
    priority: input.priority ?? 0,
    attempts: 0,
    max_attempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    run_at: input.runAt ?? now,
    created_at: now,
    updated_at: now,
  };
}

/** Takes a job's lease away: its holder's receipt is stale from then on. */
function unleased(now: number): Raw {
  return { lease_owner: null, lease_expires_at: null, receipt: null, updated_at: now };
}

function mapJob(row: Raw): Job {
  return {
    id: Number(row.id),
    queue: String(row.queue),
    kind: String(row.kind),
    key: (row.job_key as string | null) ?? null,
    payload: parseJson(row.payload, null),
    status: row.status as JobStatus,
    priority: Number(row.priority),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    runAt: Number(row.run_at),
    leaseOwner: (row.lease_owner as string | null) ?? null,
    leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    receipt: (row.receipt as string | null) ?? null,
    lastError: (row.last_error as string | null) ?? null,
    deadReason: (row.dead_reason as string | null) ?? null,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * The job table. Every claim hands out a fresh receipt (fencing token); renew, ack, fail and release
 * with a receipt that is no longer current are refused, so a worker that lost its lease can neither
 * complete a job nor publish for it.
 */
export class JobStore implements QueueBackend {
  constructor(
    private readonly knex: Knex,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** The job table is a queue backend of its own dialect. */
  get kind(): Dialect {
    return this.dialect;
  }

  /** The job while `receipt` is its current lease. */
  private held(jobId: number, receipt: string): Knex.QueryBuilder {
    return this.knex('jobs').where({ id: jobId, receipt, status: 'running' });
  }

  async enqueue(input: EnqueueInput, trx: Knex | Knex.Transaction = this.knex): Promise<EnqueueResult> {
    const now = this.clock.now();
    const key = input.key ?? null;
    const payload = JSON.stringify(input.payload ?? null);
    for (let attempt = 0; ; attempt++) {
      if (key !== null) {
        const existing = await trx('jobs').where({ job_key: key, status: 'waiting' }).first('id', 'payload');
        if (existing) {
          if (input.mode === 'keep_existing')
            return { outcome: 'already_waiting', jobId: Number(existing.id) };
          const updated = await trx('jobs')
            .where({ id: existing.id, status: 'waiting' })
            .update({ payload, kind: input.kind, updated_at: now, run_at: input.runAt ?? now, attempts: 0 });
          if (updated === 1) {
            return {
              outcome: 'replace_waiting',
              jobId: Number(existing.id),
              replacedPayload: parseJson(existing.payload, null),
            };
          }
        }
      }
      try {
        const rows = await trx('jobs').insert(newJobRow(input, now)).returning('id');
        const first = rows[0] as unknown;
        const id = typeof first === 'object' && first !== null ? (first as { id: unknown }).id : first;
        return { outcome: 'enqueued', jobId: Number(id) };
      } catch (error) {
        // Another writer took the waiting slot for this key between our read and insert: go again.
        if (key !== null && isUniqueViolation(error) && attempt < 3) continue;
        throw error;
      }
    }
  }

  /**
   * Enqueues several jobs in one go: keyless jobs in one multi-row insert, keyed ones one by one (they
   * need the waiting-slot rule).
   */
  async enqueueMany(inputs: EnqueueInput[], trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    const now = this.clock.now();
    const keyless = inputs.filter((i) => (i.key ?? null) === null);
    for (let i = 0; i < keyless.length; i += 100) {
      await trx('jobs').insert(keyless.slice(i, i + 100).map((input) => newJobRow(input, now)));
    }
    for (const input of inputs) if ((input.key ?? null) !== null) await this.enqueue(input, trx);
  }

  /**
   * Claims the next runnable job of a queue: a waiting job whose time has come, or a running job whose
   * lease expired (its worker died) and that has attempts left. One statement, so it is atomic on SQLite;
   * `FOR UPDATE SKIP LOCKED` on PostgreSQL lets many workers claim at once without waiting on each other.
   */
  async claim(queue: string, owner: string, leaseMs: number): Promise<ClaimedJob | null> {
    return (await this.claimMany(queue, owner, leaseMs, 1))[0] ?? null;
  }

  /**
   * Claims up to `limit` runnable jobs in one statement, each with its own receipt (`<random>.<id>`), in
   * claim order. Two index probes (the partial indexes of migration 005): waiting jobs in claim order,
   * and expired leases with attempts left; the best `limit` of both are taken. On PostgreSQL both use
   * `FOR UPDATE SKIP LOCKED`, so concurrent claimers never wait on, or take, each other's rows.
   */
  async claimMany(queue: string, owner: string, leaseMs: number, limit: number): Promise<ClaimedJob[]> {
    const n = Math.max(1, Math.min(1000, Math.floor(limit)));
    const now = this.clock.now();
    const receiptBase = this.ids('rcpt');
    const expires = now + leaseMs;
    const pg = this.dialect === 'pg';
    const lock = pg ? 'FOR UPDATE SKIP LOCKED' : '';
    const receipt = pg ? `?::text || '.' || jobs.id::text` : `? || '.' || jobs.id`;
    const sql = `
      WITH w AS (
        SELECT id, priority, run_at FROM jobs
        WHERE queue = ? AND status = 'waiting' AND run_at <= ?
        ORDER BY priority DESC, run_at, id LIMIT ${n} ${lock}
      ), e AS (
        SELECT id, priority, run_at FROM jobs
        WHERE queue = ? AND status = 'running' AND lease_expires_at <= ? AND attempts < max_attempts
        ORDER BY lease_expires_at LIMIT ${n} ${lock}
      ), pick AS (
        SELECT id FROM (SELECT id, priority, run_at FROM w UNION ALL SELECT id, priority, run_at FROM e) c
        ORDER BY priority DESC, run_at, id LIMIT ${n}
      )
      UPDATE jobs SET status = 'running', lease_owner = ?, lease_expires_at = ?, receipt = ${receipt},
        attempts = attempts + 1, updated_at = ?
      WHERE id IN (SELECT id FROM pick)
      RETURNING *`;
    const result = await this.knex.raw(sql, [queue, now, queue, now, owner, expires, receiptBase, now]);
    const rows: Raw[] = pg ? result.rows : result;
    return rows
      .map((row) => mapJob(row) as ClaimedJob)
      .sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || a.id - b.id);
  }

  /**
   * Acknowledges several claimed jobs in one statement; returns the ids that were acknowledged (a job
   * whose receipt is no longer current is left alone and not returned).
   */
  async ackMany(items: Array<{ jobId: number; receipt: string }>): Promise<number[]> {
    if (items.length === 0) return [];
    const now = this.clock.now();
    const acked: number[] = [];
    for (let i = 0; i < items.length; i += 400) {
      const part = items.slice(i, i + 400);
      const values = part.map(() => (this.dialect === 'pg' ? '(?::bigint, ?::text)' : '(?, ?)')).join(', ');
      const result = await this.knex.raw(
        `UPDATE jobs SET status = 'done', lease_expires_at = NULL, last_error = NULL, updated_at = ?
         WHERE status = 'running' AND (id, receipt) IN (VALUES ${values})
         RETURNING id`,
        [now, ...part.flatMap((item) => [item.jobId, item.receipt])],
      );
      const rows: Raw[] = this.dialect === 'pg' ? result.rows : result;
      for (const row of rows) acked.push(Number(row.id));
    }
    return acked;
  }

  /** Extends a lease. False when the receipt is no longer current (the lease was lost). */
  async renew(jobId: number, receipt: string, leaseMs: number): Promise<number | null> {
    const now = this.clock.now();
    const expires = now + leaseMs;
    const n = await this.held(jobId, receipt).update({ lease_expires_at: expires, updated_at: now });
    return n === 1 ? expires : null;
  }

  async ack(jobId: number, receipt: string): Promise<boolean> {
    const done = { status: 'done', lease_expires_at: null, last_error: null, updated_at: this.clock.now() };
    return (await this.held(jobId, receipt).update(done)) === 1;
  }

  /**
   * Records a failed attempt: back to waiting with a back-off, or to the dead letter when attempts are
   * exhausted (`max_attempts`) or when the caller says the job can never succeed (e.g. `unroutable`).
   * Null when the receipt is no longer current.
   */
  async fail(
    jobId: number,
    receipt: string,
    error: string,
    opts: { deadReason?: DeadReason } = {},
  ): Promise<FailResult | null> {
    const now = this.clock.now();
    const job = await this.held(jobId, receipt).first();
    if (!job) return null;
    const attempts = Number(job.attempts);
    const deadReason = opts.deadReason ?? (attempts >= Number(job.max_attempts) ? 'max_attempts' : null);
    const runAt = now + retryDelayMs(attempts);
    const n = await this.held(jobId, receipt).update({
      ...(deadReason
        ? { status: 'dead', dead_reason: deadReason, lease_expires_at: null, updated_at: now }
        : { status: 'waiting', run_at: runAt, ...unleased(now) }),
      last_error: error.slice(0, 4000),
    });
    if (n !== 1) return null;
    return deadReason ? { status: 'dead', reason: deadReason } : { status: 'waiting', runAt };
  }

  /** Gives a claimed job back without counting the attempt (graceful shutdown, `skipped_locked`). */
  async release(jobId: number, receipt: string, opts: { delayMs?: number } = {}): Promise<boolean> {
    const now = this.clock.now();
    const n = await this.held(jobId, receipt).update({
      status: 'waiting',
      attempts: this.knex.raw('CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END'),
      run_at: now + (opts.delayMs ?? 0),
      ...unleased(now),
    });
    return n === 1;
  }

  /** Dead-letters running jobs whose lease expired with no attempts left (their worker kept dying). */
  async reapExpired(): Promise<number> {
    const now = this.clock.now();
    return this.knex('jobs')
      .where('status', 'running')
      .andWhere('lease_expires_at', '<=', now)
      .andWhereRaw('attempts >= max_attempts')
      .update({
        status: 'dead',
        dead_reason: 'max_attempts',
        last_error: 'lease expired on the last attempt',
        lease_expires_at: null,
        updated_at: now,
      });
  }

  /**
   * Queue repair: puts the newest dead job with this key back to waiting, now. `resetAttempts` gives it a
   * full set of attempts again; otherwise it keeps its count (its next failure dead-letters it again).
   * Refused when the key already has a waiting job (the key's single waiting slot is taken).
   */
  async requeueDead(jobKey: string, opts: { resetAttempts: boolean }): Promise<RepairResult> {
    return writeTransaction(this.knex, async (trx) => {
      const dead = await trx('jobs').where({ job_key: jobKey, status: 'dead' }).orderBy('id', 'desc').first();
      if (!dead) return refusal.notFound(`dead job with key ${jobKey}`);
      const waiting = await trx('jobs').where({ job_key: jobKey, status: 'waiting' }).first('id');
      if (waiting) return refusal.waitingExists(jobKey, Number(waiting.id));
      const now = this.clock.now();
      const patch: Raw = { status: 'waiting', run_at: now, dead_reason: null, ...unleased(now) };
      if (opts.resetAttempts) patch.attempts = 0;
      try {
        await trx('jobs').where({ id: dead.id, status: 'dead' }).update(patch);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        return refusal.waitingExists(jobKey, Number(dead.id));
      }
      return { ok: true, job: mapJob(await trx('jobs').where({ id: dead.id }).first()) };
    });
  }

  /**
   * Queue repair: takes a running job's lease away (by job key or by receipt) and puts the job back to
   * waiting. A lease that has not expired is only released with `force`. The old holder's receipt is stale
   * from then on, so it can neither ack nor publish. The attempt it used stays counted.
   */
  async releaseLease(
    target: { jobKey: string } | { receipt: string },
    opts: { force: boolean },
  ): Promise<RepairResult> {
    return writeTransaction(this.knex, async (trx) => {
      const where = 'jobKey' in target ? { job_key: target.jobKey } : { receipt: target.receipt };
      const label = 'jobKey' in target ? `key ${target.jobKey}` : `receipt ${target.receipt}`;
      const job = await trx('jobs')
        .where({ ...where, status: 'running' })
        .orderBy('id', 'desc')
        .first();
      if (!job) return refusal.notFound(`running job with ${label}`);
      const now = this.clock.now();
      const expires = Number(job.lease_expires_at);
      if (!opts.force && expires > now) return refusal.leaseActive(Number(job.id), job.lease_owner, expires);
      const patch: Raw = { ...unleased(now), run_at: now, status: 'waiting' };
      // The key's waiting slot may be taken by a newer job: then the released one cannot wait beside it.
      const waiting =
        job.job_key === null
          ? null
          : await trx('jobs').where({ job_key: job.job_key, status: 'waiting' }).first('id');
      if (waiting) {
        patch.status = 'dead';
        patch.dead_reason = 'superseded';
        patch.last_error = `lease released by an operator while job ${waiting.id} waits with the same key`;
      }
      await trx('jobs').where({ id: job.id, receipt: job.receipt }).update(patch);
      return { ok: true, job: mapJob(await trx('jobs').where({ id: job.id }).first()) };
    });
  }

  async get(jobId: number): Promise<Job | null> {
    const row = await this.knex('jobs').where({ id: jobId }).first();
    return row ? mapJob(row) : null;
  }

  async findByKey(key: string): Promise<Job[]> {
    const rows = await this.knex('jobs').where({ job_key: key }).orderBy('id');
    return rows.map(mapJob);
  }

  async list(filter: { queue?: string; status?: JobStatus; limit?: number } = {}): Promise<Job[]> {
    let q = this.knex('jobs')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 50);
    if (filter.queue) q = q.where('queue', filter.queue);
    if (filter.status) q = q.where('status', filter.status);
    return (await q).map(mapJob);
  }

  async stats(): Promise<Array<{ queue: string; status: JobStatus; count: number }>> {
    const rows = await this.knex('jobs')
      .select('queue', 'status')
      .count({ count: '*' })
      .groupBy('queue', 'status');
    return rows.map((r: Raw) => ({
      queue: String(r.queue),
      status: r.status as JobStatus,
      count: Number(r.count),
    }));
  }
}
