import { createHash } from 'node:crypto';

/**
 * Failed authentications per client address (issue 37): after `limit` different wrong tokens from one
 * address within a window, every request of that address that needs a token is refused with 429 and
 * `Retry-After` until the window ends, whatever token it presents (a right token answered differently would
 * tell a guesser it was right). Different tokens, because guessing presents a new one each time, while a
 * client with a stale token repeats the same one (it gets its 401s, and is not locked out). Correct tokens
 * are never delayed, and a request without a token is not a guess. In memory, per process, at most
 * `maxClients` addresses (the oldest window is forgotten first); tokens are kept as short hashes.
 */
export type ThrottleOptions = { limit?: number; windowMs?: number; maxClients?: number; now?: () => number };

/** 20 different wrong tokens a minute: a person mistyping never meets it; a guesser gets 20 a minute, not 777 a second. */
export const AUTH_FAILURES_PER_WINDOW = 20;
export const AUTH_WINDOW_MS = 60_000;

export class AuthThrottle {
  private readonly windows = new Map<string, { tokens: Set<string>; resetAt: number }>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(opts: ThrottleOptions = {}) {
    this.limit = opts.limit ?? AUTH_FAILURES_PER_WINDOW;
    this.windowMs = opts.windowMs ?? AUTH_WINDOW_MS;
    this.maxClients = opts.maxClients ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** Seconds until the address may try again, or null when it is not throttled. */
  retryAfter(address: string): number | null {
    const w = this.windows.get(address);
    if (!w) return null;
    const now = this.now();
    if (now >= w.resetAt) {
      this.windows.delete(address);
      return null;
    }
    return w.tokens.size >= this.limit ? Math.max(1, Math.ceil((w.resetAt - now) / 1000)) : null;
  }

  /** Counts a wrong token from the address (the same wrong token again counts once). */
  failed(address: string, token: string): void {
    const now = this.now();
    const tag = createHash('sha256').update(token).digest('base64').slice(0, 12);
    const w = this.windows.get(address);
    if (w && now < w.resetAt) {
      if (w.tokens.size < this.limit) w.tokens.add(tag);
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= this.maxClients) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    this.windows.set(address, { tokens: new Set([tag]), resetAt: now + this.windowMs });
  }
}

export const THROTTLED_MESSAGE = 'Too many failed authentications from this address: try again later';
