import type { ReviewPolicy } from '../policy/policy.schema.js';
import { approvalInstructions } from '../policy/approval.js';
import { prFacts } from './admission.js';
import type { Gathered } from './gather.stage.js';
import type { PullRequestFacts } from './gather.js';
import type { Plan } from './plan.stage.js';
import { systemPrompt, type PromptContext } from './prompt.js';
import type { RunScope, Stage } from './stage.js';

/**
 * Stage `prompt`: what the review tells the model besides the diff. The system prompt (role, output
 * contract, the operator's custom instructions, and `autoApprove.instructions` when auto approval is
 * possible for this pull request) and the context every part's message carries (prompt.ts renders it):
 * the PR's facts and description, its linked issues, full or incremental, repository instructions, memory
 * (contexts and knowledge documents), prior findings to dispose of, other bots' reviews and the
 * validation's evidence when it came in time. The budget stage then fits this into the model's window.
 */

export type PromptInput = {
  run: RunScope;
  pr: PullRequestFacts;
  policy: Pick<ReviewPolicy, 'customInstructions' | 'autoApprove' | 'filters' | 'summary'>;
  gathered: Pick<Gathered, 'paths' | 'prior' | 'memory' | 'competitors' | 'instructions'>;
  plan: Pick<Plan, 'review'>;
  /** The validation's results as evidence, when they arrived before the model call; else null. */
  validationEvidence: string | null;
};

export type ReviewPrompt = {
  system: string;
  /** The whole context, before the budget fits it. */
  context: PromptContext;
};

async function prompt(input: PromptInput): Promise<ReviewPrompt> {
  const { run, pr, gathered, plan } = input;
  const review = plan.review;
  const context: PromptContext = {
    repo: run.repo,
    number: run.prNumber,
    title: pr.title,
    body: pr.body,
    author: pr.author,
    baseRef: pr.baseRef,
    headRef: pr.headRef,
    headSha: run.headSha,
    labels: pr.labels,
    customInstructions: input.policy.customInstructions,
    memory: gathered.memory.items,
    linkedIssues: gathered.memory.issues,
    prior: gathered.prior,
    incremental:
      review.kind === 'incremental' ? { sinceSha: review.sinceSha, files: review.files.length } : null,
    fullReviewNote:
      review.kind === 'full' && review.sinceSha
        ? `This pull request was reviewed before, at ${review.sinceSha.slice(0, 12)}; this is a full review because ${review.reason}.`
        : null,
    allPaths: gathered.paths,
    instructions: gathered.instructions.files,
    competitors: gathered.competitors.map((c) => ({
      login: c.login,
      kind: c.kind,
      state: c.state,
      body: c.body,
    })),
    validation: input.validationEvidence,
  };
  const facts = prFacts({ ...pr, paths: gathered.paths, changedFiles: gathered.paths.length }, run.repo);
  const approval = approvalInstructions({ draft: pr.draft, facts }, input.policy);
  return { system: systemPrompt(input.policy.customInstructions, approval), context };
}

export const promptStage: Stage<PromptInput, ReviewPrompt> = {
  name: 'prompt',
  run: prompt,
  counts: ({ system, context }) => ({
    systemChars: system.length,
    memoryItems: context.memory.length,
    linkedIssues: context.linkedIssues?.length ?? 0,
    priorFindings: context.prior.length,
    instructionFiles: context.instructions?.length ?? 0,
    competitorReviews: context.competitors.length,
    validationEvidence: context.validation !== null && context.validation !== undefined,
    incremental: context.incremental !== null,
  }),
};
