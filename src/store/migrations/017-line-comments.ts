import type { Knex } from 'knex';

/**
 * Line comments and incremental reviews (NAMES.md extensions). A finding keeps its checked anchor
 * (`line` existed; `end_line`), its `suggestion`, and the text of the anchored lines (`line_text`, to
 * recognise the code later). A publication keeps what was sent beside its body (`request`: the inline
 * comments of a review, the annotations of a check run, the variables of a GraphQL call) and the node id
 * GitHub gave it (a review's, for hiding it as outdated later). `review_threads` holds the comment thread
 * each anchored finding opened on GitHub, until Verdict resolves it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('findings', (t) => {
    t.integer('end_line').nullable();
    t.text('suggestion').nullable();
    t.text('line_text').nullable();
  });
  await knex.schema.alterTable('publications', (t) => {
    t.text('request').nullable();
    t.string('node_id', 100).nullable();
  });
  await knex.schema.createTable('review_threads', (t) => {
    t.bigIncrements('id').primary();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.string('fingerprint', 64).notNullable();
    /** The run whose review opened the thread. */
    t.string('run_id', 64).notNullable();
    t.string('review_id', 32).notNullable();
    t.string('comment_id', 32).notNullable();
    t.string('comment_node_id', 100).nullable();
    t.string('path', 1000).notNullable();
    t.integer('line').notNullable();
    t.text('url').nullable();
    /** `open` until Verdict resolves it (`resolved`). */
    t.string('status', 16).notNullable();
    t.string('resolved_run_id', 64).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['repo', 'pr_number', 'fingerprint']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('review_threads');
  await knex.schema.alterTable('publications', (t) => {
    t.dropColumn('node_id');
    t.dropColumn('request');
  });
  await knex.schema.alterTable('findings', (t) => {
    t.dropColumn('line_text');
    t.dropColumn('suggestion');
    t.dropColumn('end_line');
  });
}
