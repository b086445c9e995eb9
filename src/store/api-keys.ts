import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock, IdGenerator } from '../clock.js';
import { numberOrNull, parseJson } from './db.js';

export const API_KEY_SCOPES = ['read', 'memory:write'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** NAMES.md: `vdt_` then 64 lowercase hex characters; the display prefix is the first 14 characters. */
export const API_KEY_TOKEN_PREFIX = 'vdt_';
export const API_KEY_TOKEN_PATTERN = /^vdt_[0-9a-f]{64}$/;
export const DISPLAY_PREFIX_LENGTH = 14;

export type ApiKey = {
  id: string;
  name: string;
  scopes: ApiKeyScope[];
  prefix: string;
  createdBy: string;
  createdAt: number;
  status: 'active' | 'revoked';
  revokedAt: number | null;
  revokedBy: string | null;
  lastUsedAt: number | null;
};

/** The stored form of a secret token (API keys, dashboard sessions): its SHA-256, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

type Raw = Record<string, unknown>;

function mapKey(row: Raw): ApiKey {
  const revokedAt = numberOrNull(row.revoked_at);
  return {
    id: String(row.id),
    name: String(row.name),
    scopes: parseJson<ApiKeyScope[]>(row.scopes, []),
    prefix: String(row.prefix),
    createdBy: String(row.created_by),
    createdAt: Number(row.created_at),
    status: revokedAt === null ? 'active' : 'revoked',
    revokedAt,
    revokedBy: (row.revoked_by as string | null) ?? null,
    lastUsedAt: numberOrNull(row.last_used_at),
  };
}

const METADATA = [
  'id',
  'name',
  'scopes',
  'prefix',
  'created_by',
  'created_at',
  'revoked_at',
  'revoked_by',
  'last_used_at',
];

/** Scoped API keys. The token is shown once, at creation; the store keeps its SHA-256 and display prefix. */
export class ApiKeyStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async create(input: {
    name: string;
    scopes: ApiKeyScope[];
    actor: string;
  }): Promise<{ key: ApiKey; token: string }> {
    const token = API_KEY_TOKEN_PREFIX + randomBytes(32).toString('hex');
    const row = {
      id: this.ids('key'),
      name: input.name,
      scopes: JSON.stringify([...new Set(input.scopes)]),
      token_hash: hashToken(token),
      prefix: token.slice(0, DISPLAY_PREFIX_LENGTH),
      created_by: input.actor,
      created_at: this.clock.now(),
      revoked_at: null,
      revoked_by: null,
      last_used_at: null,
    };
    await this.knex('api_keys').insert(row);
    return { key: mapKey(row), token };
  }

  /** Metadata only, newest first; `q` matches the name, id or display prefix (case-insensitive). */
  async list(filter: { q?: string; limit?: number } = {}): Promise<ApiKey[]> {
    let query = this.knex('api_keys')
      .select(METADATA)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 100);
    const q = filter.q?.trim().toLowerCase();
    if (q) {
      const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query = query.where((w) =>
        w
          .whereRaw(`LOWER(name) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(id) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(prefix) LIKE ? ESCAPE '\\'`, [like]),
      );
    }
    return (await query).map(mapKey);
  }

  async get(id: string): Promise<ApiKey | null> {
    const row = await this.knex('api_keys').where({ id }).first(METADATA);
    return row ? mapKey(row) : null;
  }

  /** Revokes an active key; a revoked key stays revoked (the first revocation's time and actor are kept). */
  async revoke(id: string, actor: string): Promise<ApiKey | null> {
    await this.knex('api_keys')
      .where({ id })
      .whereNull('revoked_at')
      .update({ revoked_at: this.clock.now(), revoked_by: actor });
    return this.get(id);
  }

  /** The active key a token belongs to, or null (unknown, malformed or revoked). */
  async authenticate(token: string): Promise<ApiKey | null> {
    if (!API_KEY_TOKEN_PATTERN.test(token)) return null;
    const row = await this.knex('api_keys')
      .where({ token_hash: hashToken(token) })
      .first(METADATA);
    if (!row || row.revoked_at !== null) return null;
    return mapKey(row);
  }
}
