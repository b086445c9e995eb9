import type { Knex } from 'knex';

/**
 * Findings that were found but not published (NAMES.md "Verification of findings"): a finding keeps a
 * `status`, `published` (every finding so far, and the default) or `withheld` (the verification stage
 * refuted it or scored it under the threshold), and `status_reason`, why it was withheld in the
 * verifier's words. Reads of findings that stand for what was posted ask for `published` ones.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('findings', (t) => {
    t.string('status', 16).notNullable().defaultTo('published');
    t.text('status_reason').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('findings', (t) => {
    t.dropColumn('status_reason');
    t.dropColumn('status');
  });
}
