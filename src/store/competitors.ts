import type { Knex } from 'knex';
import type { Clock } from '../clock.js';

export type CompetitorReview = {
  id: number;
  repo: string;
  prNumber: number;
  login: string;
  kind: 'review' | 'comment';
  githubId: number;
  state: string | null;
  body: string;
  submittedAt: string | null;
  createdAt: number;
};

/** How many competitor reviews of one PR a review is given at most (newest first). */
export const MAX_COMPETITOR_REVIEWS = 10;

/** Reviews and comments of other review bots on a PR. A redelivered one is stored once. */
export class CompetitorReviewStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  /** Stores a competitor review; false when it was stored before (same kind and GitHub id). */
  async record(review: Omit<CompetitorReview, 'id' | 'createdAt'>): Promise<boolean> {
    const rows = await this.knex('competitor_reviews')
      .insert({
        repo: review.repo,
        pr_number: review.prNumber,
        login: review.login,
        kind: review.kind,
        github_id: review.githubId,
        state: review.state,
        body: review.body,
        submitted_at: review.submittedAt,
        created_at: this.clock.now(),
      })
      .onConflict(['kind', 'github_id'])
      .ignore()
      .returning('id');
    return rows.length > 0;
  }

  /** The newest competitor reviews of a PR, at most `limit`. */
  async listForPr(
    repo: string,
    prNumber: number,
    limit = MAX_COMPETITOR_REVIEWS,
  ): Promise<CompetitorReview[]> {
    const rows: Array<Record<string, unknown>> = await this.knex('competitor_reviews')
      .where({ repo, pr_number: prNumber })
      .orderBy('id', 'desc')
      .limit(limit);
    return rows.map((r) => ({
      id: Number(r.id),
      repo: String(r.repo),
      prNumber: Number(r.pr_number),
      login: String(r.login),
      kind: r.kind as 'review' | 'comment',
      githubId: Number(r.github_id),
      state: (r.state as string | null) ?? null,
      body: String(r.body),
      submittedAt: (r.submitted_at as string | null) ?? null,
      createdAt: Number(r.created_at),
    }));
  }
}
