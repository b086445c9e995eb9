import type { Knex } from 'knex';

/**
 * Ingress and review bookkeeping. Timestamps are BIGINT milliseconds since the epoch (UTC) on both
 * dialects; JSON documents are TEXT so both dialects store the exact bytes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('deliveries', (t) => {
    t.string('id', 200).primary();
    t.string('event', 100).notNullable();
    t.string('action', 100).nullable();
    // received → queued → processed | failed; or ignored
    t.string('status', 32).notNullable();
    t.string('outcome', 64).nullable();
    t.string('repo', 300).nullable();
    t.integer('pr_number').nullable();
    t.bigInteger('installation_id').nullable();
    t.text('payload').notNullable();
    t.integer('payload_bytes').notNullable();
    t.integer('attempts').notNullable().defaultTo(1);
    t.text('error').nullable();
    t.bigInteger('received_at').notNullable();
    t.bigInteger('processed_at').nullable();
    t.index(['received_at']);
    t.index(['status', 'received_at']);
    t.index(['repo', 'pr_number']);
  });

  await knex.schema.createTable('dedupe_markers', (t) => {
    t.string('key', 255).primary();
    t.bigInteger('expires_at').notNullable();
    t.index(['expires_at']);
  });

  await knex.schema.createTable('repositories', (t) => {
    t.string('full_name', 300).primary();
    t.string('owner', 150).notNullable();
    t.string('name', 150).notNullable();
    t.bigInteger('installation_id').nullable();
    t.boolean('installed').notNullable().defaultTo(true);
    // Operator configuration (operator-api 2.8), JSON; null when never configured.
    t.text('config').nullable();
    // Last standalone `.github/verdict.yml` seen, resolved with defaults (review-engine 2.7), JSON.
    t.text('standalone_config').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });

  await knex.schema.createTable('pull_requests', (t) => {
    t.string('repo', 300).notNullable();
    t.integer('number').notNullable();
    t.primary(['repo', 'number']);
    t.string('head_sha', 64).nullable();
    t.string('base_ref', 255).nullable();
    t.string('head_ref', 255).nullable();
    t.text('title').nullable();
    t.text('body').nullable();
    t.string('author', 150).nullable();
    t.boolean('draft').notNullable().defaultTo(false);
    t.text('labels').nullable();
    t.string('state', 32).nullable();
    t.integer('changed_files').nullable();
    t.bigInteger('installation_id').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['updated_at']);
  });

  await knex.schema.createTable('jobs', (t) => {
    t.bigIncrements('id').primary();
    t.string('queue', 64).notNullable();
    t.string('kind', 64).notNullable();
    t.string('job_key', 500).nullable();
    t.text('payload').notNullable();
    // waiting → running → done; running → waiting (retry) | dead
    t.string('status', 16).notNullable();
    t.integer('priority').notNullable().defaultTo(0);
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('max_attempts').notNullable().defaultTo(8);
    t.bigInteger('run_at').notNullable();
    t.string('lease_owner', 255).nullable();
    t.bigInteger('lease_expires_at').nullable();
    t.string('receipt', 64).nullable();
    t.text('last_error').nullable();
    t.string('dead_reason', 64).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['queue', 'status', 'priority', 'run_at', 'id'], 'jobs_claim_idx');
    t.index(['job_key']);
  });
  // At most one waiting job per key: the "replace_waiting" slot. Running jobs are not constrained.
  await knex.raw(`CREATE UNIQUE INDEX jobs_waiting_key_uq ON jobs (job_key) WHERE status = 'waiting'`);

  await knex.schema.createTable('runs', (t) => {
    t.string('id', 64).primary();
    t.string('review_key', 600).notNullable().unique();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.string('head_sha', 64).nullable();
    t.string('variant', 200).nullable();
    t.string('trigger', 64).notNullable();
    // queued → running → completed | failed | skipped; queued → superseded
    t.string('status', 32).notNullable();
    t.string('analysis_status', 32).notNullable().defaultTo('pending');
    t.string('publish_status', 32).notNullable().defaultTo('pending');
    t.string('reason', 64).nullable();
    t.bigInteger('installation_id').nullable();
    t.string('delivery_id', 200).nullable();
    t.bigInteger('job_id').nullable();
    t.text('error').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['repo', 'pr_number', 'created_at']);
    t.index(['status', 'updated_at']);
    t.index(['updated_at']);
  });

  await knex.schema.createTable('comment_commands', (t) => {
    // `{owner}/{repo}#{pr}@{commentId}`
    t.string('key', 400).primary();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.bigInteger('comment_id').notNullable();
    t.string('verb', 16).notNullable();
    t.string('author', 150).notNullable();
    t.string('association', 32).nullable();
    t.string('outcome', 64).notNullable();
    t.string('delivery_id', 200).nullable();
    t.string('run_id', 64).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['repo', 'pr_number']);
  });

  // One row per (repository, pull request, distinct config error): an invalid `.github/verdict.yml` is
  // reported once on a PR, not on every event.
  await knex.schema.createTable('config_error_reports', (t) => {
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.string('fingerprint', 64).notNullable();
    t.text('message').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['repo', 'pr_number', 'fingerprint']);
  });

  // Every attempt to publish something to GitHub (review, check run, description, reply, reaction).
  await knex.schema.createTable('publications', (t) => {
    t.bigIncrements('id').primary();
    t.string('run_id', 64).nullable();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').nullable();
    t.string('kind', 32).notNullable();
    t.string('mode', 16).notNullable();
    t.string('status', 16).notNullable();
    t.string('receipt', 100).nullable();
    t.text('body').nullable();
    t.text('error').nullable();
    t.bigInteger('created_at').notNullable();
    t.index(['run_id']);
    t.index(['repo', 'pr_number', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'publications',
    'config_error_reports',
    'comment_commands',
    'runs',
    'jobs',
    'pull_requests',
    'repositories',
    'dedupe_markers',
    'deliveries',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
