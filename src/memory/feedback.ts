import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { GitHubClient } from '../github/client.js';
import { readRunResult } from '../review/run-result.js';
import type { ClusterTarget, FeedbackCounts, FeedbackKind, RecordedFeedback } from '../store/feedback.js';
import type { FindingRecord } from '../store/findings.js';
import type { Store } from '../store/index.js';
import type { MemoryContext } from '../store/memory.js';
import type { ReviewThreadRecord } from '../store/review-threads.js';
import type { RunRecord } from '../store/runs.js';
import type { FeedbackCollection } from '../worker/review-flow.js';
import { splitFullName } from '../store/repositories.js';
import {
  MAX_REACTION_COMMENTS,
  clip,
  clusterExemplar,
  clusterIdFor,
  commentsWithNewReactions,
  recordReactions,
  type ListedReaction,
  type ListedReviewComment,
} from './feedback-rules.js';

/**
 * Feedback on Verdict's line comments, folded into the memory of their repository (NAMES.md "Memory",
 * "Feedback and learning"):
 *
 * - a 👍 on a line comment counts `up`; a 👎 counts `down` and `dismissed` (read from GitHub when the pull
 *   request is reviewed again, `collectReactions`);
 * - `@verdict ignore` in a reply counts `dismissed` and makes the finding's cluster `suppress`;
 *   `@verdict learn <text>` creates a context (`source: "comment"`) for the repository and the path;
 * - a thread a person resolves counts `addressed` when its lines changed, and `dismissed` when the next
 *   head leaves them unchanged (`settleResolutions`);
 * - a finding an accepted disposition resolves counts `addressed` (`addressedByRun`).
 *
 * Every event is stored once (FeedbackStore), keyed by its GitHub identity, and folded into the cluster
 * its finding already belongs to, else the repository's cluster most like it (`mostAlike`), else a new
 * cluster with the finding as its exemplar.
 */

/** Longest text `@verdict learn` takes (a context's body, NAMES.md). */
export const MAX_LEARN_TEXT = 4000;

/** Control characters contexts refuse (operator-api 2.10): everything below space but tab and line breaks. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * The glob of one file for a context's `paths`: the path itself, with each character a glob may not hold
 * (operator-api 2.10 allows `A-Z a-z 0-9 _ . @ space / ? * -`) and each `*` or `?` written as `?`, which
 * matches exactly that one character. Null when even that is not a glob (an empty, `.` or `..` segment,
 * or longer than 500 characters).
 */
export function pathGlob(path: string): string | null {
  const glob = path.replace(/[^A-Za-z0-9_.@ /-]/g, '?');
  if (glob.length === 0 || glob.length > 500) return null;
  if (glob.split('/').some((s) => s === '' || s === '.' || s === '..')) return null;
  return glob;
}

/** The id of the context a reply creates: derived from the reply, so a retried reply creates it once. */
export function learnedContextId(replyCommentId: number): string {
  return `mem_${createHash('sha256').update(`comment:${replyCommentId}`).digest('hex').slice(0, 24)}`;
}

/** A pull request of a repository (a run is one). */
export type PullRef = { repo: string; prNumber: number };

export type FeedbackReply = {
  owner: string;
  repo: string;
  number: number;
  commentId: number;
  author: string;
  path: string | null;
};

export class FeedbackRecorder {
  constructor(private readonly deps: { store: Store; log: Logger }) {}

  /** The finding a thread posted: its run's stored finding with the thread's fingerprint. */
  private async findingOf(thread: ReviewThreadRecord): Promise<FindingRecord | null> {
    const findings = await this.deps.store.findings.listForRun(thread.runId);
    return findings.find((f) => f.fingerprint === thread.fingerprint) ?? null;
  }

  /**
   * Where a thread's finding is folded: the cluster it joined before (when it still exists), else the
   * repository's cluster most like it, else a new one made from it (feedback-rules.ts).
   */
  private async clusterFor(
    thread: ReviewThreadRecord,
    actor: string,
    suppress: boolean,
  ): Promise<ClusterTarget> {
    const { store } = this.deps;
    const create = clusterExemplar(thread, await this.findingOf(thread));
    const clusterId = await clusterIdFor(create, {
      ofComment: () => store.feedback.clusterOfComment(thread.commentId),
      exemplars: () => store.feedback.clusterExemplars(thread.repo),
    });
    return { repo: thread.repo, clusterId, create, suppress, actor };
  }

  /** Stores one event of a thread once and folds it (nothing is looked up for a stored key). */
  async record(
    thread: ReviewThreadRecord,
    event: {
      key: string;
      kind: FeedbackKind;
      counts?: Partial<FeedbackCounts>;
      actor: string;
      suppress?: boolean;
      pending?: boolean;
      headSha?: string | null;
      contextId?: string | null;
      fold?: boolean;
    },
  ): Promise<RecordedFeedback> {
    const { store } = this.deps;
    const stored = await store.feedback.get(event.key);
    if (stored) return { recorded: false, event: stored };
    const folds = event.fold !== false && event.pending !== true;
    return store.feedback.record({
      key: event.key,
      repo: thread.repo,
      prNumber: thread.prNumber,
      commentId: thread.commentId,
      fingerprint: thread.fingerprint,
      kind: event.kind,
      counts: event.counts,
      pending: event.pending,
      contextId: event.contextId ?? null,
      actor: event.actor,
      headSha: event.headSha ?? null,
      cluster: folds ? await this.clusterFor(thread, event.actor, event.suppress === true) : null,
    });
  }

  /** `@verdict ignore`: the finding is dismissed and its cluster withholds findings like it. */
  ignore(thread: ReviewThreadRecord, reply: FeedbackReply): Promise<RecordedFeedback> {
    return this.record(thread, {
      key: `comment:${reply.commentId}`,
      kind: 'ignore',
      counts: { dismissed: 1 },
      suppress: true,
      actor: `github:${reply.author}`,
    });
  }

  /**
   * `@verdict learn <text>`: a context of the repository for the thread's path (`source: "comment"`),
   * titled by the text's first line. Its id comes from the reply, so a retry does not create it twice.
   */
  async learn(
    thread: ReviewThreadRecord,
    reply: FeedbackReply,
    text: string,
  ): Promise<{ recorded: RecordedFeedback; context: MemoryContext }> {
    const { store } = this.deps;
    const body = text.replace(CONTROL, '').trim();
    const id = learnedContextId(reply.commentId);
    const glob = pathGlob(reply.path ?? thread.path);
    const context =
      (await store.memory.getContext(id)) ??
      (await store.memory.createContext({
        id,
        repo: `${reply.owner}/${reply.repo}`,
        paths: glob ? [glob] : [],
        title: clip(body.split('\n')[0]!.trim(), 200),
        body,
        source: 'comment',
        createdBy: `github:${reply.author}`,
      }));
    const recorded = await this.record(thread, {
      key: `comment:${reply.commentId}`,
      kind: 'learn',
      actor: `github:${reply.author}`,
      contextId: context.id,
      fold: false,
    });
    return { recorded, context };
  }

  /**
   * A thread a person resolved: `addressed` at once when GitHub no longer places its first comment on
   * the diff (its lines changed); otherwise pending until the next head is reviewed
   * (`settleResolutions`).
   */
  resolved(
    thread: ReviewThreadRecord,
    r: { nodeId: string; outdated: boolean; headSha: string | null; sender: string | null },
  ): Promise<RecordedFeedback> {
    const key = `thread:${r.nodeId}:resolved`;
    const actor = `github:${r.sender ?? 'unknown'}`;
    return r.outdated
      ? this.record(thread, { key, kind: 'resolved', counts: { addressed: 1 }, actor })
      : this.record(thread, { key, kind: 'resolved', pending: true, headSha: r.headSha, actor });
  }

  /**
   * Reads the reactions on the PR's posted line comments (the newest MAX_REACTION_COMMENTS), from people
   * (a bot's reaction is not feedback): each 👍 counts `up`, each 👎 `down` and `dismissed`. A comment
   * GitHub no longer has (404) is skipped. Returns how many new reactions were counted.
   */
  async collectReactions(gh: GitHubClient, pr: PullRef): Promise<number> {
    const threads = await this.deps.store.reviewThreads.postedForPr(
      pr.repo,
      pr.prNumber,
      MAX_REACTION_COMMENTS,
    );
    return this.readReactions(gh, pr.repo, threads);
  }

  /**
   * The scheduled loop's cheaper read (`pr-agent-loop`): one listing of the PR's review comments
   * (`GET /repos/{o}/{r}/pulls/{n}/comments`, whose `reactions` roll-up counts 👍 and 👎), then the
   * reactions (`collectReactions`' read) only of Verdict's comments with more 👍 and 👎 than it counted
   * (`commentsWithNewReactions`). Returns how many new reactions were counted.
   */
  async collectChangedReactions(gh: GitHubClient, pr: PullRef): Promise<number> {
    const { store } = this.deps;
    const threads = await store.reviewThreads.postedForPr(pr.repo, pr.prNumber, MAX_REACTION_COMMENTS);
    if (threads.length === 0) return 0;
    const { owner, name } = splitFullName(pr.repo);
    const comments: ListedReviewComment[] = await gh.paginate(gh.rest.pulls.listReviewComments, {
      owner,
      repo: name,
      pull_number: pr.prNumber,
      per_page: 100,
    });
    const counted = await store.feedback.reactionCounts(threads.map((t) => t.commentId));
    return this.readReactions(gh, pr.repo, commentsWithNewReactions(threads, comments, counted));
  }

  /** Reads and records the reactions of each thread's first comment (feedback-rules.ts `recordReactions`). */
  private readReactions(gh: GitHubClient, repo: string, threads: ReviewThreadRecord[]): Promise<number> {
    const { store } = this.deps;
    const { owner, name } = splitFullName(repo);
    return recordReactions(threads, {
      reactions: async (thread) => {
        try {
          return (await gh.paginate(gh.rest.reactions.listForPullRequestReviewComment, {
            owner,
            repo: name,
            comment_id: Number(thread.commentId),
            per_page: 100,
          })) as ListedReaction[];
        } catch (error) {
          if ((error as { status?: unknown })?.status === 404) return null;
          throw error;
        }
      },
      existingKeys: (keys) => store.feedback.existingKeys(keys),
      record: async (thread, feedback) => (await this.record(thread, feedback)).recorded,
    });
  }

  /**
   * Settles the PR's pending resolutions once a later head is reviewed: GitHub no longer placing the
   * thread's first comment on the diff (`line` or `position` null) means its lines changed (`addressed`);
   * otherwise the head left them as they were and the resolution dismissed the finding (`dismissed`).
   * Returns how many were settled.
   */
  async settleResolutions(gh: GitHubClient, run: RunRecord): Promise<number> {
    const { store } = this.deps;
    const pending = (await store.feedback.pendingForPr(run.repo, run.prNumber)).filter(
      (e) => e.headSha !== run.headSha,
    );
    if (pending.length === 0) return 0;
    const { owner, name } = splitFullName(run.repo);
    const threads = await store.reviewThreads.listForPr(run.repo, run.prNumber);
    let settled = 0;
    for (const event of pending) {
      const thread = threads.find((t) => t.commentId === event.commentId);
      if (!thread) continue;
      let comment: { line?: number | null; position?: number | null };
      try {
        ({ data: comment } = await gh.rest.pulls.getReviewComment({
          owner,
          repo: name,
          comment_id: Number(event.commentId),
        }));
      } catch (error) {
        if ((error as { status?: unknown })?.status === 404) continue;
        throw error;
      }
      const changed = comment.line === null || comment.position === null;
      const counts = changed ? { addressed: 1 } : { dismissed: 1 };
      const target = await this.clusterFor(thread, event.actor ?? 'github:unknown', false);
      if (await store.feedback.settle(event.key, counts, target)) settled++;
    }
    return settled;
  }

  /**
   * A finding an accepted disposition of `run` resolved (`priorFindings.resolved`, disposition
   * `resolved`) counts `addressed` on the thread Verdict posted for it on the PR. Returns how many.
   */
  async addressedByRun(run: RunRecord): Promise<number> {
    const result = readRunResult(run.result);
    if (!result && run.result !== null)
      this.deps.log.warn({ runId: run.id }, 'the run holds no readable result');
    const resolved = (result?.priorFindings?.resolved ?? []).filter((r) => r.disposition === 'resolved');
    if (resolved.length === 0) return 0;
    const threads = (await this.deps.store.reviewThreads.listForPr(run.repo, run.prNumber)).filter(
      (t) => !t.commentId.startsWith('shadow:'),
    );
    let counted = 0;
    for (const r of resolved) {
      // The newest posted thread of that finding.
      const thread = threads.filter((t) => t.fingerprint === r.fingerprint).at(-1);
      if (!thread) continue;
      const result = await this.record(thread, {
        key: `addressed:${thread.commentId}`,
        kind: 'addressed',
        counts: { addressed: 1 },
        actor: 'verdict',
      });
      if (result.recorded) counted++;
    }
    return counted;
  }
}

/**
 * The review flow's feedback steps: before the analysis, the reactions on the PR's posted line comments
 * and the resolutions waiting for a later head (GitHub reads: none when `readGitHub` is false, in shadow
 * mode without App credentials; nothing to do when the PR has no posted line comment); after it, the
 * findings its accepted dispositions resolved (when there are any).
 */
export function feedbackCollection(
  store: Store,
  log: Logger,
  opts: { readGitHub: boolean },
): FeedbackCollection {
  const recorder = new FeedbackRecorder({ store, log });
  return {
    async beforeAnalysis(run) {
      if (!opts.readGitHub) return null;
      const posted = await store.reviewThreads.postedForPr(run.repo, run.prNumber, 1);
      if (posted.length === 0) return null;
      return async (gh) => {
        const reactions = await recorder.collectReactions(gh, run);
        const resolutions = await recorder.settleResolutions(gh, run);
        log.info(
          { event: 'feedback-collected', runId: run.id, repo: run.repo, reactions, resolutions },
          `feedback on ${run.repo}#${run.prNumber}: ${reactions} reaction(s), ${resolutions} resolution(s)`,
        );
      };
    },
    async afterAnalysis(run) {
      const resolved = readRunResult(run.result)?.priorFindings?.resolved ?? [];
      if (!resolved.some((r) => r.disposition === 'resolved')) return null;
      return async () => {
        await recorder.addressedByRun(run);
      };
    },
  };
}
