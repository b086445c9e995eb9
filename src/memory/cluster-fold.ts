/**
 * How one feedback event is folded into its memory cluster (NAMES.md "Feedback and learning"), the one
 * rule both runtimes write by: the Node store (FeedbackStore, in a knex transaction) and the native
 * reactions step (src/native/worker/reactions.ts, in one D1 batch). Pure: the caller reads what the rule
 * needs (the finding's earlier counted events, whether the target cluster exists) and writes what it
 * answers; the SQL of a cluster's increment is written once here and run by both.
 *
 * A finding (a thread) counts as `dismissed` once and as `addressed` once, however many events say so;
 * a cluster's counters grow by the event's counts, its `size` by one when the finding joins it, its
 * action becomes `suppress` for an `@verdict ignore`, and its revision moves on when anything changed.
 */

export type FeedbackCounts = { up: number; down: number; dismissed: number; addressed: number };

/** An earlier counted event of the same finding, as its `memory_feedback` row holds it. */
export type EarlierEvent = { dismissed: unknown; addressed: unknown; cluster_id: unknown };

/** The cluster an event is folded into, when it exists. */
export type ExistingCluster = { id: string; action: string };

/** What a cluster made for an event is made of. */
export type NewCluster = {
  repo: string;
  label: string;
  exemplar: { title: string; body: string; category: string | null; path: string | null };
};

export type FoldPlan = {
  /** The event's own counts: each 0 or 1. */
  counts: FeedbackCounts;
  /** `create`: a new cluster (clusterRow); `update`: the existing one grows (clusterIncrement); `keep`. */
  cluster: 'create' | 'update' | 'keep';
  /** The finding joins the cluster now (its size grows by one). */
  joins: boolean;
  /** The cluster's action becomes `suppress` by this event (an audit entry is written for it). */
  suppressNow: boolean;
};

const bit = (n: number | undefined) => (n && n > 0 ? 1 : 0);
const COUNTS = ['up', 'down', 'dismissed', 'addressed'] as const;

export function planFold(
  wanted: Partial<FeedbackCounts>,
  earlier: ReadonlyArray<EarlierEvent>,
  existing: ExistingCluster | null,
  suppress: boolean,
): FoldPlan {
  const counts: FeedbackCounts = {
    up: bit(wanted.up),
    down: bit(wanted.down),
    dismissed: earlier.some((r) => Number(r.dismissed) > 0) ? 0 : bit(wanted.dismissed),
    addressed: earlier.some((r) => Number(r.addressed) > 0) ? 0 : bit(wanted.addressed),
  };
  if (!existing) return { counts, cluster: 'create', joins: true, suppressNow: suppress };
  const joins = !earlier.some((r) => r.cluster_id === existing.id);
  const suppressNow = suppress && existing.action !== 'suppress';
  const changes = COUNTS.some((c) => counts[c] > 0) || joins || suppressNow;
  return { counts, cluster: changes ? 'update' : 'keep', joins, suppressNow };
}

/** The `memory_clusters` row of a cluster made for an event (`planFold` answered `create`). */
export function clusterRow(id: string, made: NewCluster, plan: FoldPlan, now: number) {
  return {
    id,
    repo: made.repo,
    label: made.label,
    action: plan.suppressNow ? 'suppress' : 'none',
    size: 1,
    exemplar_title: made.exemplar.title,
    exemplar_body: made.exemplar.body,
    exemplar_category: made.exemplar.category,
    exemplar_path: made.exemplar.path,
    feedback_up: plan.counts.up,
    feedback_down: plan.counts.down,
    feedback_dismissed: plan.counts.dismissed,
    feedback_addressed: plan.counts.addressed,
    revision: 1,
    created_at: now,
    updated_at: now,
  };
}

/** The statement growing an existing cluster (`planFold` answered `update`): SQL and its bindings. */
export function clusterIncrement(clusterId: string, plan: FoldPlan, now: number) {
  const { up, down, dismissed, addressed } = plan.counts;
  return {
    sql: `UPDATE memory_clusters SET feedback_up = feedback_up + ?, feedback_down = feedback_down + ?,
      feedback_dismissed = feedback_dismissed + ?, feedback_addressed = feedback_addressed + ?,
      size = size + ?, action = CASE WHEN ? = 1 THEN 'suppress' ELSE action END,
      revision = revision + 1, updated_at = ? WHERE id = ?`,
    bindings: [up, down, dismissed, addressed, plan.joins ? 1 : 0, plan.suppressNow ? 1 : 0, now, clusterId],
  };
}
