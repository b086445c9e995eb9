import type { FeedbackCounts } from '../store/feedback.js';
import { mostAlike } from './alike.js';

/**
 * The rules of reading reactions into feedback that both runtimes apply (NAMES.md "Feedback and
 * learning"): which of Verdict's line comments are read, what a reaction counts, which reactions are new,
 * and what a finding's cluster is made of. No store and no GitHub client here (the reads and writes are
 * passed in), so the native edge worker bundles this module as the Node recorder (feedback.ts) imports it.
 */

/** Most of a pull request's line comments whose reactions one read takes (the newest). */
export const MAX_REACTION_COMMENTS = 100;

export const clip = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** A review comment as `GET /repos/{o}/{r}/pulls/{n}/comments` lists it: its 👍/👎 roll-up. */
export type ListedReviewComment = {
  id: number;
  reactions?: { '+1'?: number; '-1'?: number } | null;
};

/** A reaction as `GET /repos/{o}/{r}/pulls/comments/{id}/reactions` lists it. */
export type ListedReaction = {
  id: number;
  content: string;
  user?: { login?: string; type?: string } | null;
};

/** What one reaction records: its key (the reaction's GitHub identity), kind, counts and who. */
export type ReactionFeedback = {
  key: string;
  kind: 'up' | 'down';
  counts: Partial<FeedbackCounts>;
  actor: string;
};

/**
 * The threads (Verdict's line comments) whose 👍 and 👎 on GitHub (the listing's roll-up) outnumber the
 * reactions counted for them: the only ones whose reactions a scheduled pass reads. A bot's reaction,
 * never counted, makes its comment read again each pass.
 */
export function commentsWithNewReactions<T extends { commentId: string }>(
  threads: readonly T[],
  listed: readonly ListedReviewComment[],
  counted: ReadonlyMap<string, number>,
): T[] {
  const rollup = new Map(
    listed.map((c) => [String(c.id), (c.reactions?.['+1'] ?? 0) + (c.reactions?.['-1'] ?? 0)]),
  );
  return threads.filter((t) => (rollup.get(t.commentId) ?? 0) > (counted.get(t.commentId) ?? 0));
}

/**
 * What a reaction counts: a 👍 `up`; a 👎 `down` and `dismissed`; anything else, and any reaction of a
 * bot (a bot's reaction is not feedback), nothing (null).
 */
export function reactionFeedback(r: ListedReaction): ReactionFeedback | null {
  if ((r.content !== '+1' && r.content !== '-1') || r.user?.type === 'Bot') return null;
  const up = r.content === '+1';
  return {
    key: `reaction:${r.id}`,
    kind: up ? 'up' : 'down',
    counts: up ? { up: 1 } : { down: 1, dismissed: 1 },
    actor: `github:${r.user?.login ?? 'unknown'}`,
  };
}

/** How the reactions of Verdict's comments are read and recorded (the runtime's GitHub and store). */
export type ReactionSource<T> = {
  /** The reactions on a thread's first comment; null when GitHub no longer has the comment (404). */
  reactions(thread: T): Promise<ListedReaction[] | null>;
  /** The keys among `keys` that are stored already. */
  existingKeys(keys: string[]): Promise<ReadonlySet<string>>;
  /** Stores one event once and folds it; false when its key was stored meanwhile. */
  record(thread: T, feedback: ReactionFeedback): Promise<boolean>;
};

/**
 * Reads the reactions of each thread's first comment and records those that count and are not stored
 * yet, each once (keyed by the reaction's id). Returns how many new reactions were counted.
 */
export async function recordReactions<T>(threads: readonly T[], source: ReactionSource<T>): Promise<number> {
  let counted = 0;
  for (const thread of threads) {
    const reactions = await source.reactions(thread);
    if (reactions === null) continue;
    const wanted = new Map<string, ReactionFeedback>();
    for (const r of reactions) {
      const feedback = reactionFeedback(r);
      if (feedback && !wanted.has(feedback.key)) wanted.set(feedback.key, feedback);
    }
    if (wanted.size === 0) continue;
    const known = await source.existingKeys([...wanted.keys()]);
    for (const feedback of wanted.values()) {
      if (known.has(feedback.key)) continue;
      if (await source.record(thread, feedback)) counted++;
    }
  }
  return counted;
}

/** A cluster made from a finding: its label and exemplar (the thread's path when no finding is stored). */
export type ClusterExemplar = {
  label: string;
  exemplar: { title: string; body: string; category: string | null; path: string | null };
};

/** The cluster a thread's finding would start: its title, body, category and path, clipped to the columns. */
export function clusterExemplar(
  thread: { path: string },
  finding: {
    title?: string | null;
    body?: string | null;
    category?: string | null;
    path?: string | null;
  } | null,
): ClusterExemplar {
  const title = clip((finding?.title ?? '').trim() || `Finding on ${thread.path}`, 200);
  const body = clip((finding?.body ?? '').trim() || title, 4000);
  return {
    label: title,
    exemplar: {
      title,
      body,
      category: finding?.category ? clip(finding.category, 64) : null,
      path: clip(finding?.path ?? thread.path, 1000),
    },
  };
}

/**
 * Which cluster a thread's finding is folded into: the one its comment's feedback joined before (when it
 * still exists), else the repository's cluster most like the finding (`mostAlike` over the exemplars,
 * oldest first), else none (a new cluster is made from it).
 */
export async function clusterIdFor(
  made: ClusterExemplar,
  reads: {
    ofComment(): Promise<string | null>;
    exemplars(): Promise<Array<{ id: string; title: string; body: string }>>;
  },
): Promise<string | null> {
  const joined = await reads.ofComment();
  if (joined !== null) return joined;
  const alike = mostAlike({ title: made.exemplar.title, body: made.exemplar.body }, await reads.exemplars());
  return alike?.match.id ?? null;
}
