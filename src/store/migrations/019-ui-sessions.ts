import type { Knex } from 'knex';

/**
 * Dashboard sessions (issue 25): one row per signed-in browser. `id` is the SHA-256 (hex) of the
 * session token the cookie carries; the token itself is never stored.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ui_sessions', (t) => {
    t.string('id', 64).primary();
    t.string('login', 200).notNullable();
    t.string('via', 16).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('last_seen_at').notNullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ui_sessions');
}
