import type { Logger } from 'pino';
import type { PublicationStore } from '../store/publications.js';
import {
  NO_SERVER_RETRY,
  PublicationLedger,
  type Attempt,
  type Found,
  type LedgerOptions,
  type SendOptions,
} from './ledger.js';
import { feedbackReplyMarker, withMarker } from './markers.js';

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

/** The slice of Octokit a reply in a line-comment thread uses (and the look-up of an interrupted one). */
export type ThreadReplyOctokit = {
  rest: {
    pulls: {
      createReplyForReviewComment(args: {
        owner: string;
        repo: string;
        pull_number: number;
        comment_id: number;
        body: string;
        request?: { retries: number };
      }): Promise<{ data: { id: number } }>;
      listReviewComments(args: {
        owner: string;
        repo: string;
        pull_number: number;
        per_page: number;
        page: number;
      }): Promise<{
        data: Array<{ id: number; node_id?: string; in_reply_to_id?: number; body?: string }>;
      }>;
    };
  };
};

/** Most pages of a pull request's review comments read to find a reply (100 a page). */
const MAX_COMMENT_PAGES = 30;

/**
 * A reply of Verdict's in the thread of `commentId`, found by the marker it ends with: what an interrupted
 * attempt may have posted. A pull request's review comments are listed oldest first, replies with their
 * `in_reply_to_id`.
 */
export async function findOwnReply(
  octokit: ThreadReplyOctokit,
  target: IssueTarget,
  commentId: number | string,
  marker: string,
): Promise<Found | null> {
  for (let page = 1; page <= MAX_COMMENT_PAGES; page++) {
    const { data } = await octokit.rest.pulls.listReviewComments({
      owner: target.owner,
      repo: target.repo,
      pull_number: target.number,
      per_page: 100,
      page,
    });
    const own = data.find(
      (c) => String(c.in_reply_to_id ?? '') === String(commentId) && (c.body ?? '').includes(marker),
    );
    if (own) return { id: String(own.id), nodeId: own.node_id ?? null };
    if (data.length < 100) return null;
  }
  return null;
}

/**
 * Replies and reactions on a PR. Live mode calls GitHub; shadow mode (no App credentials) records what
 * would have been published. Every attempt lands in the publication ledger, with its receipt or error; a
 * failure is thrown (with GitHub's error) after it is recorded.
 */
export class ReplyPublisher {
  private readonly ledger: PublicationLedger;

  constructor(
    mode: 'live' | 'shadow',
    store: PublicationStore,
    private readonly log: Logger,
    opts: LedgerOptions = {},
  ) {
    this.ledger = new PublicationLedger(store, mode, log, opts);
  }

  /** Runs a publish attempt (or records it as shadowed) through the ledger; throws what GitHub threw. */
  private async attempt(
    kind: 'reply' | 'reaction' | 'thread_reply',
    target: IssueTarget,
    body: string,
    runId: string | null,
    publish: () => Promise<{ data: { id: number } }>,
    extra: { request?: unknown; step?: string } = {},
    opts: SendOptions<{ id: number }> = {},
  ): Promise<void> {
    const attempt: Attempt = {
      runId,
      repo: `${target.owner}/${target.repo}`,
      prNumber: target.number,
      kind,
      body,
      ...extra,
    };
    let thrown: unknown = null;
    const sent = await this.ledger.send(
      attempt,
      async () => {
        try {
          return await publish();
        } catch (error) {
          thrown = error;
          throw error;
        }
      },
      opts,
    );
    if (!sent.ok) throw thrown ?? new Error(sent.error);
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
   * The answer to a command (`answering`: the id of the comment that asked) is given once: it ends with
   * a marker naming that comment, an answer already published is not posted again, and one an interrupted
   * attempt may have posted is looked for in the thread first.
   */
  async threadReply(
    octokit: ThreadReplyOctokit,
    target: IssueTarget,
    commentId: number,
    text: string,
    answering: number | null = null,
  ): Promise<void> {
    const marker = answering === null ? null : feedbackReplyMarker(answering);
    const body = marker ? withMarker(text, marker) : text;
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
          ...(marker ? NO_SERVER_RETRY : {}),
        }),
      {
        request: { commentId: String(commentId) },
        ...(marker ? { step: `feedback_reply:${answering}` } : {}),
      },
      marker ? { find: () => findOwnReply(octokit, target, commentId, marker) } : {},
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
