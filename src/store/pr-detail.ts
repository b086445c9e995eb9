import type { Knex } from 'knex';
import type { Db } from './db.js';

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

/**
 * The PR detail (`{pullRequest, runs, findings, events, publications}`) of one pull request as JSON
 * text, built by SQLite's JSON functions in one statement, with its stamp read in the same statement:
 * no row objects, no mapping, no serialization in JavaScript, which made up most of the cost of an
 * uncached PR detail. The detail is null when nothing is known about the pull request (no record and
 * no runs). On a SQLite file it runs in a read worker, off the event loop.
 *
 * It must give exactly what the JavaScript build gives (`pullRequestDetail` in
 * `src/operator/snapshot.ts`, which PostgreSQL uses), field for field, with the same orders and limits
 * and the same readings of stored values (`toBool`, `parseJson`); a test compares the two on the same
 * rows.
 */
export async function readPullRequestDetailSqlite(
  db: Pick<Db, 'reader' | 'readWorkers'>,
  repo: string,
  number: number,
  limits: { findings: number; events: number },
): Promise<{ stamp: string; detail: string | null }> {
  const params = { repo, number, findings: limits.findings, events: limits.events };
  type Row = { stamp: string; detail: string | null };
  const rows = db.readWorkers?.available
    ? await db.readWorkers.all<Row>(PR_DETAIL_SQL, params)
    : ((await db.reader.raw(PR_DETAIL_SQL, params)) as Row[]);
  return { stamp: rows[0]!.stamp, detail: rows[0]!.detail ?? null };
}

/** `toBool` of a stored boolean, as a JSON value (constant branches: SQLite evaluates them once). */
const bool = (column: string) =>
  `case when ${column} in (1, '1', 't') then json('true') else json('false') end`;
/** `parseJson(value, null)` of a stored JSON text, as a JSON value: null when absent or not valid JSON. */
const jsonOrNull = (column: string) => `case when json_valid(${column}) then json(${column}) end`;
/** `json_group_array` of `object` over the rows of `from`, in `order`. */
const array = (object: string, from: string, order: string) =>
  `(select json_group_array(${object} order by ${order}) from ${from})`;

const PR_WHERE = 'repo = :repo and pr_number = :number';

const PULL_REQUEST = `(select json_object(
  'repo', repo, 'number', number, 'headSha', head_sha, 'baseRef', base_ref, 'headRef', head_ref,
  'title', title, 'body', body, 'author', author, 'draft', ${bool('draft')},
  'labels', coalesce(${jsonOrNull('labels')}, json('[]')), 'state', state, 'changedFiles', changed_files,
  'installationId', installation_id, 'createdAt', created_at, 'updatedAt', updated_at)
  from pull_requests where repo = :repo and number = :number)`;

const RUNS = array(
  `json_object(
  'id', id, 'reviewKey', review_key, 'repo', repo, 'prNumber', pr_number, 'headSha', head_sha,
  'variant', variant, 'trigger', "trigger", 'status', status, 'analysisStatus', analysis_status,
  'publishStatus', publish_status, 'reason', reason, 'installationId', installation_id,
  'deliveryId', delivery_id, 'jobId', job_id, 'error', error, 'verdict', verdict, 'confidence', confidence,
  'result', ${jsonOrNull('result')}, 'shadowReview', ${jsonOrNull('shadow_review')},
  'checkRunId', check_run_id, 'publishError', publish_error, 'createdAt', created_at, 'updatedAt', updated_at)`,
  `runs where ${PR_WHERE}`,
  'created_at desc, id desc',
);

const FINDINGS = array(
  `json_object(
  'id', id, 'runId', run_id, 'reviewKey', review_key, 'repo', repo, 'prNumber', pr_number,
  'headSha', head_sha, 'severity', severity, 'category', category, 'path', path, 'line', line,
  'endLine', end_line, 'suggestion', suggestion, 'lineText', line_text, 'title', title, 'body', body, 'fingerprint', fingerprint, 'outsideDiff', ${bool('outside_diff')},
  'stillOpen', ${bool('still_open')}, 'createdAt', created_at)`,
  `(select * from findings where ${PR_WHERE} order by created_at desc, id asc limit :findings)`,
  'created_at desc, id asc',
);

// Deliveries, commands and runs, newest first; at the same time deliveries before commands before runs,
// and within one kind the highest id first: the order of the JavaScript build's stable sort over those
// three lists (each newest first, ties by highest id). The newest 200 of all are the newest 200 of the
// three lists' newest 200 each, so one limit over all of them gives the same events. Rows are sorted on
// their plain columns; each event's object is built after the limit.
const EVENTS = array(
  `case src
    when 0 then json_object('type', 'webhook', 'at', at, 'deliveryId', id, 'event', a, 'action', b,
      'status', c, 'outcome', d)
    when 1 then json_object('type', 'command', 'at', at, 'commandId', id, 'kind', a, 'status', b,
      'actor', c)
    else json_object('type', 'run', 'at', at, 'runId', id, 'reviewKey', a, 'trigger', b, 'status', c)
  end`,
  `(select * from (
    select 0 as src, id, received_at as at, event as a, action as b, status as c, outcome as d
    from deliveries where ${PR_WHERE}
    union all
    select 1, id, created_at, kind, status, actor, null from operator_commands where ${PR_WHERE}
    union all
    select 2, id, created_at, review_key, "trigger", status, null from runs where ${PR_WHERE}
  ) order by at desc, src asc, id desc limit :events)`,
  'at desc, src asc, id desc',
);

const PUBLICATIONS = array(
  `json_object(
  'id', id, 'runId', run_id, 'repo', repo, 'prNumber', pr_number, 'kind', kind, 'mode', mode,
  'status', status, 'receipt', receipt, 'body', body, 'error', error, 'request', ${jsonOrNull('request')},
  'nodeId', node_id, 'createdAt', created_at)`,
  `publications where ${PR_WHERE}`,
  'id asc',
);

const PR_DETAIL_SQL = `select ${STAMP} as stamp, case
  when exists (select 1 from pull_requests where repo = :repo and number = :number)
    or exists (select 1 from runs where ${PR_WHERE})
  then json_object('pullRequest', ${PULL_REQUEST}, 'runs', ${RUNS}, 'findings', ${FINDINGS},
    'events', ${EVENTS}, 'publications', ${PUBLICATIONS})
  end as detail`;
