import type { Knex } from 'knex';

/**
 * Feedback (NAMES.md "Memory", "Feedback and learning"): what people did with Verdict's line comments,
 * one row per GitHub event, stored once. `event_key` is the event's GitHub identity (`reaction:<id>`,
 * `comment:<id>` for a reply, `thread:<node id>:resolved`, `addressed:<comment id>` for a finding an
 * accepted disposition closed), unique, so a delivery handled twice counts once. `up`, `down`,
 * `dismissed` and `addressed` are what the event added to the counts (0 or 1; a finding counts as
 * dismissed or addressed once however many events say so) and to the cluster it was folded into
 * (`cluster_id`). A resolution waits (`status: pending`) until the next head says whether the code
 * changed under it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('memory_feedback', (t) => {
    t.bigIncrements('id').primary();
    t.string('event_key', 300).notNullable().unique();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    /** The first comment of Verdict's thread (its line comment) the event is about. */
    t.string('comment_id', 32).notNullable();
    t.string('fingerprint', 64).nullable();
    /** `up`, `down`, `ignore`, `learn`, `resolved` or `addressed`. */
    t.string('kind', 16).notNullable();
    /** `counted`, or `pending` (a resolution waiting for the next head). */
    t.string('status', 16).notNullable();
    t.integer('up').notNullable().defaultTo(0);
    t.integer('down').notNullable().defaultTo(0);
    t.integer('dismissed').notNullable().defaultTo(0);
    t.integer('addressed').notNullable().defaultTo(0);
    t.string('cluster_id', 64).nullable();
    t.string('context_id', 64).nullable();
    /** Who: a GitHub login, or `verdict` for a disposition. */
    t.string('actor', 200).nullable();
    /** The pull request's head when a thread was resolved. */
    t.string('head_sha', 64).nullable();
    /** Whether Verdict's reply to it (a `@verdict ignore` or `learn`) was sent or recorded. */
    t.boolean('answered').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['repo', 'pr_number']);
    t.index(['comment_id']);
    t.index(['status']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('memory_feedback');
}
