import type { Knex } from 'knex';

/**
 * A review is published once, even across a crash (docs/publication.md "Published once"). Each ledger
 * row of a publication that must not be repeated names its `step` (`review`, `check:start`,
 * `thread_reply:<fingerprint>`, ...), and is written as `sending` before the call to GitHub, then
 * finished as `published` or `failed`. A retried publication reads the step's last row: `published`
 * means done, `sending` (or a failure that does not say whether GitHub acted) means "look on GitHub
 * before sending again".
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('publications', (t) => {
    t.string('step', 200).nullable();
    t.index(['repo', 'pr_number', 'step']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('publications', (t) => {
    t.dropIndex(['repo', 'pr_number', 'step']);
    t.dropColumn('step');
  });
}
