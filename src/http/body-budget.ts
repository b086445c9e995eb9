import type { BodyLease } from './router.js';

/**
 * The process-wide budget of webhook body bytes held in memory at once (issue 37). It counts the bytes
 * that have arrived, never a declared `Content-Length` (four connections that only declared 25 MiB held the
 * whole budget before), in two pools:
 *
 * - **ordinary**: a quarter of the budget for bodies that declare at most `ordinaryBytes` (1 MiB; GitHub's
 *   deliveries are rarely larger; the HTTP parser never reads past a declared length), which large or
 *   chunked bodies cannot take; one client address holds at most half of it (or four ordinary bodies);
 *   when it is full an ordinary body may use the large pool under that pool's rules;
 * - **large**: the rest, for every body, where one client address holds at most a quarter of the pool, or
 *   one maximum-size body if that is more.
 *
 * A request whose next chunk does not fit answers 503 `ingress_busy` and gives its bytes back. How long a
 * body may trickle is bounded by the request timeout (`VERDICT_REQUEST_TIMEOUT_MS`).
 */
export type BodyBudgetOptions = {
  /** The whole budget (`VERDICT_WEBHOOK_INFLIGHT_BYTES`). */
  capacity: number;
  /** The largest body accepted (`VERDICT_MAX_WEBHOOK_BYTES`). */
  maxBodyBytes: number;
  /** The part of each body counted as ordinary (default 1 MiB, at most an eighth of the budget). */
  ordinaryBytes?: number;
};

type Pool = { capacity: number; perAddress: number; used: number; byAddress: Map<string, number> };

export const ORDINARY_BODY_BYTES = 1024 * 1024;

export class BodyBudget {
  readonly capacity: number;
  readonly ordinaryBytes: number;
  private readonly ordinary: Pool;
  private readonly large: Pool;

  constructor(opts: BodyBudgetOptions) {
    this.capacity = opts.capacity;
    this.ordinaryBytes = Math.max(
      1,
      Math.min(opts.ordinaryBytes ?? ORDINARY_BODY_BYTES, Math.floor(opts.capacity / 8)),
    );
    const ordinaryCapacity = Math.floor(opts.capacity / 4);
    const largeCapacity = opts.capacity - ordinaryCapacity;
    this.ordinary = pool(
      ordinaryCapacity,
      Math.min(ordinaryCapacity, Math.max(Math.floor(ordinaryCapacity / 2), 4 * this.ordinaryBytes)),
    );
    this.large = pool(
      largeCapacity,
      Math.min(largeCapacity, Math.max(Math.floor(largeCapacity / 4), opts.maxBodyBytes)),
    );
  }

  /** Bytes held now, both pools. */
  get inUse(): number {
    return this.ordinary.used + this.large.used;
  }

  /**
   * A lease for one request from `address` that declared `declared` bytes (null: chunked): it grows with
   * the bytes received, and gives them back once.
   */
  lease(address: string, declared: number | null): BodyLease {
    const ordinary = declared !== null && declared <= this.ordinaryBytes;
    let held = 0;
    let from: Pool | null = null;
    return {
      ensure: (total: number) => {
        if (total <= held) return true;
        const more = total - held;
        if (from === null) {
          // The first bytes choose the pool: the ordinary one when it has room, else the large one.
          from = ordinary && fits(this.ordinary, address, this.ordinaryBytes) ? this.ordinary : this.large;
        }
        if (!fits(from, address, more)) return false;
        take(from, address, more);
        held = total;
        return true;
      },
      release: () => {
        if (from) take(from, address, -held);
        held = 0;
      },
    };
  }
}

function pool(capacity: number, perAddress: number): Pool {
  return { capacity, perAddress, used: 0, byAddress: new Map() };
}

function fits(p: Pool, address: string, bytes: number): boolean {
  if (bytes <= 0) return true;
  return p.used + bytes <= p.capacity && (p.byAddress.get(address) ?? 0) + bytes <= p.perAddress;
}

function take(p: Pool, address: string, bytes: number): void {
  if (bytes === 0) return;
  p.used += bytes;
  const left = (p.byAddress.get(address) ?? 0) + bytes;
  if (left > 0) p.byAddress.set(address, left);
  else p.byAddress.delete(address);
}
