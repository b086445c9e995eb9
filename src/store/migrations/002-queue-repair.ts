import type { Knex } from 'knex';

/**
 * Queue repair and review dispatch: the operator audit log (queue repair now; keys, policy, memory and
 * SCM changes later) and the dispatch lease of a run, so two jobs for one review key never run it at once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_events', (t) => {
    t.bigIncrements('id').primary();
    t.string('actor', 200).notNullable();
    t.string('action', 100).notNullable();
    t.string('target', 600).nullable();
    t.string('reason', 1000).nullable();
    t.text('detail').nullable();
    t.bigInteger('created_at').notNullable();
    t.index(['created_at']);
    t.index(['action', 'created_at']);
  });
  await knex.schema.alterTable('runs', (t) => {
    t.string('dispatch_receipt', 64).nullable();
  });
  await knex.schema.alterTable('jobs', (t) => {
    t.index(['status', 'lease_expires_at'], 'jobs_lease_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('jobs', (t) => {
    t.dropIndex(['status', 'lease_expires_at'], 'jobs_lease_idx');
  });
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('dispatch_receipt');
  });
  await knex.schema.dropTable('audit_events');
}
