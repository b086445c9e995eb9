import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { hashToken } from './api-keys.js';

export type UiSessionVia = 'token' | 'github';

export type UiSession = {
  login: string;
  via: UiSessionVia;
  createdAt: number;
  expiresAt: number;
  lastSeenAt: number;
};

/** How often a session's `last_seen_at` is written at most (a read per request would be a write each). */
const SEEN_EVERY_MS = 60_000;

type Raw = Record<string, unknown>;

function mapSession(row: Raw): UiSession {
  return {
    login: String(row.login),
    via: row.via === 'github' ? 'github' : 'token',
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    lastSeenAt: Number(row.last_seen_at),
  };
}

/** Dashboard sessions: server-side, expiring, keyed by the hash of a random 32-byte token (`hashToken`). */
export class UiSessionStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  /** A new session: the token for the cookie (base64url of 32 random bytes) and the stored session. */
  async create(
    login: string,
    via: UiSessionVia,
    ttlMs: number,
  ): Promise<{ token: string; session: UiSession }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const session: UiSession = { login, via, createdAt: now, expiresAt: now + ttlMs, lastSeenAt: now };
    await this.knex('ui_sessions').insert({
      id: hashToken(token),
      login,
      via,
      created_at: now,
      expires_at: session.expiresAt,
      last_seen_at: now,
    });
    return { token, session };
  }

  /** The live session of a token, or null; an expired one is deleted. Touches `last_seen_at`. */
  async find(token: string): Promise<UiSession | null> {
    const id = hashToken(token);
    const row = (await this.knex('ui_sessions').where({ id }).first()) as Raw | undefined;
    if (!row) return null;
    const session = mapSession(row);
    const now = this.clock.now();
    if (session.expiresAt <= now) {
      await this.knex('ui_sessions').where({ id }).delete();
      return null;
    }
    if (now - session.lastSeenAt >= SEEN_EVERY_MS) {
      await this.knex('ui_sessions').where({ id }).update({ last_seen_at: now });
      session.lastSeenAt = now;
    }
    return session;
  }

  /** Deletes the session of a token (sign-out); true when there was one. */
  async delete(token: string): Promise<boolean> {
    return (
      (await this.knex('ui_sessions')
        .where({ id: hashToken(token) })
        .delete()) > 0
    );
  }

  /** Deletes every expired session; how many. */
  async deleteExpired(): Promise<number> {
    return this.knex('ui_sessions').where('expires_at', '<=', this.clock.now()).delete();
  }
}
