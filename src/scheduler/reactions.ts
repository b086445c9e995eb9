import type { Logger } from 'pino';
import type { GitHubClient } from '../github/client.js';
import { FeedbackRecorder } from '../memory/feedback.js';
import type { Store } from '../store/index.js';

/**
 * `pr-agent-loop`'s feedback step (NAMES.md "Feedback and learning": reactions are read when a pull
 * request is reviewed again and in the scheduled loop): for the open pull requests of a repository that
 * have line comments of Verdict, one listing of their review comments, then the reactions of the comments
 * whose 👍/👎 roll-up grew (`FeedbackRecorder.collectChangedReactions`), each stored once (keyed by the
 * reaction's id) and folded into the repository's clusters.
 */

/** Most pull requests one pass reads reactions of (the rest wait for the next pass). */
export const MAX_REACTION_PRS_PER_PASS = 100;

export type ReactionPass = {
  /** Pull requests whose comments were listed. */
  pullRequests: number;
  /** New reactions counted. */
  reactions: number;
  errors: string[];
};

export async function readOpenPrReactions(
  deps: { store: Store; log: Logger },
  gh: () => Promise<GitHubClient>,
  repo: string,
  open: ReadonlyArray<{ number: number }>,
  budget: { left: number },
): Promise<ReactionPass> {
  const pass: ReactionPass = { pullRequests: 0, reactions: 0, errors: [] };
  const recorder = new FeedbackRecorder(deps);
  let client: GitHubClient | null = null;
  for (const pr of open) {
    if (budget.left <= 0) break;
    const posted = await deps.store.reviewThreads.postedForPr(repo, pr.number, 1);
    if (posted.length === 0) continue;
    budget.left--;
    pass.pullRequests++;
    try {
      client ??= await gh();
      pass.reactions += await recorder.collectChangedReactions(client, { repo, prNumber: pr.number });
    } catch (error) {
      pass.errors.push(`reading the reactions on ${repo}#${pr.number} failed: ${(error as Error).message}`);
    }
  }
  return pass;
}
