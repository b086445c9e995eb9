/**
 * `pr-agent-loop`'s feedback step in the native runtime (NAMES.md "Feedback and learning"), with the Node
 * loop's rules: which pull requests a pass reads (src/scheduler/reaction-pass.ts), which comments' reactions
 * are read, what a reaction counts, which are new and which cluster a finding joins
 * (src/memory/feedback-rules.ts). GitHub is read with the installation's token (github.ts); the feedback is
 * written to the Node store's own tables in D1 (`memory_feedback`, `memory_clusters`), row for row as
 * FeedbackStore writes a reaction: the event once under `reaction:<id>` (its unique key), its counts
 * (`dismissed` once per finding), folded into its cluster or a new one, in one D1 batch.
 *
 * D1 is shared with the review containers, which flush the rows a review wrote: while a review of the
 * repository is running (its native run `running`, updated within the dispatch lease's time) its reactions
 * wait for the next pass, so that the review's flush does not meet an event or a cluster count written
 * here meanwhile (the review reads the same reactions itself).
 */
import { randomId } from '../../clock.js';
import { clusterIncrement, clusterRow, planFold, type EarlierEvent } from '../../memory/cluster-fold.js';
import {
  MAX_REACTION_COMMENTS,
  clusterExemplar,
  clusterIdFor,
  commentsWithNewReactions,
  recordReactions,
  type ListedReaction,
  type ListedReviewComment,
  type ReactionFeedback,
} from '../../memory/feedback-rules.js';
import { readReactionsOfOpenPrs, type ReactionPass } from '../../scheduler/reaction-pass.js';
import { intEnv } from './consumer.js';
import type { D1Statement, Env } from './env.js';
import { githubPages } from './github.js';
import { DEFAULT_LEASE_MS } from './lease.js';
import { insertRow } from './state-schema.js';

/** A row of `review_threads`: one of Verdict's line comments. */
type Thread = {
  repo: string;
  pr_number: number;
  fingerprint: string;
  run_id: string;
  comment_id: string;
  path: string;
};

/** Verdict's posted line comments of a pull request, the newest `limit` (the store's `postedForPr`). */
async function postedThreads(env: Env, repo: string, prNumber: number, limit: number): Promise<Thread[]> {
  const { results } = await env.DB.prepare(
    `SELECT repo, pr_number, fingerprint, run_id, comment_id, path FROM review_threads
     WHERE repo = ? AND pr_number = ? AND comment_id NOT LIKE 'shadow:%' ORDER BY id DESC LIMIT ?`,
  )
    .bind(repo, prNumber, limit)
    .all<Thread>();
  return results;
}

/** D1 binds at most 100 values a statement: `IN (...)` lists are read in chunks of this many. */
const CHUNK = 100;

/** The rows of `sql` (whose one `IN (?)` takes the values) for all `values`, a chunk at a time. */
async function allIn<T>(env: Env, sql: string, values: readonly string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < values.length; i += CHUNK) {
    const chunk = values.slice(i, i + CHUNK);
    const marks = chunk.map(() => '?').join(', ');
    const { results } = await env.DB.prepare(sql.replace('(?)', `(${marks})`))
      .bind(...chunk)
      .all<T>();
    out.push(...results);
  }
  return out;
}

/** How many 👍 and 👎 events are stored for each comment (the store's `reactionCounts`). */
async function reactionCounts(env: Env, commentIds: string[]): Promise<Map<string, number>> {
  const rows = await allIn<{ comment_id: string; n: number }>(
    env,
    `SELECT comment_id, COUNT(*) AS n FROM memory_feedback
     WHERE kind IN ('up', 'down') AND comment_id IN (?) GROUP BY comment_id`,
    commentIds,
  );
  return new Map(rows.map((r) => [String(r.comment_id), Number(r.n)]));
}

/** The keys among `keys` stored already. */
async function existingKeys(env: Env, keys: string[]): Promise<Set<string>> {
  const sql = 'SELECT event_key FROM memory_feedback WHERE event_key IN (?)';
  return new Set((await allIn<{ event_key: string }>(env, sql, keys)).map((r) => r.event_key));
}

/** The cluster a thread's finding joins (feedback-rules.ts `clusterIdFor`, over D1's rows). */
async function clusterOf(env: Env, thread: Thread) {
  const finding = await env.DB.prepare(
    `SELECT title, body, category, path FROM findings
     WHERE run_id = ? AND status = 'published' AND fingerprint = ? ORDER BY id LIMIT 1`,
  )
    .bind(thread.run_id, thread.fingerprint)
    .first<{ title: string; body: string; category: string | null; path: string | null }>();
  const made = clusterExemplar(thread, finding);
  const clusterId = await clusterIdFor(made, {
    ofComment: async () =>
      (
        await env.DB.prepare(
          `SELECT f.cluster_id AS id FROM memory_feedback f JOIN memory_clusters c ON c.id = f.cluster_id
           WHERE f.comment_id = ? ORDER BY f.id DESC LIMIT 1`,
        )
          .bind(thread.comment_id)
          .first<{ id: string }>()
      )?.id ?? null,
    exemplars: async () =>
      (
        await env.DB.prepare(
          `SELECT id, exemplar_title AS title, exemplar_body AS body FROM memory_clusters
           WHERE lower(repo) = lower(?) ORDER BY created_at ASC, id ASC`,
        )
          .bind(thread.repo)
          .all<{ id: string; title: string; body: string }>()
      ).results,
  });
  return { made, clusterId };
}

/**
 * Stores one reaction's event and folds it by the store's rule (src/memory/cluster-fold.ts; a reaction
 * never suppresses): its counts, the cluster's counters, size and revision, or a new cluster made from the
 * finding. One batch: all or nothing. False when the key was stored meanwhile (the batch's INSERT
 * refused, nothing written).
 */
async function recordReaction(env: Env, thread: Thread, feedback: ReactionFeedback, now: number) {
  const { made, clusterId } = await clusterOf(env, thread);
  const { results: earlier } = await env.DB.prepare(
    "SELECT dismissed, addressed, cluster_id FROM memory_feedback WHERE comment_id = ? AND status = 'counted'",
  )
    .bind(thread.comment_id)
    .all<EarlierEvent>();
  const existing = clusterId === null ? null : { id: clusterId, action: 'none' };
  const plan = planFold(feedback.counts, earlier, existing, false);
  const target = clusterId ?? randomId('clu');
  const statements: D1Statement[] = [];
  if (plan.cluster === 'create') {
    const cluster = clusterRow(target, { repo: thread.repo, ...made }, plan, now);
    statements.push(insertRow(env.DB, 'memory_clusters', cluster, 'insert'));
  } else if (plan.cluster === 'update') {
    const { sql, bindings } = clusterIncrement(target, plan, now);
    statements.push(env.DB.prepare(sql).bind(...bindings));
  }
  const event = {
    event_key: feedback.key,
    repo: thread.repo,
    pr_number: thread.pr_number,
    comment_id: thread.comment_id,
    fingerprint: thread.fingerprint,
    kind: feedback.kind,
    status: 'counted',
    ...plan.counts,
    cluster_id: target,
    context_id: null,
    actor: feedback.actor,
    head_sha: null,
    answered: false,
    created_at: now,
    updated_at: now,
  };
  statements.unshift(insertRow(env.DB, 'memory_feedback', event, 'insert'));
  try {
    await env.DB.batch(statements);
    return true;
  } catch (error) {
    if ((await existingKeys(env, [feedback.key])).size > 0) return false;
    throw error;
  }
}

/** A reaction listing of one comment; null when GitHub no longer has the comment (404). */
async function listReactions(env: Env, repo: string, auth: string, commentId: string) {
  try {
    const path = `/repos/${repo}/pulls/comments/${commentId}/reactions`;
    return await githubPages(env, path, auth, (b: ListedReaction[]) => b);
  } catch (error) {
    if ((error as { status?: unknown }).status === 404) return null;
    throw error;
  }
}

/** One pull request: the listing's roll-up, then the reactions of the comments whose roll-up grew. */
async function readPullRequest(env: Env, repo: string, prNumber: number, token: string, now: number) {
  const threads = await postedThreads(env, repo, prNumber, MAX_REACTION_COMMENTS);
  if (threads.length === 0) return 0;
  const auth = `token ${token}`;
  const path = `/repos/${repo}/pulls/${prNumber}/comments`;
  const listed = await githubPages(env, path, auth, (b: ListedReviewComment[]) => b);
  const counted = await reactionCounts(
    env,
    threads.map((t) => t.comment_id),
  );
  const withId = threads.map((t) => ({ ...t, commentId: t.comment_id }));
  return recordReactions(commentsWithNewReactions(withId, listed, counted), {
    reactions: (thread) => listReactions(env, repo, auth, thread.comment_id),
    existingKeys: (keys) => existingKeys(env, keys),
    record: (thread, feedback) => recordReaction(env, thread, feedback, now),
  });
}

/** Whether a review of `repo` is running (its native run `running`, updated within the lease's time). */
export async function reviewRunning(env: Env, repo: string, now: number): Promise<boolean> {
  const since = new Date(now - intEnv(env.LEASE_MS, DEFAULT_LEASE_MS)).toISOString();
  const row = await env.DB.prepare(
    "SELECT 1 AS x FROM native_runs WHERE lower(repo) = lower(?) AND status = 'running' AND updated_at > ? LIMIT 1",
  )
    .bind(repo, since)
    .first();
  return row !== null;
}

/** The step for one repository's open pull requests (reaction-pass.ts), with the installation's token. */
export function readNativeReactions(
  env: Env,
  repo: string,
  token: string,
  open: ReadonlyArray<{ number: number }>,
  budget: { left: number },
  now: number,
): Promise<ReactionPass> {
  return readReactionsOfOpenPrs(repo, open, budget, {
    posted: async (prNumber) => (await postedThreads(env, repo, prNumber, 1)).length > 0,
    read: (prNumber) => readPullRequest(env, repo, prNumber, token, now),
  });
}
