import type { Logger } from 'pino';
import type { GitHubClient } from '../github/client.js';
import { FeedbackRecorder } from '../memory/feedback.js';
import type { Store } from '../store/index.js';
import { readReactionsOfOpenPrs, type ReactionPass } from './reaction-pass.js';

/**
 * `pr-agent-loop`'s feedback step (NAMES.md "Feedback and learning": reactions are read when a pull
 * request is reviewed again and in the scheduled loop): for the open pull requests of a repository that
 * have line comments of Verdict, one listing of their review comments, then the reactions of the comments
 * whose 👍/👎 roll-up grew (`FeedbackRecorder.collectChangedReactions`), each stored once (keyed by the
 * reaction's id) and folded into the repository's clusters. Which pull requests a pass reads is
 * reaction-pass.ts, shared with the native runtime.
 */

export async function readOpenPrReactions(
  deps: { store: Store; log: Logger },
  gh: () => Promise<GitHubClient>,
  repo: string,
  open: ReadonlyArray<{ number: number }>,
  budget: { left: number },
): Promise<ReactionPass> {
  const recorder = new FeedbackRecorder(deps);
  let client: GitHubClient | null = null;
  return readReactionsOfOpenPrs(repo, open, budget, {
    posted: async (prNumber) => (await deps.store.reviewThreads.postedForPr(repo, prNumber, 1)).length > 0,
    read: async (prNumber) => {
      client ??= await gh();
      return recorder.collectChangedReactions(client, { repo, prNumber });
    },
  });
}
