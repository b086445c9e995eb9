import type { Logger } from 'pino';
import { guard, type AccessRule, type ServiceTokens } from '../http/auth.js';
import { sendJson, type Router } from '../http/router.js';
import type { Store } from '../store/index.js';
import { toBool } from '../store/db.js';
import { analytics } from './read-routes.js';

export const OPERATOR_SCHEMA = 'verdict.operator.v1';
export const SNAPSHOT_TTL_SECONDS = 15;
export const SNAPSHOT_MAX_ITEMS = 100;
export const SNAPSHOT_VIEWS = ['pull-requests', 'analytics', 'memory', 'settings'] as const;
export type SnapshotView = (typeof SNAPSHOT_VIEWS)[number];
const MAX_PR_EVENTS = 200;

const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
const REPO_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

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
  // Findings are recorded by the review engine; until a run has some, the list is empty (never invented).
  return { pullRequest, runs, findings: [] as unknown[], events, publications };
}

/** `GET /operator/api/snapshot` (operator-api 2.4) and `GET /operator/api/pr` (2.5). */
export function registerSnapshotRoutes(
  router: Router,
  deps: { store: Store; tokens: ServiceTokens; log: Logger; now: () => number },
): void {
  const { store } = deps;
  const auth = { tokens: deps.tokens, apiKeys: store.apiKeys };
  const bad = (res: Parameters<Parameters<Router['add']>[2]>[1], message: string) =>
    sendJson(res, 400, { ok: false, error: 'invalid_request', message });

  router.add('GET', '/operator/api/snapshot', async (req, res, _params, url) => {
    if (!(await guard(req, res, auth, READ_OR_KEY))) return;
    const rawView = url.searchParams.get('view');
    const view: SnapshotView = (SNAPSHOT_VIEWS as readonly string[]).includes(rawView ?? '')
      ? (rawView as SnapshotView)
      : 'pull-requests';
    const q = url.searchParams.get('q') ?? undefined;
    const repo = url.searchParams.get('repo') ?? undefined;
    const status = url.searchParams.get('status') ?? undefined;
    for (const [name, value] of [
      ['q', q],
      ['repo', repo],
      ['status', status],
    ] as const) {
      if (value !== undefined && value.length > 300)
        return bad(res, `Invalid parameter ${name}: at most 300 characters`);
    }
    const now = deps.now();
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
    sendJson(res, 200, {
      ok: true,
      schema: OPERATOR_SCHEMA,
      generatedAt: new Date(now).toISOString(),
      ttlSeconds: SNAPSHOT_TTL_SECONDS,
      view,
      data,
    });
  });

  router.add('GET', '/operator/api/pr', async (req, res, _params, url) => {
    if (!(await guard(req, res, auth, READ_OR_KEY))) return;
    const repo = url.searchParams.get('repo');
    const numberText = url.searchParams.get('number');
    if (repo === null || !REPO_PATTERN.test(repo))
      return bad(res, 'Invalid parameter repo: must be owner/name');
    if (numberText === null || !/^[1-9]\d{0,9}$/.test(numberText)) {
      return bad(res, 'Invalid parameter number: must be a pull request number');
    }
    const detail = await pullRequestDetail(store, repo, Number(numberText));
    if (!detail) {
      return sendJson(res, 404, {
        ok: false,
        error: 'not_found',
        message: `No pull request ${repo}#${numberText}`,
      });
    }
    sendJson(res, 200, {
      ok: true,
      schema: OPERATOR_SCHEMA,
      generatedAt: new Date(deps.now()).toISOString(),
      data: detail,
    });
  });
}
