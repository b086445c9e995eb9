import type { Knex } from 'knex';

/**
 * The stamp of a PR detail: row counts and last-change columns of every table the detail reads, for
 * this pull request, from indexed rows only (a fraction of the detail's own cost). What the detail shows
 * has changed when this has. Named parameters `:repo`, `:number`; the same text on both dialects.
 */
const STAMP = [
  '(select updated_at from pull_requests where repo = :repo and number = :number)',
  '(select count(*) from runs where repo = :repo and pr_number = :number)',
  '(select max(updated_at) from runs where repo = :repo and pr_number = :number)',
  '(select count(*) from findings where repo = :repo and pr_number = :number)',
  '(select max(id) from findings where repo = :repo and pr_number = :number)',
  '(select count(*) from publications where repo = :repo and pr_number = :number)',
  '(select max(id) from publications where repo = :repo and pr_number = :number)',
  '(select count(*) from deliveries where repo = :repo and pr_number = :number)',
  '(select max(coalesce(processed_at, received_at)) from deliveries where repo = :repo and pr_number = :number)',
  '(select count(*) from operator_commands where repo = :repo and pr_number = :number)',
  '(select max(updated_at) from operator_commands where repo = :repo and pr_number = :number)',
]
  .map((value) => `coalesce(cast(${value} as text), '-')`)
  .join(" || '|' || ");

/** The stamp of the PR detail of `repo#number` (see `STAMP`). */
export async function readPullRequestDetailStamp(knex: Knex, repo: string, number: number): Promise<string> {
  const result = (await knex.raw(`select ${STAMP} as stamp`, { repo, number })) as
    Array<{ stamp: string }> | { rows: Array<{ stamp: string }> };
  const rows = Array.isArray(result) ? result : result.rows;
  return rows[0]!.stamp;
}
