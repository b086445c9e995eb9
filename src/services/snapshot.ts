import { z } from 'zod';
import type { Store } from '../store/index.js';
import type { PullRequestFilter } from '../store/operator-reads.js';
import { analytics } from './analytics.js';
import { memorySnapshot } from './memory.js';
import {
  defineOperation,
  notFound,
  READ_OR_KEY,
  REPO_PATTERN,
  searchParam,
  type OperationContext,
} from './operation.js';

export const OPERATOR_SCHEMA = 'verdict.operator.v1';
export const SNAPSHOT_TTL_SECONDS = 15;
export const SNAPSHOT_MAX_ITEMS = 100;
export const SNAPSHOT_VIEWS = ['pull-requests', 'analytics', 'memory', 'settings'] as const;
export type SnapshotView = (typeof SNAPSHOT_VIEWS)[number];
const MAX_PR_EVENTS = 200;

/**
 * The pull-requests view: the most recently updated PRs with their latest run (at most 100, `truncated`
 * when there are more). `q` matches repository, title or author, `repo` is exact, `status` is the latest
 * run's status.
 */
export async function pullRequestItems(store: Store, filter: PullRequestFilter) {
  const rows = await store.reads.pullRequestPage(filter, SNAPSHOT_MAX_ITEMS + 1);
  return { truncated: rows.length > SNAPSHOT_MAX_ITEMS, items: rows.slice(0, SNAPSHOT_MAX_ITEMS) };
}

/** Everything known about one pull request: its record, runs, findings, events and publication ledger. */
export async function pullRequestDetail(store: Store, repo: string, number: number) {
  const [pullRequest, runs, publications] = await Promise.all([
    store.pullRequests.get(repo, number),
    store.runs.listForPr(repo, number),
    store.publications.listForPr(repo, number),
  ]);
  if (!pullRequest && runs.length === 0) return null;
  const [{ deliveries, commands }, findings] = await Promise.all([
    store.reads.pullRequestEvents(repo, number, MAX_PR_EVENTS),
    store.findings.listForPr(repo, number),
  ]);
  const events = [
    ...deliveries.map((d) => ({
      type: 'webhook' as const,
      at: d.receivedAt,
      deliveryId: d.id,
      event: d.event,
      action: d.action,
      status: d.status,
      outcome: d.outcome,
    })),
    ...commands.map((c) => ({
      type: 'command' as const,
      at: c.createdAt,
      commandId: c.id,
      kind: c.kind,
      status: c.status,
      actor: c.actor,
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

type PullRequestDetailAnswer = {
  schema: typeof OPERATOR_SCHEMA;
  generatedAt: string;
  data: NonNullable<Awaited<ReturnType<typeof pullRequestDetail>>>;
};

/** The PR detail answer as JSON text, from the stamp-validated cache; 404 when the PR is unknown. */
async function pullRequestDetailJson(ctx: OperationContext, repo: string, number: number): Promise<string> {
  const json = await ctx.prCache.get(
    `${repo}#${number}`,
    () => ctx.store.reads.pullRequestDetailStamp(repo, number),
    async () => {
      // The stamp is read before the detail it stamps.
      const stamp = await ctx.store.reads.pullRequestDetailStamp(repo, number);
      const data = await pullRequestDetail(ctx.store, repo, number);
      const generatedAt = new Date(ctx.now()).toISOString();
      return { stamp, json: data ? JSON.stringify({ schema: OPERATOR_SCHEMA, generatedAt, data }) : '' };
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
      data = await memorySnapshot(store);
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
