/**
 * `pr-agent-loop`'s feedback step as both runtimes run it (NAMES.md "Feedback and learning": reactions
 * are read when a pull request is reviewed again and in the scheduled loop): which open pull requests of
 * a repository have their reactions read in a pass, and what a failure of one of them does. No store and
 * no GitHub client here (the runtime passes its reads in), so the native edge worker bundles this module
 * as the Node loop (reactions.ts) imports it. What is read of one pull request is
 * src/memory/feedback-rules.ts.
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

/**
 * For the open pull requests of `repo` that have line comments of Verdict (`posted`), while the pass's
 * budget lasts: `read` (the runtime's read of one pull request's changed reactions, answering how many
 * it counted). A pull request whose read fails is one line of `errors` and the pass goes on.
 */
export async function readReactionsOfOpenPrs(
  repo: string,
  open: ReadonlyArray<{ number: number }>,
  budget: { left: number },
  step: { posted(prNumber: number): Promise<boolean>; read(prNumber: number): Promise<number> },
): Promise<ReactionPass> {
  const pass: ReactionPass = { pullRequests: 0, reactions: 0, errors: [] };
  for (const pr of open) {
    if (budget.left <= 0) break;
    if (!(await step.posted(pr.number))) continue;
    budget.left--;
    pass.pullRequests++;
    try {
      pass.reactions += await step.read(pr.number);
    } catch (error) {
      pass.errors.push(`reading the reactions on ${repo}#${pr.number} failed: ${(error as Error).message}`);
    }
  }
  return pass;
}
