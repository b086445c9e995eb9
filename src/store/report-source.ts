import type { Knex } from 'knex';
import { numberOrNull, parseJson, type Dialect } from './db.js';
import { tooLarge } from '../reports/errors.js';
import type { ReportLimits } from '../reports/limits.js';
import type { FindingRecord } from './findings.js';
import type { PullRequestRecord } from './pull-requests.js';
import { claimsOf, type ClaimEvidence, type ResolutionClaim } from './report-claims.js';

/**
 * Reads the source history of a report, bounded (operator-api 8). The history is narrowed by repository
 * only: a finding's status depends on later reviews of its pull request, and a comparison needs the
 * preceding period, so a date range does not shrink what must be read. Every bound is checked with a
 * COUNT (or SUM of byte lengths) before the rows are read; the reads use the indexed `repo` columns and
 * take only the columns the report shows: finding text, and from a run's stored analysis three small
 * extracts (coverage flag, accepted closure claims, their evidence), never the whole payload.
 *
 * This is the report's own read model: the SQL stays in this file (dialect differences included), the
 * way `store/usage.ts` holds the usage report's.
 */

export type { ClaimEvidence, ResolutionClaim };

export type SourceRun = {
  id: string;
  repo: string;
  prNumber: number;
  headSha: string | null;
  status: string;
  analysisStatus: string;
  verdict: string | null;
  confidence: number | null;
  createdAt: number;
  /** The analysis's semantic coverage: null when the run has none on record. */
  coverageComplete: boolean | null;
  /** Accepted closure claims with their recorded evidence; null when the result records none at all. */
  claims: ResolutionClaim[] | null;
};

/** A stored finding as the report reads it (the store's record without key, head and still-open flag). */
export type SourceFinding = Omit<
  FindingRecord,
  'reviewKey' | 'headSha' | 'stillOpen' | 'endLine' | 'suggestion' | 'lineText' | 'status' | 'statusReason'
>;

export type SourcePr = Pick<
  PullRequestRecord,
  'repo' | 'number' | 'title' | 'author' | 'state' | 'headSha' | 'draft'
>;

export type SourceComment = {
  /** `ledger:<publication id>` or `command:<comment command key>`. */
  id: string;
  source: 'ledger' | 'command';
  /** Ledger: `review`, `reply`, `comment`; a stored comment command: `command`. */
  kind: string;
  repo: string;
  prNumber: number | null;
  runId: string | null;
  /** The login that wrote it (comment commands); null for what Verdict published. */
  author: string | null;
  /** `live` or `shadow` (ledger); null for comment commands. */
  mode: string | null;
  /** Ledger: `published`, `shadowed`, `failed`, `sending` (interrupted); comment command: its outcome. */
  status: string;
  /** The `@verdict` verb of a comment command. */
  verb: string | null;
  /** The first `COMMENT_EXCERPT_CHARS` characters of the body; null when there is none. */
  body: string | null;
  bodyLength: number | null;
  createdAt: number;
};

export type SourceTrace = { runId: string | null; status: string; startedAt: number; endedAt: number | null };

export type SourceRepository = { fullName: string; installed: boolean; enabled: boolean | null };

/**
 * A line comment Verdict posted on GitHub (a review thread that is not a shadow one) and the feedback
 * counted on it so far (NAMES.md "Feedback and learning"): reactions, and whether its finding was
 * dismissed or addressed (0 or 1 each).
 */
export type SourceLineComment = {
  repo: string;
  prNumber: number;
  commentId: string;
  createdAt: number;
  up: number;
  down: number;
  dismissed: number;
  addressed: number;
};

export type ReportSource = {
  scope: { repo: string | null };
  counts: Record<
    'runs' | 'heads' | 'configs' | 'ledgerRows' | 'traces' | 'findings' | 'findingsPerRun' | 'findingsPerPr',
    number
  >;
  inputBytes: number;
  prs: SourcePr[];
  runs: SourceRun[];
  findings: SourceFinding[];
  comments: SourceComment[];
  traces: SourceTrace[];
  repositories: SourceRepository[];
  lineComments: SourceLineComment[];
};

/** Publication kinds that are text posted on the pull request (the report's comments). */
export const COMMENT_KINDS = ['review', 'reply', 'comment'] as const;
/** How much of a comment body the report carries. */
export const COMMENT_EXCERPT_CHARS = 2000;
const ANALYSED = ['analysed', 'degraded'];

type Raw = Record<string, unknown>;
const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true' || v === 't';

/** The byte length of a text column, 0 for null (the same SQL in both dialects). */
const bytes = (col: string) => `COALESCE(octet_length(${col}), 0)`;

/** Dialect SQL for the runs with the three extracts of their stored analysis. */
function runsSql(dialect: Dialect): string {
  const columns = `r.id, r.repo, r.pr_number, r.head_sha, r.status, r.analysis_status, r.verdict, r.confidence,
    r.created_at`;
  const analysed = `r.analysis_status IN ('analysed', 'degraded')`;
  if (dialect === 'pg') {
    return `SELECT ${columns}, j.doc #>> '{coverage,complete}' AS coverage_complete,
          (j.doc #> '{priorFindings,resolved}')::text AS resolved,
          (j.doc #> '{output,priorFindingDispositions}')::text AS dispositions
        FROM runs r LEFT JOIN LATERAL (SELECT CASE WHEN ${analysed} THEN r.result::jsonb END AS doc) j ON true`;
  }
  const valid = `${analysed} AND json_valid(r.result)`;
  return `SELECT ${columns},
        CASE WHEN ${valid} THEN json_extract(r.result, '$.coverage.complete') END AS coverage_complete,
        CASE WHEN ${valid} THEN json_extract(r.result, '$.priorFindings.resolved') END AS resolved,
        CASE WHEN ${valid} THEN json_extract(r.result, '$.output.priorFindingDispositions') END AS dispositions
      FROM runs r`;
}

const n = (row: Raw | undefined, key = 'n') => Number(row?.[key] ?? 0);

/** The queries of one report, narrowed to its repository, and the input bytes read so far. */
type Reads = {
  knex: Knex;
  byRepo: (q: Knex.QueryBuilder, column?: string) => Knex.QueryBuilder;
  postedFindings: () => Knex.QueryBuilder;
  inputBytes: number;
};

/**
 * Counts, checks every bound, then reads. Throws a 413 `ReportError` naming the first bound crossed.
 */
export async function loadReportSource(
  knex: Knex,
  dialect: Dialect,
  scope: { repo: string | null },
  limits: Readonly<ReportLimits>,
): Promise<ReportSource> {
  const repo = scope.repo;
  const byRepo = (q: Knex.QueryBuilder, column = 'repo') => (repo ? q.where(column, repo) : q);
  // Reports count the findings that were posted: one withheld after verification never reached the PR.
  const postedFindings = () => byRepo(knex('findings')).where('status', 'published');
  const db: Reads = { knex, byRepo, postedFindings, inputBytes: 0 };
  const checkBytes = () => {
    if (db.inputBytes > limits.inputBytes)
      throw tooLarge('inputBytes', db.inputBytes, limits.inputBytes, scope);
  };
  const { counts, headsQueried } = await countSource(db, scope, limits);
  checkBytes();

  // 2. Reads: indexed by repository, only the columns shown.
  const runs = await readRuns(db, dialect, repo);
  if (!headsQueried) counts.heads = new Set(runs.map((r) => `${r.repo}#${r.prNumber}@${r.headSha}`)).size;
  checkBytes();
  const findings = await readFindings(db);
  const prs = await readPrs(db);
  checkBytes();
  const comments = await readComments(db);
  checkBytes();
  const traces = await readTraces(db);
  const repositories = await readRepositories(db);
  checkBytes();
  const lineComments = await readLineComments(db);
  checkBytes();
  const { inputBytes } = db;
  return { scope, counts, inputBytes, prs, runs, findings, comments, traces, repositories, lineComments };
}

/** 1. The counts, each checked against its bound; the findings' bytes go to `db.inputBytes`. */
async function countSource(
  db: Reads,
  scope: { repo: string | null },
  limits: Readonly<ReportLimits>,
): Promise<{ counts: ReportSource['counts']; headsQueried: boolean }> {
  const { knex, byRepo, postedFindings } = db;
  const check = (bound: keyof ReportLimits, found: number) => {
    if (found > limits[bound]) throw tooLarge(bound, found, limits[bound], scope);
  };
  // 1. Counts, cheapest and most telling first; nothing is read before all of them pass.
  const counts: ReportSource['counts'] = {
    runs: 0,
    heads: 0,
    configs: 0,
    ledgerRows: 0,
    traces: 0,
    findings: 0,
    findingsPerRun: 0,
    findingsPerPr: 0,
  };
  /** Counts one bound with its query and checks it. */
  const count = async (bound: keyof ReportSource['counts'], row: PromiseLike<Raw | undefined>) => {
    counts[bound] = n(await row);
    check(bound, counts[bound]);
  };
  const total = (q: Knex.QueryBuilder) => q.count({ n: '*' }).first();
  await count('runs', total(byRepo(knex('runs'))));
  // Heads are never more than runs: within the runs bound they need no query of their own (they are
  // counted from the runs read below).
  const headsQueried = counts.runs > limits.heads;
  if (headsQueried) {
    const heads = byRepo(knex('runs').distinct('repo', 'pr_number', 'head_sha')).as('h');
    await count('heads', total(knex.from(heads)));
  }
  await count('configs', total(byRepo(knex('repositories'), 'full_name')));
  const ledger = n(await total(byRepo(knex('publications')).whereIn('kind', [...COMMENT_KINDS])));
  const commands = n(await total(byRepo(knex('comment_commands'))));
  counts.ledgerRows = ledger + commands;
  check('ledgerRows', counts.ledgerRows);
  await count('traces', total(byRepo(knex('traces'))));
  const findingTotals = await postedFindings()
    .count({ n: '*' })
    .select(
      knex.raw(
        `SUM(${bytes('title')} + ${bytes('body')} + ${bytes('category')} + ${bytes('path')} + ${bytes('severity')} + ${bytes('fingerprint')}) AS bytes`,
      ),
    )
    .first();
  counts.findings = n(findingTotals);
  check('findings', counts.findings);
  const largestGroup = (...columns: string[]) =>
    postedFindings()
      .select(...columns)
      .count({ n: '*' })
      .groupBy(columns)
      .orderBy('n', 'desc')
      .limit(1)
      .first();
  await count('findingsPerRun', largestGroup('run_id'));
  await count('findingsPerPr', largestGroup('repo', 'pr_number'));
  db.inputBytes = n(findingTotals, 'bytes');
  return { counts, headsQueried };
}

async function readRuns(db: Reads, dialect: Dialect, repo: string | null): Promise<SourceRun[]> {
  const { knex } = db;
  const runRows: Raw[] = await knex
    .select('*')
    .from(knex.raw(`(${runsSql(dialect)}${repo ? ' WHERE r.repo = ?' : ''}) AS x`, repo ? [repo] : []));
  return runRows.map((r) => {
    const resolvedText = str(r.resolved);
    const dispositionsText = str(r.dispositions);
    db.inputBytes += (resolvedText?.length ?? 0) + (dispositionsText?.length ?? 0) + 200;
    const coverage = r.coverage_complete;
    return {
      id: String(r.id),
      repo: String(r.repo),
      prNumber: Number(r.pr_number),
      headSha: str(r.head_sha),
      status: String(r.status),
      analysisStatus: String(r.analysis_status),
      verdict: str(r.verdict),
      confidence: numberOrNull(r.confidence),
      createdAt: Number(r.created_at),
      coverageComplete:
        coverage === null || coverage === undefined
          ? null
          : coverage === 1 || coverage === true || coverage === 'true',
      claims: ANALYSED.includes(String(r.analysis_status))
        ? claimsOf(parseJson(resolvedText, null), parseJson(dispositionsText, null))
        : null,
    };
  });
}

async function readFindings({ postedFindings }: Reads): Promise<SourceFinding[]> {
  // Columns aliased to the record's names and normalised in place: one object per row, not two (30,000
  // rows at the bound).
  const findingRows: Raw[] = await postedFindings().select({
    id: 'id',
    runId: 'run_id',
    repo: 'repo',
    prNumber: 'pr_number',
    severity: 'severity',
    category: 'category',
    path: 'path',
    line: 'line',
    title: 'title',
    body: 'body',
    fingerprint: 'fingerprint',
    outsideDiff: 'outside_diff',
    createdAt: 'created_at',
  });
  for (const f of findingRows) {
    if (typeof f.id !== 'number') f.id = Number(f.id);
    if (typeof f.prNumber !== 'number') f.prNumber = Number(f.prNumber);
    if (typeof f.createdAt !== 'number') f.createdAt = Number(f.createdAt);
    if (f.line !== null && typeof f.line !== 'number') f.line = numberOrNull(f.line);
    f.severity = String(f.severity ?? '');
    f.category ??= '';
    f.path ??= null;
    f.title ??= '';
    f.body ??= '';
    f.fingerprint ??= '';
    f.outsideDiff = bool(f.outsideDiff);
  }
  return findingRows as unknown as SourceFinding[];
}

async function readPrs(db: Reads): Promise<SourcePr[]> {
  const { knex, byRepo } = db;
  const prRows: Raw[] = await byRepo(knex('pull_requests as p'), 'p.repo')
    .select('p.repo', 'p.number', 'p.title', 'p.author', 'p.state', 'p.head_sha', 'p.draft')
    .whereExists(
      knex('runs as r')
        .select(knex.raw('1'))
        .whereRaw('r.repo = p.repo')
        .andWhereRaw('r.pr_number = p.number'),
    );
  return prRows.map((p) => {
    db.inputBytes += String(p.title ?? '').length + String(p.author ?? '').length + 100;
    return {
      repo: String(p.repo),
      number: Number(p.number),
      title: str(p.title),
      author: str(p.author),
      state: str(p.state),
      headSha: str(p.head_sha),
      draft: bool(p.draft),
    };
  });
}

async function readComments(db: Reads): Promise<SourceComment[]> {
  const { knex, byRepo } = db;
  const ledgerRows: Raw[] = await byRepo(knex('publications'))
    .whereIn('kind', [...COMMENT_KINDS])
    .select(
      'id',
      'run_id',
      'repo',
      'pr_number',
      'kind',
      'mode',
      'status',
      'created_at',
      knex.raw(`substr(body, 1, ${COMMENT_EXCERPT_CHARS}) AS excerpt`),
      knex.raw(`${bytes('body')} AS body_bytes`),
      knex.raw(`CASE WHEN body IS NULL THEN 0 ELSE 1 END AS has_body`),
    );
  const commandRows: Raw[] = await byRepo(knex('comment_commands')).select(
    'key',
    'repo',
    'pr_number',
    'verb',
    'author',
    'outcome',
    'run_id',
    'created_at',
  );
  const comments: SourceComment[] = [];
  for (const p of ledgerRows) {
    const body = Number(p.has_body) === 1 ? String(p.excerpt ?? '') : null;
    db.inputBytes += (body?.length ?? 0) + 150;
    comments.push({
      id: `ledger:${p.id}`,
      source: 'ledger',
      kind: String(p.kind),
      repo: String(p.repo),
      prNumber: numberOrNull(p.pr_number),
      runId: str(p.run_id),
      author: null,
      mode: str(p.mode),
      status: String(p.status),
      verb: null,
      body,
      bodyLength: body === null ? null : Number(p.body_bytes),
      createdAt: Number(p.created_at),
    });
  }
  for (const c of commandRows) {
    db.inputBytes += String(c.key).length + 150;
    comments.push({
      id: `command:${c.key}`,
      source: 'command',
      kind: 'command',
      repo: String(c.repo),
      prNumber: numberOrNull(c.pr_number),
      runId: str(c.run_id),
      author: str(c.author),
      mode: null,
      status: String(c.outcome),
      verb: str(c.verb),
      body: null,
      bodyLength: null,
      createdAt: Number(c.created_at),
    });
  }
  return comments;
}

async function readTraces(db: Reads): Promise<SourceTrace[]> {
  const { knex, byRepo } = db;
  const traceRows: Raw[] = await byRepo(knex('traces')).select('run_id', 'status', 'started_at', 'ended_at');
  const traces: SourceTrace[] = traceRows.map((t) => ({
    runId: str(t.run_id),
    status: String(t.status),
    startedAt: Number(t.started_at),
    endedAt: numberOrNull(t.ended_at),
  }));
  db.inputBytes += traces.length * 60;
  return traces;
}

async function readRepositories(db: Reads): Promise<SourceRepository[]> {
  const { knex, byRepo } = db;
  const repoRows: Raw[] = await byRepo(knex('repositories'), 'full_name').select(
    'full_name',
    'installed',
    'config',
  );
  return repoRows.map((r) => {
    const config = parseJson<{ enabled?: unknown } | null>(r.config, null);
    db.inputBytes += String(r.config ?? '').length + 100;
    return {
      fullName: String(r.full_name),
      installed: bool(r.installed),
      enabled: config && typeof config.enabled === 'boolean' ? config.enabled : null,
    };
  });
}

async function readLineComments(db: Reads): Promise<SourceLineComment[]> {
  const { knex, byRepo } = db;
  // Line comments and their feedback: one per posted thread, so never more than the findings bound.
  const lineCommentRows: Raw[] = await byRepo(knex('review_threads as t'), 't.repo')
    .leftJoin('memory_feedback as f', (j) =>
      j.on('f.comment_id', '=', 't.comment_id').andOn('f.status', '=', knex.raw('?', ['counted'])),
    )
    .whereNot('t.comment_id', 'like', 'shadow:%')
    .groupBy('t.id', 't.repo', 't.pr_number', 't.comment_id', 't.created_at')
    .select('t.repo', 't.pr_number', 't.comment_id', 't.created_at')
    .select(
      knex.raw('COALESCE(SUM(f.up), 0) AS up'),
      knex.raw('COALESCE(SUM(f.down), 0) AS down'),
      knex.raw('COALESCE(MAX(f.dismissed), 0) AS dismissed'),
      knex.raw('COALESCE(MAX(f.addressed), 0) AS addressed'),
    );
  const lineComments: SourceLineComment[] = lineCommentRows.map((r) => ({
    repo: String(r.repo),
    prNumber: Number(r.pr_number),
    commentId: String(r.comment_id),
    createdAt: Number(r.created_at),
    up: Number(r.up),
    down: Number(r.down),
    dismissed: Number(r.dismissed),
    addressed: Number(r.addressed),
  }));
  db.inputBytes += lineComments.length * 80;
  return lineComments;
}
