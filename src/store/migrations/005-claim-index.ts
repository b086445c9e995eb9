import type { Knex } from 'knex';

/**
 * The claim path reads only waiting jobs of one queue in claim order (priority first, then time, then
 * id): a partial index in exactly that order keeps a claim one index probe however many finished jobs
 * the table holds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX jobs_waiting_claim_idx ON jobs (queue, priority DESC, run_at, id) WHERE status = 'waiting'`,
  );
  await knex.raw(
    `CREATE INDEX jobs_expired_claim_idx ON jobs (queue, lease_expires_at) WHERE status = 'running'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX jobs_expired_claim_idx');
  await knex.raw('DROP INDEX jobs_waiting_claim_idx');
}
