import type { Knex } from 'knex';

/**
 * Fewer B-trees written per webhook (every delivery writes its row, its job and its marker in the
 * ingress's group commit; docs/decisions.md, "Webhook ingress"):
 *
 * - `jobs.job_key` is indexed only where it is set. Webhook jobs have no key, and every one of them
 *   added a NULL entry to this index. Lookups by key (`job_key = ?`) use the partial index as before.
 * - The unique index of waiting jobs' keys (`jobs_waiting_key_uq`) holds only keyed jobs: NULL keys never
 *   conflicted, so uniqueness is the same, and webhook jobs no longer add an entry.
 * - `jobs_lease_idx` (`status`, `lease_expires_at`) goes. Its two readers, the reaper of expired
 *   leases and the dispatch-lease check, filter `status = 'running'`, and `jobs_expired_claim_idx`
 *   (migration 005) holds exactly the running jobs.
 * - On SQLite, `dedupe_markers` is a `WITHOUT ROWID` table: the key is the table's own B-tree, instead
 *   of a rowid table plus the primary key's index. (PostgreSQL has no rowid; its table is unchanged.)
 *
 * Creating the partial index reads the `jobs` table once, and the markers table is copied once (its rows
 * live `DEDUPE_TTL_SECONDS`, a week by default): a start after an upgrade takes that long.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('jobs', (t) => {
    t.dropIndex(['status', 'lease_expires_at'], 'jobs_lease_idx');
    t.dropIndex(['job_key']);
  });
  await knex.raw('CREATE INDEX jobs_job_key_index ON jobs (job_key) WHERE job_key IS NOT NULL');
  await knex.raw('DROP INDEX jobs_waiting_key_uq');
  await knex.raw(
    `CREATE UNIQUE INDEX jobs_waiting_key_uq ON jobs (job_key) WHERE status = 'waiting' AND job_key IS NOT NULL`,
  );
  if (!isPostgres(knex)) await rebuildMarkers(knex, 'WITHOUT ROWID');
}

export async function down(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) await rebuildMarkers(knex, '');
  await knex.raw('DROP INDEX jobs_waiting_key_uq');
  await knex.raw(`CREATE UNIQUE INDEX jobs_waiting_key_uq ON jobs (job_key) WHERE status = 'waiting'`);
  await knex.raw('DROP INDEX jobs_job_key_index');
  await knex.schema.alterTable('jobs', (t) => {
    t.index(['job_key']);
    t.index(['status', 'lease_expires_at'], 'jobs_lease_idx');
  });
}

function isPostgres(knex: Knex): boolean {
  return (knex.client as { dialect?: string }).dialect === 'postgresql';
}

/** SQLite: `dedupe_markers` again with the same columns and index, as a rowid table or not. */
async function rebuildMarkers(knex: Knex, options: 'WITHOUT ROWID' | ''): Promise<void> {
  await knex.raw(
    `CREATE TABLE dedupe_markers_new (key varchar(255) NOT NULL PRIMARY KEY, expires_at bigint NOT NULL) ${options}`,
  );
  await knex.raw(
    'INSERT INTO dedupe_markers_new (key, expires_at) SELECT key, expires_at FROM dedupe_markers',
  );
  await knex.raw('DROP TABLE dedupe_markers');
  await knex.raw('ALTER TABLE dedupe_markers_new RENAME TO dedupe_markers');
  await knex.raw('CREATE INDEX dedupe_markers_expires_at_index ON dedupe_markers (expires_at)');
}
