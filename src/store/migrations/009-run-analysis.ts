import type { Knex } from 'knex';

/**
 * The analysis a run produced (review-engine 2.8): its verdict and confidence as columns (reports filter
 * on them), the whole result (review output, semantic coverage, warnings) and the shadow model's review
 * as JSON. A finding already raised on the PR by an earlier review is marked `still_open`. Memory contexts
 * (repository knowledge a review is given, with ids the model may cite) start here in their minimal form.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.string('verdict', 32).nullable();
    t.integer('confidence').nullable();
    t.text('result').nullable();
    t.text('shadow_review').nullable();
  });
  await knex.schema.alterTable('findings', (t) => {
    t.boolean('still_open').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('memory_contexts', (t) => {
    t.string('id', 64).primary();
    /** `owner/name`, or null for every repository. */
    t.string('repo', 300).nullable().index();
    /** A path glob the context applies to, or null for the whole repository. */
    t.string('path_glob', 500).nullable();
    t.string('title', 300).notNullable();
    t.text('body').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('memory_contexts');
  await knex.schema.alterTable('findings', (t) => t.dropColumn('still_open'));
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('shadow_review');
    t.dropColumn('result');
    t.dropColumn('confidence');
    t.dropColumn('verdict');
  });
}
