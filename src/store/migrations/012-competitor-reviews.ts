import type { Knex } from 'knex';

/**
 * Reviews and PR comments by other review bots (`VERDICT_COMPETITOR_LOGINS`), kept so that a review can
 * compare itself with them (review-engine 2.5 `competitorComparison`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('competitor_reviews', (t) => {
    t.increments('id').primary();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.string('login', 200).notNullable();
    /** `review` (a submitted PR review) or `comment` (a PR conversation comment). */
    t.string('kind', 16).notNullable();
    t.bigInteger('github_id').notNullable();
    t.string('state', 32).nullable();
    t.text('body').notNullable();
    t.string('submitted_at', 40).nullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['kind', 'github_id']);
    t.index(['repo', 'pr_number']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('competitor_reviews');
}
