import type { Logger } from 'pino';
import type { PublicationStore } from '../store/publications.js';

export type IssueTarget = { owner: string; repo: string; number: number };

/** The slice of Octokit the reply publisher uses. */
export type ReplyOctokit = { rest: ReplyRest };
type ReplyRest = {
  issues: {
    createComment(args: {
      owner: string;
      repo: string;
      issue_number: number;
      body: string;
    }): Promise<{ data: { id: number } }>;
  };
  reactions: {
    createForIssueComment(args: {
      owner: string;
      repo: string;
      comment_id: number;
      content: 'eyes' | '+1';
    }): Promise<{
      data: { id: number };
    }>;
  };
};

/**
 * Replies and reactions on a PR. Live mode calls GitHub; shadow mode (no App credentials) records what
 * would have been published. Every attempt lands in the publication ledger, with its receipt or error.
 */
export class ReplyPublisher {
  constructor(
    private readonly mode: 'live' | 'shadow',
    private readonly ledger: PublicationStore,
    private readonly log: Logger,
  ) {}

  async comment(
    octokit: ReplyOctokit,
    target: IssueTarget,
    body: string,
    runId: string | null = null,
  ): Promise<void> {
    const repo = `${target.owner}/${target.repo}`;
    if (this.mode === 'shadow') {
      await this.ledger.record({
        runId,
        repo,
        prNumber: target.number,
        kind: 'reply',
        mode: 'shadow',
        status: 'shadowed',
        receipt: null,
        body,
        error: null,
      });
      return;
    }
    try {
      const { data } = await octokit.rest.issues.createComment({
        owner: target.owner,
        repo: target.repo,
        issue_number: target.number,
        body,
      });
      await this.ledger.record({
        runId,
        repo,
        prNumber: target.number,
        kind: 'reply',
        mode: 'live',
        status: 'published',
        receipt: String(data.id),
        body,
        error: null,
      });
    } catch (error) {
      await this.ledger.record({
        runId,
        repo,
        prNumber: target.number,
        kind: 'reply',
        mode: 'live',
        status: 'failed',
        receipt: null,
        body,
        error: (error as Error).message,
      });
      throw error;
    }
  }

  /** Acknowledges a command with a reaction; a failure is recorded and logged, never fatal. */
  async react(
    octokit: ReplyOctokit,
    target: IssueTarget,
    commentId: number,
    content: 'eyes' | '+1',
  ): Promise<void> {
    const repo = `${target.owner}/${target.repo}`;
    if (this.mode === 'shadow') {
      await this.ledger.record({
        runId: null,
        repo,
        prNumber: target.number,
        kind: 'reaction',
        mode: 'shadow',
        status: 'shadowed',
        receipt: null,
        body: content,
        error: null,
      });
      return;
    }
    try {
      const { data } = await octokit.rest.reactions.createForIssueComment({
        owner: target.owner,
        repo: target.repo,
        comment_id: commentId,
        content,
      });
      await this.ledger.record({
        runId: null,
        repo,
        prNumber: target.number,
        kind: 'reaction',
        mode: 'live',
        status: 'published',
        receipt: String(data.id),
        body: content,
        error: null,
      });
    } catch (error) {
      this.log.warn({ event: 'reaction-failed', err: error }, 'could not react to the command comment');
      await this.ledger.record({
        runId: null,
        repo,
        prNumber: target.number,
        kind: 'reaction',
        mode: 'live',
        status: 'failed',
        receipt: null,
        body: content,
        error: (error as Error).message,
      });
    }
  }
}
