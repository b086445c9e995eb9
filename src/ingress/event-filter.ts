/**
 * The Node event filter (review-engine 6.1): a pure classifier of an already verified webhook. No I/O: the
 * caller looks up stored state (the PR's stored head SHA) and passes it in. Command text is not parsed here.
 */
import { waitingJobKey } from '../review/keys.js';

/** The pull request an event is about, and the App installation it came through. */
type PrIdentity = { owner: string; repo: string; number: number; installationId: number | null };

export type PrRef = PrIdentity & {
  headSha: string;
  baseRef: string;
  headRef: string;
  draft: boolean;
  author: string | null;
  title: string;
  body: string | null;
  labels: string[];
  changedFiles: number | null;
  beforeSha: string | null;
};

export type PrCommentRef = PrIdentity & {
  commentId: number;
  body: string;
  author: string;
  association: string | null;
};

/** The pull_request actions that ask for a review. */
const REVIEW_ACTIONS = ['opened', 'reopened', 'ready_for_review', 'synchronize'] as const;
export type ReviewTrigger = (typeof REVIEW_ACTIONS)[number];

export type IgnoreReason =
  | 'unsupported_event'
  | 'unsupported_action'
  | 'no_op'
  | 'merge_commit'
  | 'no_changes'
  | 'not_pull_request_comment'
  | 'missing_identity'
  | 'ping'
  | 'not_thread_reply'
  | 'bot_sender';

export type FilterOutcome =
  | { action: 'review'; trigger: ReviewTrigger; pr: PrRef; waitingKey: string }
  | { action: 'update_metadata'; pr: PrRef }
  | { action: 'command'; pr: PrCommentRef }
  | { action: 'installation' }
  | { action: 'competitor_review'; pr: PrReviewRef }
  | { action: 'thread_reply'; reply: ThreadReplyRef }
  | { action: 'thread_resolved'; thread: ThreadResolutionRef }
  | { action: 'ignore'; reason: IgnoreReason };

/**
 * A reply in a line-comment thread (`pull_request_review_comment.created` with `in_reply_to_id`); its
 * `commentId` is the reply's own id.
 */
export type ThreadReplyRef = PrCommentRef & {
  /** The first comment of the thread (GitHub's `in_reply_to_id`). */
  inReplyTo: number;
  /** The file the thread is on. */
  path: string | null;
};

/** A review thread resolved on a pull request (`pull_request_review_thread.resolved`). */
export type ThreadResolutionRef = PrIdentity & {
  /** The thread's GraphQL node id. */
  nodeId: string;
  /** The ids of the thread's comments, its first comment first. */
  commentIds: number[];
  /**
   * GitHub no longer places the thread's first comment on the diff (its `line` or `position` is null):
   * the lines it was on changed.
   */
  outdated: boolean;
  /** The pull request's head when it was resolved. */
  headSha: string | null;
  sender: string | null;
};

/** A submitted pull-request review (kept when its author is a competitor bot, review-engine 2.5). */
export type PrReviewRef = PrIdentity & {
  reviewId: number;
  author: string;
  body: string;
  state: string | null;
  submittedAt: string | null;
};

/** Compared case-insensitively against the start of the head commit message. */
const MERGE_PHRASES = ['merge branch ', 'merge pull request ', 'merge remote-tracking branch '];

/**
 * Merge detection from supplied metadata (6.1): an explicit merge flag, more than one parent, or a message
 * that starts (case-insensitively, after leading whitespace) with "Merge branch ", "Merge pull request " or
 * "Merge remote-tracking branch ". A message that merely mentions merging later does not count.
 */
export function isMergeCommit(meta: {
  merge?: boolean | null;
  parents?: number | null;
  message?: string | null;
}): boolean {
  if (meta.merge === true) return true;
  if (typeof meta.parents === 'number' && meta.parents > 1) return true;
  const message = (meta.message ?? '').trimStart().toLowerCase();
  return MERGE_PHRASES.some((phrase) => message.startsWith(phrase));
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const nonEmpty = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const id = (v: unknown): number | null =>
  Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : null;

function repoIdentity(p: any): { owner: string; repo: string } | null {
  const fullName = nonEmpty(p?.repository?.full_name)?.split('/') ?? [];
  const owner = nonEmpty(p?.repository?.owner?.login) ?? nonEmpty(fullName[0]);
  const repo = nonEmpty(p?.repository?.name) ?? nonEmpty(fullName[1]);
  return owner && repo ? { owner, repo } : null;
}

function prRef(p: any): PrRef | null {
  const identity = repoIdentity(p);
  const pr = p?.pull_request;
  const number = id(pr?.number) ?? id(p?.number);
  const headSha = nonEmpty(pr?.head?.sha);
  if (!identity || number === null || !headSha) return null;
  // Fields written out, not spread: V8 builds an object literal that starts with a spread and goes on
  // with more fields some 20x slower, and this runs for every pull_request webhook.
  return {
    owner: identity.owner,
    repo: identity.repo,
    number,
    headSha,
    baseRef: str(pr?.base?.ref) ?? '',
    headRef: str(pr?.head?.ref) ?? '',
    draft: pr?.draft === true,
    author: str(pr?.user?.login),
    title: str(pr?.title) ?? '',
    body: str(pr?.body),
    labels: Array.isArray(pr?.labels)
      ? pr.labels.map((l: any) => nonEmpty(l?.name)).filter((n: string | null): n is string => n !== null)
      : [],
    installationId: id(p?.installation?.id),
    changedFiles: num(pr?.changed_files),
    beforeSha: nonEmpty(p?.before),
  };
}

/**
 * Collects merge metadata a caller (or an enriched payload) supplied: `merge`, `head_commit` and, when
 * present, the head commit inside `commits` (the one whose `sha`/`id` is the head, else the last one).
 */
function mergeMeta(p: any, headSha: string): Parameters<typeof isMergeCommit>[0] {
  const head = p?.head_commit && typeof p.head_commit === 'object' ? p.head_commit : null;
  const commits: any[] = Array.isArray(p?.commits) ? p.commits : [];
  const listed = commits.find((c) => c?.sha === headSha || c?.id === headSha) ?? commits[commits.length - 1];
  const parentCount = (c: any): number | null => (Array.isArray(c?.parents) ? c.parents.length : null);
  const parents = [parentCount(head), parentCount(listed)].filter((n): n is number => n !== null);
  return {
    merge: p?.merge === true || head?.merge === true || listed?.merge === true,
    parents: parents.length > 0 ? Math.max(...parents) : null,
    message: str(head?.message) ?? str(listed?.message) ?? str(listed?.commit?.message),
  };
}

function classifyPullRequest(p: any, stored: { headSha: string | null } | null | undefined): FilterOutcome {
  const action = str(p?.action) ?? '';
  if (action !== 'edited' && !(REVIEW_ACTIONS as readonly string[]).includes(action))
    return { action: 'ignore', reason: 'unsupported_action' };
  const pr = prRef(p);
  if (!pr) return { action: 'ignore', reason: 'missing_identity' };
  if (action === 'edited') return { action: 'update_metadata', pr };

  if (action === 'synchronize') {
    if (pr.beforeSha !== null && pr.beforeSha === str(p?.after)) return { action: 'ignore', reason: 'no_op' };
    // Decision: only a `synchronize` onto the head we already stored is a no-op (that push was handled).
    // opened, reopened and ready_for_review on a stored head are explicit requests to review (for example
    // a PR taken out of draft), so they go on to admission, which decides the rest.
    if (stored?.headSha && stored.headSha === pr.headSha) return { action: 'ignore', reason: 'no_op' };
  }
  if (p?.noChanges === true) return { action: 'ignore', reason: 'no_changes' };
  if (isMergeCommit(mergeMeta(p, pr.headSha))) return { action: 'ignore', reason: 'merge_commit' };

  return {
    action: 'review',
    trigger: action as ReviewTrigger,
    pr,
    waitingKey: waitingJobKey(pr.owner, pr.repo, pr.number),
  };
}

/** The payload's `comment` on pull request `number`, or null when an identity is missing. */
function commentRef(p: any, number: number | null): PrCommentRef | null {
  const identity = repoIdentity(p);
  const commentId = id(p?.comment?.id);
  const author = nonEmpty(p?.comment?.user?.login);
  if (!identity || number === null || commentId === null || !author) return null;
  return {
    owner: identity.owner,
    repo: identity.repo,
    number,
    commentId,
    body: str(p?.comment?.body) ?? '',
    author,
    association: str(p?.comment?.author_association),
    installationId: id(p?.installation?.id),
  };
}

function classifyIssueComment(p: any): FilterOutcome {
  if (p?.action !== 'created') return { action: 'ignore', reason: 'unsupported_action' };
  if (!p?.issue?.pull_request) return { action: 'ignore', reason: 'not_pull_request_comment' };
  const pr = commentRef(p, id(p?.issue?.number));
  return pr ? { action: 'command', pr } : { action: 'ignore', reason: 'missing_identity' };
}

function classifyPullRequestReview(p: any): FilterOutcome {
  if (p?.action !== 'submitted') return { action: 'ignore', reason: 'unsupported_action' };
  const identity = repoIdentity(p);
  const number = id(p?.pull_request?.number);
  const reviewId = id(p?.review?.id);
  const author = nonEmpty(p?.review?.user?.login);
  if (!identity || number === null || reviewId === null || !author) {
    return { action: 'ignore', reason: 'missing_identity' };
  }
  return {
    action: 'competitor_review',
    pr: {
      owner: identity.owner,
      repo: identity.repo,
      number,
      reviewId,
      author,
      body: str(p?.review?.body) ?? '',
      state: str(p?.review?.state),
      submittedAt: str(p?.review?.submitted_at),
      installationId: id(p?.installation?.id),
    },
  };
}

/** A bot (the App itself when it resolves a finding's thread) is not a person giving feedback. */
const isBot = (user: any): boolean => user?.type === 'Bot';

function classifyReviewComment(p: any): FilterOutcome {
  if (p?.action !== 'created') return { action: 'ignore', reason: 'unsupported_action' };
  const inReplyTo = id(p?.comment?.in_reply_to_id);
  if (inReplyTo === null) return { action: 'ignore', reason: 'not_thread_reply' };
  if (isBot(p?.comment?.user)) return { action: 'ignore', reason: 'bot_sender' };
  const comment = commentRef(p, id(p?.pull_request?.number));
  if (!comment) return { action: 'ignore', reason: 'missing_identity' };
  return { action: 'thread_reply', reply: { ...comment, inReplyTo, path: nonEmpty(p?.comment?.path) } };
}

function classifyReviewThread(p: any): FilterOutcome {
  if (p?.action !== 'resolved') return { action: 'ignore', reason: 'unsupported_action' };
  if (isBot(p?.sender)) return { action: 'ignore', reason: 'bot_sender' };
  const identity = repoIdentity(p);
  const number = id(p?.pull_request?.number);
  const nodeId = nonEmpty(p?.thread?.node_id);
  const comments: any[] = Array.isArray(p?.thread?.comments) ? p.thread.comments : [];
  const commentIds = comments.map((c) => id(c?.id)).filter((n): n is number => n !== null);
  if (!identity || number === null || !nodeId || commentIds.length === 0) {
    return { action: 'ignore', reason: 'missing_identity' };
  }
  // The first comment of the thread: the one that replies to nothing.
  const first = comments.find((c) => id(c?.in_reply_to_id) === null) ?? comments[0];
  return {
    action: 'thread_resolved',
    thread: {
      owner: identity.owner,
      repo: identity.repo,
      number,
      nodeId,
      commentIds,
      outdated: first?.line === null || first?.position === null,
      headSha: nonEmpty(p?.pull_request?.head?.sha),
      sender: nonEmpty(p?.sender?.login),
      installationId: id(p?.installation?.id),
    },
  };
}

/**
 * Classifies a verified webhook by its `x-github-event` name and parsed payload. `stored` is the PR's
 * stored state when the caller has one (only `headSha` is read).
 */
export function classifyEvent(
  event: string,
  payload: unknown,
  stored?: { headSha: string | null } | null,
): FilterOutcome {
  const p = payload as any;
  switch (event) {
    case 'ping':
      return { action: 'ignore', reason: 'ping' };
    case 'installation':
    case 'installation_repositories':
      return { action: 'installation' };
    case 'issue_comment':
      return classifyIssueComment(p);
    case 'pull_request':
      return classifyPullRequest(p, stored);
    case 'pull_request_review':
      return classifyPullRequestReview(p);
    case 'pull_request_review_comment':
      return classifyReviewComment(p);
    case 'pull_request_review_thread':
      return classifyReviewThread(p);
    default:
      return { action: 'ignore', reason: 'unsupported_event' };
  }
}
