import type { Knex } from 'knex';

/**
 * Recorded cost of paid validation executors (e2b): one row per sandbox run, its billed seconds (create to
 * kill) and their cost in USD at the recorded rate. The sum per executor is what the e2b budget reads
 * (review-engine 8, `VERDICT_E2B_BUDGET_USD`). Amounts are double precision on both dialects, so that
 * PostgreSQL hands them back as numbers, not strings.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('executor_costs', (t) => {
    t.string('id', 64).primary();
    t.string('executor', 40).notNullable();
    t.string('run_id', 200).nullable();
    t.double('seconds').notNullable();
    t.double('cost_usd').notNullable();
    t.bigInteger('recorded_at').notNullable();
    t.index(['executor', 'recorded_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('executor_costs');
}
