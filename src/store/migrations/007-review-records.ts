import type { Knex } from 'knex';

/**
 * What a review leaves behind (review-engine 1.2, operator-api 2.5, 2.6): its findings, and one trace per
 * run with its spans (stages, model calls, chat replies). Span input/output bodies are never stored.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('findings', (t) => {
    t.bigIncrements('id').primary();
    t.string('run_id', 64).notNullable();
    t.string('review_key', 600).notNullable();
    t.string('repo', 300).notNullable();
    t.integer('pr_number').notNullable();
    t.string('head_sha', 64).nullable();
    t.string('severity', 16).notNullable();
    t.string('category', 200).notNullable();
    // Location fields are nullable: never invented when the producer omitted them.
    t.string('path', 1000).nullable();
    t.integer('line').nullable();
    t.text('title').notNullable();
    t.text('body').notNullable();
    t.string('fingerprint', 64).notNullable();
    // Inside a changed path, or an outside-diff finding.
    t.boolean('outside_diff').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
    t.index(['run_id']);
    t.index(['repo', 'pr_number', 'created_at']);
    t.index(['created_at']);
    t.index(['fingerprint']);
  });

  await knex.schema.createTable('traces', (t) => {
    t.string('id', 64).primary();
    t.string('run_id', 64).nullable();
    t.string('review_key', 600).nullable();
    t.string('repo', 300).nullable();
    t.integer('pr_number').nullable();
    t.string('name', 200).notNullable();
    // running → ok | error
    t.string('status', 16).notNullable();
    t.bigInteger('started_at').notNullable();
    t.bigInteger('ended_at').nullable();
    t.text('attributes').nullable();
    t.index(['started_at']);
    t.index(['repo', 'pr_number', 'started_at']);
    t.index(['run_id']);
    t.index(['review_key']);
    t.index(['status', 'started_at']);
  });

  await knex.schema.createTable('spans', (t) => {
    t.bigIncrements('seq').primary();
    t.string('trace_id', 64).notNullable();
    t.string('span_id', 64).notNullable();
    t.string('parent_span_id', 64).nullable();
    // stage | model | chat | tool | publish
    t.string('kind', 32).notNullable();
    t.string('name', 200).notNullable();
    t.string('status', 16).notNullable();
    t.string('provider', 64).nullable();
    t.string('model', 200).nullable();
    // Telemetry: null means unknown (not reported), never zero.
    t.bigInteger('input_tokens').nullable();
    t.bigInteger('output_tokens').nullable();
    t.double('cost_usd').nullable();
    t.bigInteger('started_at').notNullable();
    t.bigInteger('ended_at').nullable();
    t.text('attributes').nullable();
    t.unique(['trace_id', 'span_id']);
    t.index(['kind', 'started_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['spans', 'traces', 'findings']) await knex.schema.dropTableIfExists(table);
}
