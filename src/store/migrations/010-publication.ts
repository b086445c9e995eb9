import type { Knex } from 'knex';

/**
 * Publication state of a run beside its analysis (review-engine 2.8): the check run it owns (created in
 * progress when the review starts, completed when it is published) and the last publication error.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.string('check_run_id', 32).nullable();
    t.text('publish_error').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('publish_error');
    t.dropColumn('check_run_id');
  });
}
