import type { Knex } from 'knex';

/**
 * SCM alerts (NAMES.md "Never missing a pull request"): one row per open condition, found again by its
 * `dedupe_key` (kind, repository and what distinguishes it) while it is not dismissed, so a repeated
 * condition counts instead of adding a row. `delivery_pending` is set while the alert's last delivery
 * (watchdog URL, Telegram) has not succeeded: the next occurrence delivers it again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('alerts', (t) => {
    t.string('id', 64).primary();
    t.string('kind', 64).notNullable();
    t.string('repo', 200).nullable();
    t.string('severity', 16).notNullable();
    t.text('message').notNullable();
    t.string('dedupe_key', 400).notNullable();
    t.bigInteger('first_seen_at').notNullable();
    t.bigInteger('last_seen_at').notNullable();
    t.integer('count').notNullable().defaultTo(1);
    t.integer('revision').notNullable().defaultTo(1);
    t.bigInteger('dismissed_at').nullable();
    t.string('dismissed_by', 200).nullable();
    t.boolean('delivery_pending').notNullable().defaultTo(false);
    t.text('delivery_error').nullable();
    t.index(['dedupe_key', 'dismissed_at'], 'alerts_open_by_key');
    t.index(['last_seen_at'], 'alerts_by_last_seen');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('alerts');
}
