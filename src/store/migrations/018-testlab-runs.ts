import type { Knex } from 'knex';

/**
 * Test Lab records: one row per corpus run (`verdict testlab run`), with the provider and model, the
 * prompt version and commit it measured, its overall scores and every case's result.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('testlab_runs', (t) => {
    t.string('id', 64).primary();
    t.string('name', 200).notNullable();
    t.string('provider', 40).notNullable();
    t.string('model', 200).notNullable();
    t.string('prompt_version', 64).notNullable();
    t.string('commit', 64).nullable();
    t.text('judge').nullable();
    t.text('scores').notNullable();
    t.text('cases').notNullable();
    t.string('actor', 200).notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('testlab_runs');
}
