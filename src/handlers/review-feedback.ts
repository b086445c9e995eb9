import type { AppDeps } from './deps.js';
import { authorizeCommand } from '../comment-commands/authorize.js';
import { parseThreadCommand } from '../comment-commands/parse.js';
import { classifyEvent } from '../ingress/event-filter.js';
import { FeedbackRecorder, MAX_LEARN_TEXT } from '../memory/feedback.js';
import type { ReplyOctokit, ThreadReplyOctokit } from '../publish/replies.js';
import { loadRepoConfig, type ConfigContext } from '../repo-config/load.js';
import type { ReviewThreadRecord } from '../store/review-threads.js';

export type FeedbackContext = ConfigContext & {
  id: string;
  name: string;
  payload: any;
  octokit: ReplyOctokit & ThreadReplyOctokit;
};

/** A thread of Verdict's whose line comment was posted on GitHub (a shadow thread has no replies). */
async function verdictThread(
  deps: AppDeps,
  repo: string,
  number: number,
  commentIds: readonly number[],
): Promise<ReviewThreadRecord | null> {
  const thread = await deps.store.reviewThreads.byCommentIds(repo, number, commentIds);
  return thread && !thread.commentId.startsWith('shadow:') ? thread : null;
}

/**
 * A reply in one of Verdict's line-comment threads (`pull_request_review_comment.created`, NAMES.md
 * "Feedback and learning"): `@verdict ignore` dismisses the finding and makes its cluster `suppress`;
 * `@verdict learn <text>` creates a context for the repository and the thread's path. Authorized as a
 * manual command (review-engine 4.7: `repository_disabled`, `manual_disabled`, `unauthorized_commenter`,
 * no reply); answered with a short reply in the thread (recorded in shadow mode). Stored once by the
 * reply's comment id: a reply handled and answered before is `duplicate_feedback`, one stored but not
 * yet answered (the answer failed) is answered now. Outcomes also: `no_command`, `not_verdict_thread`,
 * `finding_ignored`, `context_learned`, `learn_refused`.
 */
export async function handleThreadReply(deps: AppDeps, context: FeedbackContext): Promise<string> {
  const decision = classifyEvent(context.name, context.payload);
  if (decision.action !== 'thread_reply') {
    return decision.action === 'ignore' ? decision.reason : 'unsupported_action';
  }
  const reply = decision.reply;
  const command = parseThreadCommand(reply.body, deps.config.botHandles);
  if (command.kind === 'no_command') return 'no_command';
  const fullName = `${reply.owner}/${reply.repo}`;
  const thread = await verdictThread(deps, fullName, reply.number, [reply.inReplyTo]);
  if (!thread) return 'not_verdict_thread';

  const key = `comment:${reply.commentId}`;
  const stored = await deps.store.feedback.get(key);
  if (stored?.answered) return 'duplicate_feedback';
  const target = { owner: reply.owner, repo: reply.repo, number: reply.number };
  if (!stored) {
    // Authorized as a manual command; a stored event was authorized when it was stored.
    const { config } = await loadRepoConfig(
      context,
      { ...deps, octokit: context.octokit, live: deps.config.github.hasCredentials },
      target,
    );
    if (!config.enabled) return 'repository_disabled';
    const auth = authorizeCommand({ login: reply.author, association: reply.association }, config.manual);
    if (!auth.allowed) return auth.reason;
  }

  const recorder = new FeedbackRecorder(deps);
  const answer = async (text: string) => {
    await deps.replies.threadReply(context.octokit, target, Number(thread.commentId), text, reply.commentId);
  };
  const handle = `@${command.handle}`;
  if (command.verb === 'ignore') {
    const event = stored ?? (await recorder.ignore(thread, reply)).event;
    await answer(
      `Ignored. Findings like this one are withheld from now on in ${fullName} (memory cluster ` +
        `\`${event.clusterId}\`, action \`suppress\`); an operator can set it back to \`none\` or \`keep\`.`,
    );
    await deps.store.feedback.markAnswered(key);
    return 'finding_ignored';
  }

  const text = command.text;
  if (!stored && (text.trim() === '' || text.length > MAX_LEARN_TEXT)) {
    await answer(
      text.trim() === ''
        ? `Nothing to learn: write the rule after the command, as in \`${handle} learn Prefer the logger over console.log here\`.`
        : `Not learned: the text is ${text.length} characters long, and a rule takes at most ${MAX_LEARN_TEXT}.`,
    );
    return 'learn_refused';
  }
  const learned = stored
    ? await deps.store.memory.getContext(stored.contextId ?? '')
    : (await recorder.learn(thread, reply, text)).context;
  const where = learned?.paths.length ? ` for \`${learned.paths[0]}\`` : '';
  await answer(
    learned
      ? `Learned${where}: “${learned.title}” (memory context \`${learned.id}\`). Reviews of ${fullName} follow it from now on.`
      : `Learned (the memory context was deleted since).`,
  );
  await deps.store.feedback.markAnswered(key);
  return 'context_learned';
}

/**
 * A review thread resolved on a pull request (`pull_request_review_thread.resolved`): when it is one of
 * Verdict's and a person resolved it, it counts `addressed` at once when its lines changed (GitHub shows
 * it outdated), else it waits for the next head (NAMES.md: resolved while the next head leaves its lines
 * unchanged counts `dismissed`). Stored once by the thread's node id. Outcomes: `not_verdict_thread`,
 * `resolved_by_verdict` (Verdict resolved it itself), `duplicate_feedback`, `finding_addressed`,
 * `resolution_pending` (and `bot_sender` from the event filter).
 */
export async function handleThreadResolved(deps: AppDeps, context: { name: string; payload: any }) {
  const decision = classifyEvent(context.name, context.payload);
  if (decision.action !== 'thread_resolved') {
    return decision.action === 'ignore' ? decision.reason : 'unsupported_action';
  }
  const ref = decision.thread;
  const fullName = `${ref.owner}/${ref.repo}`;
  const thread = await verdictThread(deps, fullName, ref.number, ref.commentIds);
  if (!thread) return 'not_verdict_thread';
  if (thread.status === 'resolved') return 'resolved_by_verdict';
  const headSha = ref.headSha ?? (await deps.store.pullRequests.get(fullName, ref.number))?.headSha ?? null;
  const result = await new FeedbackRecorder(deps).resolved(thread, { ...ref, headSha });
  if (!result.recorded) return 'duplicate_feedback';
  return result.event.status === 'pending' ? 'resolution_pending' : 'finding_addressed';
}
