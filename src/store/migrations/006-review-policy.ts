import type { Knex } from 'knex';

/**
 * The workspace review policy (operator-api 2.9): one row per workspace with an integer revision. The
 * default workspace's row is created here with revision 1 and an empty document (every field takes its
 * default), so a fresh install serves the policy at once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('review_policies', (t) => {
    t.string('workspace', 100).primary();
    t.integer('revision').notNullable();
    t.text('document').notNullable();
    t.string('updated_by', 200).notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await knex('review_policies').insert({
    workspace: 'default',
    revision: 1,
    document: '{}',
    updated_by: 'migration',
    updated_at: Date.now(),
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('review_policies');
}
