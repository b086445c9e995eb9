import type { Knex } from 'knex';
import { numberOrNull, toBool, type Dialect } from './db.js';
import type { PullRequestRecord } from './pull-requests.js';
import { loadReportSource, type ReportSource } from './report-source.js';
import { usageReport, type UsageReport } from './usage.js';
import type { ReportLimits } from '../reports/limits.js';

/**
 * The operator's read models: what the snapshot, the PR detail, analytics, usage and reports read, as
 * typed rows. The operator routes, the tRPC facade, the reports and the CLI call these; none of them
 * writes SQL.
 */

export type PullRequestListItem = Pick<
  PullRequestRecord,
  'repo' | 'number' | 'title' | 'author' | 'headSha' | 'baseRef' | 'draft' | 'state' | 'updatedAt'
> & {
  latestRun: {
    id: string;
    reviewKey: string;
    status: string;
    reason: string | null;
    updatedAt: number | null;
  } | null;
};

export type PullRequestFilter = { q?: string; repo?: string; status?: string };

export type DeliveryEventRow = {
  id: string;
  event: string;
  action: string | null;
  status: string;
  outcome: string | null;
  receivedAt: number;
};

export type CommandEventRow = { id: string; kind: string; status: string; actor: string; createdAt: number };

export type FailureReason = { source: 'queue' | 'review' | 'webhook'; reason: string; count: number };

type Raw = Record<string, unknown>;
const str = (v: unknown) => (v as string | null) ?? null;

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

const PR_COLUMNS = [
  'repo',
  'number',
  'title',
  'author',
  'head_sha',
  'base_ref',
  'draft',
  'state',
  'updated_at',
];

/** The latest run of the pull request aliased `alias` (an index probe on runs (repo, pr_number, created_at, id)). */
const latestRunSql = (alias: string) =>
  `(SELECT r2.id FROM runs r2 WHERE r2.repo = ${alias}.repo AND r2.pr_number = ${alias}.number ORDER BY r2.created_at DESC, r2.id DESC LIMIT 1)`;

export class OperatorReadModels {
  constructor(
    private readonly knex: Knex,
    private readonly dialect: Dialect,
  ) {}

  /**
   * The most recently updated pull requests with their latest run, from indexed columns only (never
   * payloads or bodies), at most `limit`. `q` matches repository, title or author (case-insensitive),
   * `repo` is exact, `status` is the latest run's status. One walk of the covering index
   * `pull_requests_recent_idx`, newest first; with `status` the walk goes on until the page is full.
   */
  async pullRequestPage(filter: PullRequestFilter, limit: number): Promise<PullRequestListItem[]> {
    const knex = this.knex;
    const q = filter.q?.trim().toLowerCase();
    const like = q ? `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
    let page = knex('pull_requests as pp')
      .select(...PR_COLUMNS.map((c) => `pp.${c}`), knex.raw(`${latestRunSql('pp')} as latest_run_id`))
      .orderBy('pp.updated_at', 'desc')
      .orderBy('pp.repo', 'desc')
      .orderBy('pp.number', 'desc');
    if (filter.repo) page = page.where('pp.repo', filter.repo);
    if (like) {
      page = page.where((w) =>
        w
          .whereRaw(`LOWER(pp.repo) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(COALESCE(pp.title, '')) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(COALESCE(pp.author, '')) LIKE ? ESCAPE '\\'`, [like]),
      );
    }
    if (filter.status) {
      page = page.whereExists(
        knex('runs as rs')
          .select(knex.raw('1'))
          .whereRaw(`rs.id = ${latestRunSql('pp')}`)
          .where('rs.status', filter.status),
      );
    }
    page = page.limit(limit);
    const rows: Raw[] = await knex
      .from(page.as('p'))
      .leftJoin('runs as r', 'r.id', 'p.latest_run_id')
      .select(
        ...PR_COLUMNS.map((c) => `p.${c}`),
        'r.id as run_id',
        'r.review_key',
        'r.status as run_status',
        'r.reason as run_reason',
        'r.updated_at as run_updated_at',
      )
      .orderBy('p.updated_at', 'desc')
      .orderBy('p.repo', 'desc')
      .orderBy('p.number', 'desc');
    return rows.map((r) => ({
      repo: String(r.repo),
      number: Number(r.number),
      title: str(r.title),
      author: str(r.author),
      headSha: str(r.head_sha),
      baseRef: str(r.base_ref),
      draft: toBool(r.draft),
      state: str(r.state),
      updatedAt: Number(r.updated_at),
      latestRun:
        r.run_id === null || r.run_id === undefined
          ? null
          : {
              id: String(r.run_id),
              reviewKey: String(r.review_key),
              status: String(r.run_status),
              reason: str(r.run_reason),
              updatedAt: numberOrNull(r.run_updated_at),
            },
    }));
  }

  /** The newest `limit` webhook deliveries and operator commands of one pull request (its events). */
  async pullRequestEvents(
    repo: string,
    number: number,
    limit: number,
  ): Promise<{ deliveries: DeliveryEventRow[]; commands: CommandEventRow[] }> {
    const [deliveries, commands]: [Raw[], Raw[]] = await Promise.all([
      this.knex('deliveries')
        .where({ repo, pr_number: number })
        .select('id', 'event', 'action', 'status', 'outcome', 'received_at')
        .orderBy('received_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit),
      this.knex('operator_commands')
        .where({ repo, pr_number: number })
        .select('id', 'kind', 'status', 'actor', 'created_at')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit),
    ]);
    return {
      deliveries: deliveries.map((d) => ({
        id: String(d.id),
        event: String(d.event),
        action: str(d.action),
        status: String(d.status),
        outcome: str(d.outcome),
        receivedAt: Number(d.received_at),
      })),
      commands: commands.map((c) => ({
        id: String(c.id),
        kind: String(c.kind),
        status: String(c.status),
        actor: String(c.actor),
        createdAt: Number(c.created_at),
      })),
    };
  }

  /** The stamp of a PR detail (see `STAMP`): what the detail shows has changed when this has. */
  async pullRequestDetailStamp(repo: string, number: number): Promise<string> {
    const result = (await this.knex.raw(`select ${STAMP} as stamp`, { repo, number })) as
      Array<{ stamp: string }> | { rows: Array<{ stamp: string }> };
    const rows = Array.isArray(result) ? result : result.rows;
    return rows[0]!.stamp;
  }

  /** Rows per status of `table`. */
  async countByStatus(table: 'deliveries' | 'runs' | 'operator_commands'): Promise<Record<string, number>> {
    const rows: Raw[] = await this.knex(table).select('status').count({ n: '*' }).groupBy('status');
    return Object.fromEntries(rows.map((r) => [String(r.status), Number(r.n)]));
  }

  /** The `run_at` of the oldest waiting job of each queue. */
  async oldestWaitingRunAt(): Promise<Map<string, number>> {
    const rows: Raw[] = await this.knex('jobs')
      .where('status', 'waiting')
      .select('queue')
      .min({ runAt: 'run_at' })
      .groupBy('queue');
    return new Map(rows.map((r) => [String(r.queue), Number(r.runAt)]));
  }

  /**
   * The most frequent failure reasons of dead jobs, failed runs and failed deliveries, `limit` of each
   * source, most frequent first (ties by reason).
   */
  async failureReasons(limit: number): Promise<FailureReason[]> {
    const reasons: FailureReason[] = [];
    const grouped = async (
      source: FailureReason['source'],
      table: string,
      column: string,
      status: string,
    ) => {
      const rows: Raw[] = await this.knex(table)
        .where({ status })
        .whereNotNull(column)
        .select(column)
        .count({ n: '*' })
        .groupBy(column)
        .orderBy('n', 'desc')
        .limit(limit);
      for (const r of rows) reasons.push({ source, reason: String(r[column]), count: Number(r.n) });
    };
    await grouped('queue', 'jobs', 'dead_reason', 'dead');
    await grouped('review', 'runs', 'error', 'failed');
    await grouped('webhook', 'deliveries', 'error', 'failed');
    return reasons.sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  }

  /** Model usage and cost between `fromMs` and `toMsExclusive` (operator-api 4.2). */
  usage(fromMs: number, toMsExclusive: number): Promise<UsageReport> {
    return usageReport(this.knex, fromMs, toMsExclusive);
  }

  /** The bounded source history of a report (413 over a bound). */
  reportSource(scope: { repo: string | null }, limits: ReportLimits): Promise<ReportSource> {
    return loadReportSource(this.knex, this.dialect, scope, limits);
  }
}
