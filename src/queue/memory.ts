import type { Clock, IdGenerator } from '../clock.js';
import { DEFAULT_MAX_ATTEMPTS, refusal, retryDelayMs, type RepairResult } from '../store/jobs.js';
import type {
  ClaimedJob,
  DeadReason,
  EnqueueInput,
  EnqueueResult,
  FailResult,
  Job,
  JobStatus,
  QueueBackend,
} from './types.js';

/**
 * A process-local queue with the job table's semantics (one waiting job per key, fenced receipts,
 * back-off, dead letters, repair). Only this process can enqueue into it and its jobs are lost when the
 * process exits; the queue selection logs that when it picks it.
 */
export class MemoryQueue implements QueueBackend {
  readonly kind = 'memory' as const;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;

  constructor(private readonly deps: { clock: Clock; ids: IdGenerator }) {}

  private now(): number {
    return this.deps.clock.now();
  }

  private copy<T extends Job>(job: T): T {
    return { ...job, payload: structuredClone(job.payload) };
  }

  private waitingWithKey(key: string): Job | undefined {
    for (const job of this.jobs.values()) if (job.key === key && job.status === 'waiting') return job;
    return undefined;
  }

  /** Takes a job's lease away: its holder's receipt is stale from then on. */
  private unleased(now: number): Partial<Job> {
    return { leaseOwner: null, leaseExpiresAt: null, receipt: null, updatedAt: now };
  }

  private current(jobId: number, receipt: string): Job | null {
    const job = this.jobs.get(jobId);
    return job && job.status === 'running' && job.receipt === receipt ? job : null;
  }

  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    const now = this.now();
    const key = input.key ?? null;
    if (key !== null) {
      const existing = this.waitingWithKey(key);
      if (existing) {
        if (input.mode === 'keep_existing') return { outcome: 'already_waiting', jobId: existing.id };
        const replacedPayload = existing.payload;
        Object.assign(existing, {
          payload: structuredClone(input.payload ?? null),
          kind: input.kind,
          updatedAt: now,
          runAt: input.runAt ?? now,
          attempts: 0,
        });
        return { outcome: 'replace_waiting', jobId: existing.id, replacedPayload };
      }
    }
    const id = this.nextId++;
    this.jobs.set(id, {
      id,
      queue: input.queue,
      kind: input.kind,
      key,
      payload: structuredClone(input.payload ?? null),
      status: 'waiting',
      priority: input.priority ?? 0,
      attempts: 0,
      maxAttempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      runAt: input.runAt ?? now,
      leaseOwner: null,
      leaseExpiresAt: null,
      receipt: null,
      lastError: null,
      deadReason: null,
      createdAt: now,
      updatedAt: now,
    });
    return { outcome: 'enqueued', jobId: id };
  }

  async claim(queue: string, owner: string, leaseMs: number): Promise<ClaimedJob | null> {
    const now = this.now();
    let best: Job | null = null;
    for (const job of this.jobs.values()) {
      if (job.queue !== queue) continue;
      const runnable =
        (job.status === 'waiting' && job.runAt <= now) ||
        (job.status === 'running' && (job.leaseExpiresAt ?? 0) <= now && job.attempts < job.maxAttempts);
      if (!runnable) continue;
      if (
        !best ||
        job.priority > best.priority ||
        (job.priority === best.priority &&
          (job.runAt < best.runAt || (job.runAt === best.runAt && job.id < best.id)))
      ) {
        best = job;
      }
    }
    if (!best) return null;
    Object.assign(best, {
      status: 'running',
      leaseOwner: owner,
      leaseExpiresAt: now + leaseMs,
      receipt: this.deps.ids('rcpt'),
      attempts: best.attempts + 1,
      updatedAt: now,
    });
    return this.copy(best) as ClaimedJob;
  }

  async claimMany(queue: string, owner: string, leaseMs: number, limit: number): Promise<ClaimedJob[]> {
    const claimed: ClaimedJob[] = [];
    for (let i = 0; i < limit; i++) {
      const job = await this.claim(queue, owner, leaseMs);
      if (!job) break;
      claimed.push(job);
    }
    return claimed;
  }

  async ackMany(items: Array<{ jobId: number; receipt: string }>): Promise<number[]> {
    const acked: number[] = [];
    for (const item of items) if (await this.ack(item.jobId, item.receipt)) acked.push(item.jobId);
    return acked;
  }

  async renew(jobId: number, receipt: string, leaseMs: number): Promise<number | null> {
    const job = this.current(jobId, receipt);
    if (!job) return null;
    const now = this.now();
    job.leaseExpiresAt = now + leaseMs;
    job.updatedAt = now;
    return job.leaseExpiresAt;
  }

  async ack(jobId: number, receipt: string): Promise<boolean> {
    const job = this.current(jobId, receipt);
    if (!job) return false;
    Object.assign(job, { status: 'done', leaseExpiresAt: null, lastError: null, updatedAt: this.now() });
    return true;
  }

  async fail(
    jobId: number,
    receipt: string,
    error: string,
    opts: { deadReason?: DeadReason } = {},
  ): Promise<FailResult | null> {
    const job = this.current(jobId, receipt);
    if (!job) return null;
    const now = this.now();
    const deadReason = opts.deadReason ?? (job.attempts >= job.maxAttempts ? 'max_attempts' : null);
    const runAt = now + retryDelayMs(job.attempts);
    Object.assign(
      job,
      deadReason
        ? { status: 'dead', deadReason, leaseExpiresAt: null, updatedAt: now }
        : { status: 'waiting', runAt, ...this.unleased(now) },
      { lastError: error.slice(0, 4000) },
    );
    return deadReason ? { status: 'dead', reason: deadReason } : { status: 'waiting', runAt };
  }

  async release(jobId: number, receipt: string, opts: { delayMs?: number } = {}): Promise<boolean> {
    const job = this.current(jobId, receipt);
    if (!job) return false;
    const now = this.now();
    Object.assign(job, {
      status: 'waiting',
      attempts: Math.max(0, job.attempts - 1),
      runAt: now + (opts.delayMs ?? 0),
      ...this.unleased(now),
    });
    return true;
  }

  async reapExpired(): Promise<number> {
    const now = this.now();
    let n = 0;
    for (const job of this.jobs.values()) {
      if (job.status === 'running' && (job.leaseExpiresAt ?? 0) <= now && job.attempts >= job.maxAttempts) {
        Object.assign(job, {
          status: 'dead',
          deadReason: 'max_attempts',
          lastError: 'lease expired on the last attempt',
          leaseExpiresAt: null,
          updatedAt: now,
        });
        n++;
      }
    }
    return n;
  }

  async list(filter: { queue?: string; status?: JobStatus; limit?: number } = {}): Promise<Job[]> {
    return [...this.jobs.values()]
      .filter(
        (j) => (!filter.queue || j.queue === filter.queue) && (!filter.status || j.status === filter.status),
      )
      .sort((a, b) => b.id - a.id)
      .slice(0, filter.limit ?? 50)
      .map((j) => this.copy(j));
  }

  async stats(): Promise<Array<{ queue: string; status: JobStatus; count: number }>> {
    const counts = new Map<string, { queue: string; status: JobStatus; count: number }>();
    for (const job of this.jobs.values()) {
      const k = `${job.queue}\u0000${job.status}`;
      const entry = counts.get(k) ?? { queue: job.queue, status: job.status, count: 0 };
      entry.count++;
      counts.set(k, entry);
    }
    return [...counts.values()];
  }

  async get(jobId: number): Promise<Job | null> {
    const job = this.jobs.get(jobId);
    return job ? this.copy(job) : null;
  }

  async requeueDead(jobKey: string, opts: { resetAttempts: boolean }): Promise<RepairResult> {
    const dead = [...this.jobs.values()]
      .filter((j) => j.key === jobKey && j.status === 'dead')
      .sort((a, b) => b.id - a.id)[0];
    if (!dead) return refusal.notFound(`dead job with key ${jobKey}`);
    const waiting = this.waitingWithKey(jobKey);
    if (waiting) return refusal.waitingExists(jobKey, waiting.id);
    const now = this.now();
    Object.assign(dead, {
      status: 'waiting',
      runAt: now,
      deadReason: null,
      ...this.unleased(now),
      ...(opts.resetAttempts ? { attempts: 0 } : {}),
    });
    return { ok: true, job: this.copy(dead) };
  }

  async releaseLease(
    target: { jobKey: string } | { receipt: string },
    opts: { force: boolean },
  ): Promise<RepairResult> {
    const label = 'jobKey' in target ? `key ${target.jobKey}` : `receipt ${target.receipt}`;
    const job = [...this.jobs.values()]
      .filter(
        (j) =>
          j.status === 'running' &&
          ('jobKey' in target ? j.key === target.jobKey : j.receipt === target.receipt),
      )
      .sort((a, b) => b.id - a.id)[0];
    if (!job) return refusal.notFound(`running job with ${label}`);
    const now = this.now();
    const expires = job.leaseExpiresAt ?? 0;
    if (!opts.force && expires > now) return refusal.leaseActive(job.id, job.leaseOwner, expires);
    const waiting = job.key === null ? undefined : this.waitingWithKey(job.key);
    Object.assign(job, {
      ...this.unleased(now),
      runAt: now,
      status: waiting ? 'dead' : 'waiting',
      ...(waiting
        ? {
            deadReason: 'superseded',
            lastError: `lease released by an operator while job ${waiting.id} waits with the same key`,
          }
        : {}),
    });
    return { ok: true, job: this.copy(job) };
  }
}
