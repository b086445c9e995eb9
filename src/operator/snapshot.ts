import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import type { Router } from '../http/router.js';
import type { Store } from '../store/index.js';
import { toBool } from '../store/db.js';
import { readPullRequestDetailStamp } from '../store/pr-detail.js';
import {
  defineOperation,
  notFound,
  REPO_PATTERN,
  restOperation,
  searchParam,
  type OperationContext,
  type OperatorDeps,
} from './operation.js';
import { analytics } from './read-routes.js';

export const OPERATOR_SCHEMA = 'verdict.operator.v1';
export const SNAPSHOT_TTL_SECONDS = 15;
export const SNAPSHOT_MAX_ITEMS = 100;
export const SNAPSHOT_VIEWS = ['pull-requests', 'analytics', 'memory', 'settings'] as const;
export type SnapshotView = (typeof SNAPSHOT_VIEWS)[number];
const MAX_PR_EVENTS = 200;

const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };

type Raw = Record<string, unknown>;
const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * The pull-requests view: the most recently updated PRs with their latest run, from indexed columns only
 * (never payloads or bodies), at most 100. `q` matches repository, title or author (case-insensitive),
 * `repo` is exact, `status` is the latest run's status.
 */
export async function pullRequestItems(store: Store, filter: { q?: string; repo?: string; status?: string }) {
  const knex = store.db.knex;
  const latestRunSql = (alias: string) =>
    `(SELECT r2.id FROM runs r2 WHERE r2.repo = ${alias}.repo AND r2.pr_number = ${alias}.number ORDER BY r2.created_at DESC, r2.id DESC LIMIT 1)`;
  const prColumns = [
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
  const q = filter.q?.trim().toLowerCase();
  const like = q ? `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  // One walk of the covering index `pull_requests_recent_idx`, newest first, filtered by `q` and `repo`,
  // each PR's latest run found by an index probe; with `status` the walk goes on until the page is full.
  let page = knex('pull_requests as pp')
    .select(...prColumns.map((c) => `pp.${c}`), knex.raw(`${latestRunSql('pp')} as latest_run_id`))
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
  page = page.limit(SNAPSHOT_MAX_ITEMS + 1);
  const query = knex
    .from(page.as('p'))
    .leftJoin('runs as r', 'r.id', 'p.latest_run_id')
    .select(
      ...prColumns.map((c) => `p.${c}`),
      'r.id as run_id',
      'r.review_key',
      'r.status as run_status',
      'r.reason as run_reason',
      'r.updated_at as run_updated_at',
    )
    .orderBy('p.updated_at', 'desc')
    .orderBy('p.repo', 'desc')
    .orderBy('p.number', 'desc');
  const rows: Raw[] = await query;
  return {
    truncated: rows.length > SNAPSHOT_MAX_ITEMS,
    items: rows.slice(0, SNAPSHOT_MAX_ITEMS).map((r) => ({
      repo: String(r.repo),
      number: Number(r.number),
      title: (r.title as string | null) ?? null,
      author: (r.author as string | null) ?? null,
      headSha: (r.head_sha as string | null) ?? null,
      baseRef: (r.base_ref as string | null) ?? null,
      draft: toBool(r.draft),
      state: (r.state as string | null) ?? null,
      updatedAt: Number(r.updated_at),
      latestRun:
        r.run_id === null || r.run_id === undefined
          ? null
          : {
              id: String(r.run_id),
              reviewKey: String(r.review_key),
              status: String(r.run_status),
              reason: (r.run_reason as string | null) ?? null,
              updatedAt: n(r.run_updated_at),
            },
    })),
  };
}

/** Everything known about one pull request: its record, runs, findings, events and publication ledger. */
export async function pullRequestDetail(store: Store, repo: string, number: number) {
  const knex = store.db.knex;
  const [pullRequest, runs, publications] = await Promise.all([
    store.pullRequests.get(repo, number),
    store.runs.listForPr(repo, number),
    store.publications.listForPr(repo, number),
  ]);
  if (!pullRequest && runs.length === 0) return null;
  const deliveriesQuery = knex('deliveries')
    .where({ repo, pr_number: number })
    .select('id', 'event', 'action', 'status', 'outcome', 'received_at')
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_PR_EVENTS);
  const commandsQuery = knex('operator_commands')
    .where({ repo, pr_number: number })
    .select('id', 'kind', 'status', 'actor', 'created_at')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_PR_EVENTS);
  const [deliveries, commands, findings]: [
    Raw[],
    Raw[],
    Awaited<ReturnType<typeof store.findings.listForPr>>,
  ] = await Promise.all([deliveriesQuery, commandsQuery, store.findings.listForPr(repo, number)]);
  const events = [
    ...deliveries.map((d) => ({
      type: 'webhook' as const,
      at: Number(d.received_at),
      deliveryId: String(d.id),
      event: String(d.event),
      action: (d.action as string | null) ?? null,
      status: String(d.status),
      outcome: (d.outcome as string | null) ?? null,
    })),
    ...commands.map((c) => ({
      type: 'command' as const,
      at: Number(c.created_at),
      commandId: String(c.id),
      kind: String(c.kind),
      status: String(c.status),
      actor: String(c.actor),
    })),
    ...runs.map((r) => ({
      type: 'run' as const,
      at: r.createdAt,
      runId: r.id,
      reviewKey: r.reviewKey,
      trigger: r.trigger,
      status: r.status,
    })),
  ]
    .sort((a, b) => b.at - a.at)
    .slice(0, MAX_PR_EVENTS);
  // Findings are recorded by the review engine, newest run first, at most 2,000 (operator-api 8).
  return { pullRequest, runs, findings, events, publications };
}

/**
 * The PR detail as JSON text (null when nothing is known about the pull request) with the stamp of what
 * it shows, read before it.
 */
export async function pullRequestDetailText(
  store: Store,
  repo: string,
  number: number,
): Promise<{ stamp: string; detail: string | null }> {
  const stamp = await pullRequestDetailStamp(store, repo, number);
  const data = await pullRequestDetail(store, repo, number);
  return { stamp, detail: data ? JSON.stringify(data) : null };
}

type PullRequestDetailAnswer = {
  schema: typeof OPERATOR_SCHEMA;
  generatedAt: string;
  data: NonNullable<Awaited<ReturnType<typeof pullRequestDetail>>>;
};

/**
 * What the PR detail shows has changed when this does: row counts and last-change columns of every table
 * it reads, for this pull request, from indexed rows only (a fraction of the detail's own cost).
 */
export function pullRequestDetailStamp(store: Store, repo: string, number: number): Promise<string> {
  return readPullRequestDetailStamp(store.db.knex, repo, number);
}

/** The PR detail answer as JSON text, from the stamp-validated cache; 404 when the PR is unknown. */
async function pullRequestDetailJson(ctx: OperationContext, repo: string, number: number): Promise<string> {
  const json = await ctx.prCache.get(
    `${repo}#${number}`,
    () => pullRequestDetailStamp(ctx.store, repo, number),
    async () => {
      const { stamp, detail } = await pullRequestDetailText(ctx.store, repo, number);
      const generatedAt = JSON.stringify(new Date(ctx.now()).toISOString());
      return {
        stamp,
        json: detail
          ? `{"schema":${JSON.stringify(OPERATOR_SCHEMA)},"generatedAt":${generatedAt},"data":${detail}}`
          : '',
      };
    },
  );
  if (!json) throw notFound(`No pull request ${repo}#${number}`);
  return json;
}

const optionalFilter = searchParam.optional();

export const snapshotOperations = {
  /** `GET /operator/api/snapshot` (operator-api 2.4): an unknown view falls back to `pull-requests`. */
  snapshot: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({
      view: z.string().max(300).optional(),
      q: optionalFilter,
      repo: optionalFilter,
      status: optionalFilter,
    }),
    run: async (ctx, input) => JSON.parse(await snapshotJson(ctx, input)) as SnapshotAnswer,
    runSerialized: snapshotJson,
  }),

  /** `GET /operator/api/pr` (operator-api 2.5). */
  pullRequest: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({
      repo: z.string({ error: 'must be owner/name' }).regex(REPO_PATTERN, 'must be owner/name'),
      number: z.union(
        [
          z.number().int().min(1).max(9_999_999_999),
          z
            .string()
            .regex(/^[1-9]\d{0,9}$/, 'must be a pull request number')
            .transform(Number),
        ],
        { error: 'must be a pull request number' },
      ),
    }),
    async run(ctx, { repo, number }): Promise<PullRequestDetailAnswer> {
      return JSON.parse(await pullRequestDetailJson(ctx, repo, number)) as PullRequestDetailAnswer;
    },
    runSerialized: (ctx, { repo, number }) => pullRequestDetailJson(ctx, repo, number),
  }),
};

type SnapshotInput = { view?: string; q?: string; repo?: string; status?: string };
type SnapshotAnswer = Awaited<ReturnType<typeof snapshot>>;

/**
 * The snapshot as JSON text, from the read cache: a dashboard polling it is answered with the text
 * serialized once, not serialized again for every request (REST sends it as it is; tRPC parses it).
 */
function snapshotJson(ctx: OperationContext, input: SnapshotInput): Promise<string> {
  return ctx.cache.get(
    `snapshot:${JSON.stringify([input.view, input.q, input.repo, input.status])}`,
    async () => JSON.stringify(await snapshot(ctx.store, ctx.now(), input)),
  );
}

async function snapshot(store: Store, now: number, input: SnapshotInput) {
  const view: SnapshotView = (SNAPSHOT_VIEWS as readonly string[]).includes(input.view ?? '')
    ? (input.view as SnapshotView)
    : 'pull-requests';
  const { q, repo, status } = input;
  let data: unknown;
  switch (view) {
    case 'pull-requests':
      data = {
        filters: { q: q ?? null, repo: repo ?? null, status: status ?? null },
        ...(await pullRequestItems(store, { q, repo, status })),
      };
      break;
    case 'analytics':
      data = await analytics(store, now);
      break;
    case 'memory':
      data = { items: [], note: 'memory contexts are not recorded by this version' };
      break;
    case 'settings':
      data = { available: false, note: 'the review policy is served by /operator/api/settings' };
      break;
  }
  return {
    schema: OPERATOR_SCHEMA,
    generatedAt: new Date(now).toISOString(),
    ttlSeconds: SNAPSHOT_TTL_SECONDS,
    view,
    data,
  };
}

export function registerSnapshotRoutes(router: Router, deps: OperatorDeps): void {
  restOperation(router, 'GET', '/operator/api/snapshot', snapshotOperations.snapshot, deps, {
    from: 'query',
  });
  restOperation(router, 'GET', '/operator/api/pr', snapshotOperations.pullRequest, deps, { from: 'query' });
}
