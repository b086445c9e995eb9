import type { Knex } from 'knex';
import { writeTransaction } from './db.js';
import type { Clock } from '../clock.js';

/** The comment thread an anchored finding opened on GitHub (one inline comment of a Verdict review). */
export type ReviewThreadRecord = {
  id: number;
  repo: string;
  prNumber: number;
  fingerprint: string;
  runId: string;
  reviewId: string;
  commentId: string;
  commentNodeId: string | null;
  path: string;
  line: number;
  /** The comment's `html_url` (`…/pull/N#discussion_r<id>`). */
  url: string | null;
  status: 'open' | 'resolved';
  resolvedRunId: string | null;
  createdAt: number;
  updatedAt: number;
};

export type NewReviewThread = Pick<
  ReviewThreadRecord,
  | 'repo'
  | 'prNumber'
  | 'fingerprint'
  | 'runId'
  | 'reviewId'
  | 'commentId'
  | 'commentNodeId'
  | 'path'
  | 'line'
  | 'url'
>;

function mapThread(r: Record<string, unknown>): ReviewThreadRecord {
  return {
    id: Number(r.id),
    repo: String(r.repo),
    prNumber: Number(r.pr_number),
    fingerprint: String(r.fingerprint),
    runId: String(r.run_id),
    reviewId: String(r.review_id),
    commentId: String(r.comment_id),
    commentNodeId: (r.comment_node_id as string | null) ?? null,
    path: String(r.path),
    line: Number(r.line),
    url: (r.url as string | null) ?? null,
    status: r.status === 'resolved' ? 'resolved' : 'open',
    resolvedRunId: (r.resolved_run_id as string | null) ?? null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export class ReviewThreadStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  /** Records the threads a review opened; a comment already recorded (a retried publication) is kept once. */
  async recordMany(threads: readonly NewReviewThread[]): Promise<void> {
    if (threads.length === 0) return;
    const now = this.clock.now();
    await writeTransaction(this.knex, async (trx) => {
      for (const t of threads) {
        const exists = await trx('review_threads')
          .where({ repo: t.repo, pr_number: t.prNumber, comment_id: t.commentId })
          .first('id');
        if (exists) continue;
        await trx('review_threads').insert({
          repo: t.repo,
          pr_number: t.prNumber,
          fingerprint: t.fingerprint,
          run_id: t.runId,
          review_id: t.reviewId,
          comment_id: t.commentId,
          comment_node_id: t.commentNodeId,
          path: t.path,
          line: t.line,
          url: t.url,
          status: 'open',
          resolved_run_id: null,
          created_at: now,
          updated_at: now,
        });
      }
    });
  }

  /** The open threads of a pull request by fingerprint (the newest thread of a fingerprint wins). */
  async openByFingerprint(repo: string, prNumber: number): Promise<Map<string, ReviewThreadRecord>> {
    const rows = await this.knex('review_threads')
      .where({ repo, pr_number: prNumber, status: 'open' })
      .orderBy('id', 'asc');
    const byFingerprint = new Map<string, ReviewThreadRecord>();
    for (const row of rows) {
      const thread = mapThread(row);
      byFingerprint.set(thread.fingerprint, thread);
    }
    return byFingerprint;
  }

  async listForPr(repo: string, prNumber: number): Promise<ReviewThreadRecord[]> {
    const rows = await this.knex('review_threads').where({ repo, pr_number: prNumber }).orderBy('id');
    return rows.map(mapThread);
  }

  /**
   * The thread of a pull request whose first comment is one of `commentIds` (GitHub's ids of the
   * comments of one thread, or the `in_reply_to_id` of a reply), or null when none is Verdict's.
   */
  async byCommentIds(
    repo: string,
    prNumber: number,
    commentIds: readonly (string | number)[],
  ): Promise<ReviewThreadRecord | null> {
    if (commentIds.length === 0) return null;
    const row = await this.knex('review_threads')
      .where({ pr_number: prNumber })
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .whereIn('comment_id', commentIds.map(String))
      .orderBy('id', 'desc')
      .first();
    return row ? mapThread(row) : null;
  }

  /**
   * The threads of a pull request whose line comments were posted on GitHub (not shadow threads),
   * newest first, at most `limit`.
   */
  async postedForPr(repo: string, prNumber: number, limit: number): Promise<ReviewThreadRecord[]> {
    const rows = await this.knex('review_threads')
      .where({ repo, pr_number: prNumber })
      .whereNot('comment_id', 'like', 'shadow:%')
      .orderBy('id', 'desc')
      .limit(limit);
    return rows.map(mapThread);
  }

  /** Marks a thread resolved by a run (compare-and-set: only an open thread changes). */
  async markResolved(id: number, runId: string): Promise<boolean> {
    const n = await this.knex('review_threads')
      .where({ id, status: 'open' })
      .update({ status: 'resolved', resolved_run_id: runId, updated_at: this.clock.now() });
    return n === 1;
  }
}
