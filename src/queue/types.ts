/** The jobs a queue holds, as every backend (the SQL job table, the HTTP client, memory) hands them out. */
export type JobStatus = 'waiting' | 'running' | 'done' | 'dead';
export type DeadReason = 'max_attempts' | 'unroutable' | 'superseded' | string;

export type Job = {
  id: number;
  queue: string;
  kind: string;
  key: string | null;
  payload: unknown;
  status: JobStatus;
  priority: number;
  attempts: number;
  maxAttempts: number;
  runAt: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  receipt: string | null;
  lastError: string | null;
  deadReason: string | null;
  createdAt: number;
  updatedAt: number;
};

/** A claimed job: the receipt is the fencing token every later call must present. */
export type ClaimedJob = Job & { receipt: string; leaseExpiresAt: number };

export type EnqueueMode =
  /** Replace the payload of the waiting job with the same key (never a running one). */
  | 'replace_waiting'
  /** Keep the waiting job with the same key as it is. */
  | 'keep_existing';

export type EnqueueInput = Pick<Job, 'queue' | 'kind' | 'payload'> &
  Partial<Pick<Job, 'key' | 'maxAttempts' | 'priority' | 'runAt'>> & { mode?: EnqueueMode };

export type EnqueueResult =
  | { outcome: 'enqueued'; jobId: number }
  | { outcome: 'replace_waiting'; jobId: number; replacedPayload: unknown }
  | { outcome: 'already_waiting'; jobId: number };

export type FailResult = { status: 'waiting'; runAt: number } | { status: 'dead'; reason: DeadReason };

/**
 * What a worker needs from a queue. The SQL job table, the HTTP queue client and the process-local
 * memory queue all implement it, so the worker loop does not care which one it runs on.
 */
export interface QueueBackend {
  readonly kind: 'sqlite' | 'pg' | 'http';
  enqueue(input: EnqueueInput): Promise<EnqueueResult>;
  claim(queue: string, owner: string, leaseMs: number): Promise<ClaimedJob | null>;
  renew(jobId: number, receipt: string, leaseMs: number): Promise<number | null>;
  ack(jobId: number, receipt: string): Promise<boolean>;
  fail(
    jobId: number,
    receipt: string,
    error: string,
    opts?: { deadReason?: string },
  ): Promise<FailResult | null>;
  release(jobId: number, receipt: string, opts?: { delayMs?: number }): Promise<boolean>;
  /** Claims up to `limit` jobs at once, each with its own receipt (backends that can batch). */
  claimMany?(queue: string, owner: string, leaseMs: number, limit: number): Promise<ClaimedJob[]>;
  /** Acknowledges several jobs at once; returns the ids acknowledged (backends that can batch). */
  ackMany?(items: Array<{ jobId: number; receipt: string }>): Promise<number[]>;
  reapExpired(): Promise<number>;
  list(filter?: { queue?: string; status?: JobStatus; limit?: number }): Promise<Job[]>;
  stats(): Promise<Array<{ queue: string; status: JobStatus; count: number }>>;
}

/** Renewal period of a lease: min(30 s, a third of the lease), at least 1 ms (review-engine 8). */
export function renewIntervalMs(leaseMs: number): number {
  return Math.max(1, Math.min(30_000, Math.floor(leaseMs / 3)));
}
