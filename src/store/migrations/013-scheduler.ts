import type { Knex } from 'knex';

/**
 * Scheduled jobs (review-engine 6.4): one row per job with its heartbeat (last start and finish), its
 * last status and error, and the artifact its last run produced (JSON with `generatedAt`), which the
 * watchdog checks. Harness records (the CLI's `harness` command) are saved review baselines that the Test
 * Lab routes list.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('scheduled_jobs', (t) => {
    t.string('name', 100).primary();
    t.string('expression', 100).notNullable();
    t.bigInteger('last_started_at').nullable();
    t.bigInteger('last_finished_at').nullable();
    // ok | error | running
    t.string('last_status', 16).nullable();
    t.text('last_error').nullable();
    t.text('artifact').nullable();
    t.integer('runs').notNullable().defaultTo(0);
    t.bigInteger('updated_at').notNullable();
  });
  await knex.schema.createTable('harness_records', (t) => {
    t.string('id', 64).primary();
    t.string('name', 200).notNullable();
    t.string('review_key', 600).notNullable();
    t.string('run_id', 64).notNullable();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.text('record').notNullable();
    t.string('actor', 200).notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['created_at']);
  });
  await knex.schema.alterTable('operator_commands', (t) => {
    // Which bridge claimed the command (`{bridgeId}`), so a stuck `running` command can be traced.
    t.string('claimed_by', 200).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('operator_commands', (t) => t.dropColumn('claimed_by'));
  await knex.schema.dropTable('harness_records');
  await knex.schema.dropTable('scheduled_jobs');
}
