import type { Knex } from 'knex';

/**
 * NAMES.md "Installed means reviewed": a repository an installation event (or a repository sync) recorded
 * as installed, and that has no operator configuration, gets `{ enabled: true }` as the installation
 * handlers now give it, with an audit entry saying why. A repository first met through a pull request
 * (no installation id) and every configuration an operator saved are left as they are.
 *
 * `down` leaves the configurations in place: after this migration an operator may have kept or edited
 * them, and a configuration `{ enabled: true }` reads the same to every earlier version.
 */
export async function up(knex: Knex): Promise<void> {
  const now = Date.now();
  const rows: Array<{ full_name: string }> = await knex('repositories')
    .select('full_name')
    .where({ installed: true })
    .whereNotNull('installation_id')
    .whereNull('config');
  if (rows.length === 0) return;
  const names = rows.map((r) => r.full_name);
  for (let i = 0; i < names.length; i += 500) {
    const batch = names.slice(i, i + 500);
    await knex('repositories')
      .whereIn('full_name', batch)
      .whereNull('config')
      .update({ config: JSON.stringify({ enabled: true }), updated_at: now });
    await knex('audit_events').insert(
      batch.map((target) => ({
        actor: 'migration:021-installed-enabled',
        action: 'repos.configure',
        target,
        reason: 'installed means reviewed: an installed repository without configuration is enabled',
        detail: JSON.stringify({ patch: { enabled: true }, installed: true }),
        created_at: now,
      })),
    );
  }
}

export async function down(): Promise<void> {}
