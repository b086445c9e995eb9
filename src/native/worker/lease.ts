/**
 * The dispatch lease of one run (review-engine 3.4, 8): a Durable Object per run id holding who may
 * dispatch it and until when. `completed` is final (a redelivery answers `skipped_completed`); a running
 * lease of another owner that has not expired answers `locked`; an expired one is reclaimed.
 */
type Lease = { token: string; status: 'running' | 'completed'; expiresAt: number };
type Storage = {
  get<T>(key: string): Promise<T | undefined>;
  put(key: string, v: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
};
export type LeaseVerb = 'acquire' | 'renew' | 'release' | 'check';
/** What a lease call sends: the owner's token, the lease's length (`acquire`, `renew`), how it ended (`release`). */
type LeaseRequest = { token: string; leaseMs?: number; outcome?: 'completed' | 'failed' };
export type LeaseAnswer = {
  status: 'acquired' | 'completed' | 'locked' | 'renewed' | 'released' | 'lost' | 'valid';
};

export const DEFAULT_LEASE_MS = 1800000;
/** Renewal period: min(30000, floor(LEASE_MS / 3)) ms, at least 1 ms (review-engine 8). */
export const renewEveryMs = (leaseMs: number): number =>
  Math.max(1, Math.min(30000, Math.floor(leaseMs / 3)));

export function decide(
  lease: Lease | undefined,
  verb: LeaseVerb,
  input: LeaseRequest & { now: number },
): { answer: LeaseAnswer['status']; next: Lease | undefined | null } {
  const mine = lease?.token === input.token && lease.status === 'running';
  const running = (): Lease => ({
    token: input.token,
    status: 'running',
    expiresAt: input.now + (input.leaseMs ?? DEFAULT_LEASE_MS),
  });
  switch (verb) {
    case 'acquire':
      if (lease?.status === 'completed') return { answer: 'completed', next: lease };
      if (lease && !mine && lease.expiresAt > input.now) return { answer: 'locked', next: lease };
      return { answer: 'acquired', next: running() };
    case 'renew':
      return mine ? { answer: 'renewed', next: running() } : { answer: 'lost', next: lease };
    case 'release':
      if (!mine) return { answer: 'lost', next: lease };
      return input.outcome === 'completed'
        ? { answer: 'released', next: { ...lease!, status: 'completed' } }
        : { answer: 'released', next: null };
    case 'check':
      return { answer: mine && lease!.expiresAt > input.now ? 'valid' : 'lost', next: lease };
  }
}

export class DispatchLease {
  constructor(
    private readonly state: { storage: Storage },
    _env: unknown,
  ) {}

  async fetch(request: Request): Promise<Response> {
    const verb = new URL(request.url).pathname.slice(1) as LeaseVerb;
    if (!['acquire', 'renew', 'release', 'check'].includes(verb))
      return new Response('not found', { status: 404 });
    const input = (await request.json()) as LeaseRequest;
    const lease = await this.state.storage.get<Lease>('lease');
    const { answer, next } = decide(lease, verb, { ...input, now: Date.now() });
    if (next === null) await this.state.storage.delete('lease');
    else if (next !== lease) await this.state.storage.put('lease', next);
    return Response.json({ status: answer });
  }
}
