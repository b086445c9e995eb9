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

/** The slice of Octokit a reply in a line-comment thread uses. */
export type ThreadReplyOctokit = {
  rest: {
    pulls: {
      createReplyForReviewComment(args: {
        owner: string;
        repo: string;
        pull_number: number;
        comment_id: number;
        body: string;
      }): Promise<{ data: { id: number } }>;
    };
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

  /** Runs a publish attempt (or records it as shadowed) and writes its ledger entry. */
  private async attempt(
    kind: 'reply' | 'reaction' | 'thread_reply',
    target: IssueTarget,
    body: string,
    runId: string | null,
    publish: () => Promise<{ data: { id: number } }>,
    request: unknown = null,
  ): Promise<void> {
    const entry = {
      runId,
      repo: `${target.owner}/${target.repo}`,
      prNumber: target.number,
      kind,
      body,
      request,
    };
    if (this.mode === 'shadow') {
      await this.ledger.record({ ...entry, mode: 'shadow', status: 'shadowed', receipt: null, error: null });
      return;
    }
    const live = { ...entry, mode: 'live' } as const;
    try {
      const { data } = await publish();
      await this.ledger.record({ ...live, status: 'published', receipt: String(data.id), error: null });
    } catch (error) {
      await this.ledger.record({ ...live, status: 'failed', receipt: null, error: (error as Error).message });
      throw error;
    }
  }

  async comment(
    octokit: ReplyOctokit,
    target: IssueTarget,
    body: string,
    runId: string | null = null,
  ): Promise<void> {
    await this.attempt('reply', target, body, runId, () =>
      octokit.rest.issues.createComment({
        owner: target.owner,
        repo: target.repo,
        issue_number: target.number,
        body,
      }),
    );
  }

  /**
   * A reply in a line-comment thread (`POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies`), `commentId`
   * being the thread's first comment; shadow mode records it. Throws when GitHub refuses it (recorded).
   */
  async threadReply(
    octokit: ThreadReplyOctokit,
    target: IssueTarget,
    commentId: number,
    body: string,
  ): Promise<void> {
    await this.attempt(
      'thread_reply',
      target,
      body,
      null,
      () =>
        octokit.rest.pulls.createReplyForReviewComment({
          owner: target.owner,
          repo: target.repo,
          pull_number: target.number,
          comment_id: commentId,
          body,
        }),
      { commentId: String(commentId) },
    );
  }

  /** Acknowledges a command with a reaction; a failure is recorded and logged, never fatal. */
  async react(
    octokit: ReplyOctokit,
    target: IssueTarget,
    commentId: number,
    content: 'eyes' | '+1',
  ): Promise<void> {
    try {
      await this.attempt('reaction', target, content, null, () =>
        octokit.rest.reactions.createForIssueComment({
          owner: target.owner,
          repo: target.repo,
          comment_id: commentId,
          content,
        }),
      );
    } catch (error) {
      this.log.warn({ event: 'reaction-failed', err: error }, 'could not react to the command comment');
    }
  }
}
