import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { isUniqueViolation } from './db.js';

export type CommentCommandRecord = {
  key: string;
  repo: string;
  prNumber: number;
  commentId: number;
  verb: string;
  author: string;
  association: string | null;
  outcome: string;
  deliveryId: string | null;
  runId: string | null;
  createdAt: number;
};

export const commentCommandKey = (repo: string, pr: number, commentId: number): string =>
  `${repo}#${pr}@${commentId}`;

export class CommentCommandStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  /** Claims the dedupe record of a comment command. False when it already exists (`duplicate_command`). */
  async claim(
    input: Omit<CommentCommandRecord, 'key' | 'createdAt' | 'outcome' | 'runId'>,
  ): Promise<boolean> {
    const now = this.clock.now();
    try {
      await this.knex('comment_commands').insert({
        key: commentCommandKey(input.repo, input.prNumber, input.commentId),
        repo: input.repo,
        pr_number: input.prNumber,
        comment_id: input.commentId,
        verb: input.verb,
        author: input.author,
        association: input.association,
        outcome: 'received',
        delivery_id: input.deliveryId,
        created_at: now,
        updated_at: now,
      });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async finish(key: string, outcome: string, runId: string | null = null): Promise<void> {
    await this.knex('comment_commands')
      .where({ key })
      .update({ outcome, run_id: runId, updated_at: this.clock.now() });
  }

  async get(key: string): Promise<CommentCommandRecord | null> {
    const row = await this.knex('comment_commands').where({ key }).first();
    if (!row) return null;
    return {
      key: String(row.key),
      repo: String(row.repo),
      prNumber: Number(row.pr_number),
      commentId: Number(row.comment_id),
      verb: String(row.verb),
      author: String(row.author),
      association: row.association ?? null,
      outcome: String(row.outcome),
      deliveryId: row.delivery_id ?? null,
      runId: row.run_id ?? null,
      createdAt: Number(row.created_at),
    };
  }

  /** Records that a config error was reported on a PR. False when it already was (report once). */
  async claimConfigReport(
    repo: string,
    prNumber: number,
    fingerprint: string,
    message: string,
  ): Promise<boolean> {
    try {
      await this.knex('config_error_reports').insert({
        repo,
        pr_number: prNumber,
        fingerprint,
        message,
        created_at: this.clock.now(),
      });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }
}
