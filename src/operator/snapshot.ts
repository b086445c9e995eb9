import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import type { Router } from '../http/router.js';
import type { Store } from '../store/index.js';
import { toBool } from '../store/db.js';
import {
  defineOperation,
  notFound,
  REPO_PATTERN,
  restOperation,
  searchParam,
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
  let query = knex('pull_requests as p')
    .leftJoin('runs as r', function () {
      this.on(
        'r.id',
        '=',
        knex.raw(
          '(SELECT r2.id FROM runs r2 WHERE r2.repo = p.repo AND r2.pr_number = p.number ORDER BY r2.created_at DESC, r2.id DESC LIMIT 1)',
        ),
      );
    })
    .select(
      'p.repo',
      'p.number',
      'p.title',
      'p.author',
      'p.head_sha',
      'p.base_ref',
      'p.draft',
      'p.state',
      'p.updated_at',
      'r.id as run_id',
      'r.review_key',
      'r.status as run_status',
      'r.reason as run_reason',
      'r.updated_at as run_updated_at',
    )
    .orderBy('p.updated_at', 'desc')
    .orderBy('p.repo')
    .orderBy('p.number', 'desc')
    .limit(SNAPSHOT_MAX_ITEMS + 1);
  if (filter.repo) query = query.where('p.repo', filter.repo);
  if (filter.status) query = query.where('r.status', filter.status);
  const q = filter.q?.trim().toLowerCase();
  if (q) {
    const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((w) =>
      w
        .whereRaw(`LOWER(p.repo) LIKE ? ESCAPE '\\'`, [like])
        .orWhereRaw(`LOWER(COALESCE(p.title, '')) LIKE ? ESCAPE '\\'`, [like])
        .orWhereRaw(`LOWER(COALESCE(p.author, '')) LIKE ? ESCAPE '\\'`, [like]),
    );
  }
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
  const deliveries: Raw[] = await knex('deliveries')
    .where({ repo, pr_number: number })
    .select('id', 'event', 'action', 'status', 'outcome', 'received_at')
    .orderBy('received_at', 'desc')
    .limit(MAX_PR_EVENTS);
  const commands: Raw[] = await knex('operator_commands')
    .where({ repo, pr_number: number })
    .select('id', 'kind', 'status', 'actor', 'created_at')
    .orderBy('created_at', 'desc')
    .limit(MAX_PR_EVENTS);
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
  const findings = await store.findings.listForPr(repo, number);
  return { pullRequest, runs, findings, events, publications };
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
    async run(ctx, input) {
      const view: SnapshotView = (SNAPSHOT_VIEWS as readonly string[]).includes(input.view ?? '')
        ? (input.view as SnapshotView)
        : 'pull-requests';
      const { q, repo, status } = input;
      const now = ctx.now();
      let data: unknown;
      switch (view) {
        case 'pull-requests':
          data = {
            filters: { q: q ?? null, repo: repo ?? null, status: status ?? null },
            ...(await pullRequestItems(ctx.store, { q, repo, status })),
          };
          break;
        case 'analytics':
          data = await analytics(ctx.store, now);
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
    },
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
    async run(ctx, { repo, number }) {
      const detail = await pullRequestDetail(ctx.store, repo, number);
      if (!detail) throw notFound(`No pull request ${repo}#${number}`);
      return { schema: OPERATOR_SCHEMA, generatedAt: new Date(ctx.now()).toISOString(), data: detail };
    },
  }),
};

export function registerSnapshotRoutes(router: Router, deps: OperatorDeps): void {
  restOperation(router, 'GET', '/operator/api/snapshot', snapshotOperations.snapshot, deps, {
    from: 'query',
  });
  restOperation(router, 'GET', '/operator/api/pr', snapshotOperations.pullRequest, deps, { from: 'query' });
}
