import type { Knex } from 'knex';

/**
 * Operator commands (operator-api 2.3): the row is the command the bridge consumes; its events (created,
 * status changes) are kept beside it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operator_commands', (t) => {
    t.string('id', 200).primary();
    t.string('kind', 32).notNullable();
    // queued → running → succeeded | failed
    t.string('status', 16).notNullable();
    t.text('payload').notNullable();
    t.string('repo', 300).nullable();
    t.integer('pr_number').nullable();
    t.string('review_key', 600).nullable();
    t.string('delivery_id', 200).nullable();
    t.string('reason', 1000).nullable();
    t.string('actor', 200).notNullable();
    t.string('requested_actor_id', 200).nullable();
    t.text('error').nullable();
    t.text('result').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('started_at').nullable();
    t.bigInteger('completed_at').nullable();
    t.index(['status', 'created_at']);
    t.index(['created_at']);
    t.index(['repo', 'pr_number']);
  });
  await knex.schema.createTable('operator_command_events', (t) => {
    t.bigIncrements('id').primary();
    t.string('command_id', 200).notNullable();
    t.string('type', 32).notNullable();
    t.string('from_status', 16).nullable();
    t.string('to_status', 16).nullable();
    t.string('actor', 200).notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['command_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('operator_command_events');
  await knex.schema.dropTable('operator_commands');
}
