import type { Knex } from 'knex';

/**
 * Findings withheld by memory (NAMES.md "Memory", "Suppression"): one row per run and finding a review
 * stored as `suppressed` because it was like a suppressing cluster of its repository (`cluster_id`) or
 * like a finding dismissed on the same pull request (`cluster_id` null). The row is the finding's joining
 * of its cluster, counted once in the cluster's `size` however often the run is retried: the pair
 * (`run_id`, `fingerprint`) is unique.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('memory_withheld', (t) => {
    t.bigIncrements('id').primary();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.string('run_id', 64).notNullable();
    t.string('fingerprint', 64).notNullable();
    t.string('cluster_id', 64).nullable();
    /** `cluster` (like a suppressing cluster) or `dismissed` (like a finding dismissed on the PR). */
    t.string('reason', 16).notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['run_id', 'fingerprint']);
    t.index(['cluster_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('memory_withheld');
}
