import type { Knex } from 'knex';

/** Scoped API keys (operator-api 2.2): only the token's SHA-256 and its display prefix are stored. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.string('id', 64).primary();
    t.string('name', 200).notNullable();
    t.text('scopes').notNullable();
    t.string('token_hash', 64).notNullable().unique();
    t.string('prefix', 14).notNullable();
    t.string('created_by', 200).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('revoked_at').nullable();
    t.string('revoked_by', 200).nullable();
    t.bigInteger('last_used_at').nullable();
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
}
