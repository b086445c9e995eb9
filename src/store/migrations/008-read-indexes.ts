import type { Knex } from 'knex';

/**
 * Indexes for the operator reads at scale. The snapshot pages pull requests newest first from one
 * covering index (its tie breakers and every column it shows, so neither a sort of the whole table nor a
 * read of the wide rows with their bodies), and finds each one's latest run by an index walk.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('pull_requests', (t) => {
    t.index(
      ['updated_at', 'repo', 'number', 'title', 'author', 'head_sha', 'base_ref', 'draft', 'state'],
      'pull_requests_recent_idx',
    );
  });
  await knex.schema.alterTable('runs', (t) => {
    t.index(['repo', 'pr_number', 'created_at', 'id'], 'runs_pr_latest_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => t.dropIndex([], 'runs_pr_latest_idx'));
  await knex.schema.alterTable('pull_requests', (t) => t.dropIndex([], 'pull_requests_recent_idx'));
}
