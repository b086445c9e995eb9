import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { parseJson, toBool, type ShownWrites } from './db.js';

export type RepositoryRecord = {
  fullName: string;
  owner: string;
  name: string;
  installationId: number | null;
  installed: boolean;
  config: Record<string, unknown> | null;
  standaloneConfig: Record<string, unknown> | null;
  createdAt: number;
  updatedAt: number;
};

type Raw = Record<string, unknown>;

function mapRepo(row: Raw): RepositoryRecord {
  return {
    fullName: String(row.full_name),
    owner: String(row.owner),
    name: String(row.name),
    installationId: row.installation_id === null ? null : Number(row.installation_id),
    installed: toBool(row.installed),
    config: parseJson(row.config, null),
    standaloneConfig: parseJson(row.standalone_config, null),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export function splitFullName(fullName: string): { owner: string; name: string } {
  const i = fullName.indexOf('/');
  return { owner: fullName.slice(0, i), name: fullName.slice(i + 1) };
}

/** A repository's first row: `installed` as given, no installation or configuration yet. */
function newRow(fullName: string, installed: boolean, now: number): Raw {
  const { owner, name } = splitFullName(fullName);
  return { full_name: fullName, owner, name, installed, created_at: now, updated_at: now };
}

export class RepositoryStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly shown: ShownWrites,
  ) {}

  async get(fullName: string): Promise<RepositoryRecord | null> {
    const row = await this.knex('repositories').where({ full_name: fullName }).first();
    return row ? mapRepo(row) : null;
  }

  async list(): Promise<RepositoryRecord[]> {
    return (await this.knex('repositories').orderBy('full_name')).map(mapRepo);
  }

  /**
   * Records that the App is installed on a repository (installation events, sync). With `enable`
   * (NAMES.md "Installed means reviewed"), a repository without an operator configuration gets `{ enabled:
   * true }`, audited as `repos.configure` by `actor`; an existing configuration (an operator's choice, even
   * `enabled: false`) is never touched. Resolves with whether it enabled the repository.
   */
  async upsertInstalled(
    fullName: string,
    installationId: number | null,
    enable?: { actor: string; reason: string },
  ): Promise<{ enabled: boolean }> {
    return this.shown.writeTransaction(this.knex, async (trx) => {
      const now = this.clock.now();
      await trx('repositories')
        .insert({ ...newRow(fullName, true, now), installation_id: installationId })
        .onConflict('full_name')
        .merge({ installation_id: installationId, installed: true, updated_at: now });
      if (!enable) return { enabled: false };
      const config = { enabled: true };
      const changed = await trx('repositories')
        .where({ full_name: fullName })
        .whereNull('config')
        .update({ config: JSON.stringify(config), updated_at: now });
      if (changed === 0) return { enabled: false };
      await trx('audit_events').insert({
        actor: enable.actor,
        action: 'repos.configure',
        target: fullName,
        reason: enable.reason,
        detail: JSON.stringify({ patch: config, installed: true }),
        created_at: now,
      });
      return { enabled: true };
    });
  }

  async markUninstalled(fullNames: string[]): Promise<void> {
    if (fullNames.length === 0) return;
    await this.knex('repositories')
      .whereIn('full_name', fullNames)
      .update({ installed: false, updated_at: this.clock.now() });
    this.shown.wrote();
  }

  async markInstallationRemoved(installationId: number): Promise<void> {
    await this.knex('repositories')
      .where({ installation_id: installationId })
      .update({ installed: false, updated_at: this.clock.now() });
    this.shown.wrote();
  }

  async setStandaloneConfig(fullName: string, config: unknown): Promise<void> {
    const now = this.clock.now();
    await this.knex('repositories')
      .insert({ ...newRow(fullName, true, now), standalone_config: JSON.stringify(config) })
      .onConflict('full_name')
      .merge({ standalone_config: JSON.stringify(config), updated_at: now });
    this.shown.wrote();
  }

  /**
   * Merges an operator configuration patch (operator-api 2.8) over the stored one, section by section,
   * and writes it with its audit entry in one transaction. A repository Verdict has not seen yet is created
   * with it (NAMES.md: an operator may configure a repository before its first pull request), as not
   * installed and without an installation until an installation event or a sync records them. The name is
   * matched exactly first, then ignoring case (GitHub names are case-insensitive), so `Acme/API` configures
   * the stored `acme/api` instead of creating a second row. The caller validates the name and the patch.
   */
  async configure(
    fullName: string,
    patch: Record<string, unknown>,
    audit: { actor: string; reason: string | null },
  ): Promise<{ repo: RepositoryRecord; created: boolean }> {
    return this.shown.writeTransaction(this.knex, async (trx) => {
      let row: Raw | undefined =
        (await trx('repositories').where({ full_name: fullName }).first()) ??
        (await trx('repositories')
          .whereRaw('lower(full_name) = ?', [fullName.toLowerCase()])
          .orderBy('full_name')
          .first());
      let created = false;
      if (!row) {
        // Ignored on a conflict: a concurrent PATCH or installation event created it first; merge over it.
        await trx('repositories')
          .insert(newRow(fullName, false, this.clock.now()))
          .onConflict('full_name')
          .ignore();
        row = (await trx('repositories').where({ full_name: fullName }).first()) as Raw;
        created = true;
      }
      const target = String(row.full_name);
      const current = parseJson<Record<string, unknown>>(row.config, {}) ?? {};
      const next: Record<string, unknown> = { ...current };
      for (const [key, value] of Object.entries(patch)) {
        const before = current[key];
        next[key] =
          value !== null &&
          typeof value === 'object' &&
          !Array.isArray(value) &&
          before &&
          typeof before === 'object'
            ? { ...(before as Record<string, unknown>), ...(value as Record<string, unknown>) }
            : value;
      }
      const now = this.clock.now();
      await trx('repositories')
        .where({ full_name: target })
        .update({ config: JSON.stringify(next), updated_at: now });
      await trx('audit_events').insert({
        actor: audit.actor,
        action: 'repos.configure',
        target,
        reason: audit.reason,
        detail: JSON.stringify(created ? { patch, created } : { patch }),
        created_at: now,
      });
      return { repo: mapRepo(await trx('repositories').where({ full_name: target }).first()), created };
    });
  }
}
