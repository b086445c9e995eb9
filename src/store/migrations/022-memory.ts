import type { Knex } from 'knex';

/**
 * Memory (NAMES.md "Memory"): contexts gain their list of path globs (`paths`, JSON, empty = every path)
 * in place of the single `path_glob`, where they came from (`source`), a `revision` and who created them;
 * clusters (findings that look alike and what reviewers did with them) and knowledge documents (notes on a
 * part of a repository, one per repository and path) are new.
 *
 * Repositories are compared case-insensitively (GitHub's are): each table has an index on `lower(repo)`,
 * an expression index both SQLite (3.9+) and PostgreSQL use for `WHERE lower(repo) = ?`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('memory_contexts', (t) => {
    t.text('paths').notNullable().defaultTo('[]');
    t.string('source', 16).notNullable().defaultTo('operator');
    t.integer('revision').notNullable().defaultTo(1);
    t.string('created_by', 200).notNullable().defaultTo('unknown');
  });
  const rows: Array<{ id: string; path_glob: string }> = await knex('memory_contexts')
    .select('id', 'path_glob')
    .whereNotNull('path_glob');
  for (const row of rows) {
    await knex('memory_contexts')
      .where({ id: row.id })
      .update({ paths: JSON.stringify([row.path_glob]) });
  }
  await knex.schema.alterTable('memory_contexts', (t) => t.dropColumn('path_glob'));
  await knex.raw('CREATE INDEX memory_contexts_repo_lower ON memory_contexts (lower(repo))');

  await knex.schema.createTable('memory_clusters', (t) => {
    t.string('id', 64).primary();
    t.string('repo', 300).notNullable();
    t.string('label', 300).notNullable();
    /** `none`, `suppress` or `keep`. */
    t.string('action', 16).notNullable().defaultTo('none');
    /** How many findings were folded into the cluster. */
    t.integer('size').notNullable().defaultTo(0);
    t.string('exemplar_title', 300).notNullable();
    t.text('exemplar_body').notNullable();
    t.string('exemplar_category', 64).nullable();
    t.string('exemplar_path', 1000).nullable();
    t.integer('feedback_up').notNullable().defaultTo(0);
    t.integer('feedback_down').notNullable().defaultTo(0);
    t.integer('feedback_dismissed').notNullable().defaultTo(0);
    t.integer('feedback_addressed').notNullable().defaultTo(0);
    t.integer('revision').notNullable().defaultTo(1);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await knex.raw('CREATE INDEX memory_clusters_repo_lower ON memory_clusters (lower(repo))');

  await knex.schema.createTable('memory_knowledge', (t) => {
    t.string('repo', 300).notNullable();
    /** A file or directory of the repository (no leading or trailing `/`), or `/` for all of it. */
    t.string('path', 500).notNullable();
    t.string('title', 300).notNullable();
    t.text('body').notNullable();
    /** The body's length in UTF-8 bytes (the list shows it without reading bodies). */
    t.integer('bytes').notNullable();
    t.integer('revision').notNullable().defaultTo(1);
    t.string('updated_by', 200).notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  // One document per repository (in any spelling) and path; also the index of a repository's documents.
  await knex.raw('CREATE UNIQUE INDEX memory_knowledge_repo_path ON memory_knowledge (lower(repo), path)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('memory_knowledge');
  await knex.schema.dropTable('memory_clusters');
  await knex.raw('DROP INDEX memory_contexts_repo_lower');
  await knex.schema.alterTable('memory_contexts', (t) => t.string('path_glob', 500).nullable());
  // A context with several globs keeps its first (the earlier schema had one).
  const rows: Array<{ id: string; paths: string }> = await knex('memory_contexts').select('id', 'paths');
  for (const row of rows) {
    const paths = JSON.parse(row.paths) as string[];
    if (paths.length > 0) await knex('memory_contexts').where({ id: row.id }).update({ path_glob: paths[0] });
  }
  await knex.schema.alterTable('memory_contexts', (t) => {
    t.dropColumn('created_by');
    t.dropColumn('revision');
    t.dropColumn('source');
    t.dropColumn('paths');
  });
}
