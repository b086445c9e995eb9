import type { ReviewConfig } from '../config/index.js';
import {
  callTokens,
  cutsLine,
  estimateTokens,
  fitContext,
  inputBudget,
  modelWindow,
  tokenScale,
  type ModelWindow,
} from './budget.js';
import { buildReviewInput, type ReviewInput } from './context.js';
import { REVIEW_SCHEMA } from './model-call.js';
import type { Plan } from './plan.stage.js';
import { chunkPrompt, type PromptContext } from './prompt.js';
import type { ReviewPrompt } from './prompt.stage.js';
import type { ModelProvider } from './providers/index.js';
import type { Stage } from './stage.js';

/**
 * Stage `budget`: the whole prompt in the primary model's window (budget.ts) and the diff packed into
 * parts (context.ts). The window less the answer's room; the system prompt, the schema and the context
 * sections first (at most 40% of what is left, cut with a marker when over); the diff of each part in
 * the rest. Every changed file shown ends in a part or in the list of files not reviewed.
 */

export type BudgetInput = {
  /** The primary model: its window and output cap. */
  providers: { primary: Pick<ModelProvider, 'name' | 'model' | 'maxTokens'> };
  config: Pick<ReviewConfig, 'contextTokens' | 'chunkTokens' | 'fileTokens' | 'maxChunks'>;
  prompt: ReviewPrompt;
  /** The files the review shows. */
  plan: Pick<Plan, 'files'>;
};

export type Budgeted = {
  /** The context as fitted: what every part's message carries. */
  context: PromptContext;
  window: ModelWindow;
  inputBudget: number;
  contextTokens: number;
  /** Diff tokens one part may carry. */
  chunkTokens: number;
  /** The parts, the files not reviewed and clipped, and their missing-validation lines (with what was cut). */
  input: ReviewInput;
};

/** Tokens kept for the diff's framing in a part's prompt (the `## Diff` heading and part notes). */
const DIFF_FRAME_TOKENS = 200;

async function budget(input: BudgetInput): Promise<Budgeted> {
  const { config: limits, prompt } = input;
  const provider = input.providers.primary;
  const window = modelWindow(provider.model, limits.contextTokens);
  const budgetTokens = inputBudget(window, provider.maxTokens ?? null);
  const fixed = callTokens(provider.name, prompt.system, REVIEW_SCHEMA, []);
  // A context section as a part carries it: the part heading lists every other changed path.
  const measure = (c: PromptContext) =>
    estimateTokens(provider.name, chunkPrompt(c, { index: 0, files: [], tokens: 0 }, 2));
  const fitted = fitContext(prompt.context, Math.floor((budgetTokens - fixed) * 0.4), measure);
  const contextTokens = measure(fitted.ctx);
  // Diff tokens are counted with o200k when chunks are built: scale the room for a larger tokenizer.
  const room = Math.floor(
    (budgetTokens - fixed - contextTokens - DIFF_FRAME_TOKENS) / tokenScale(provider.name),
  );
  const chunkTokens = Math.max(500, Math.min(limits.chunkTokens, room));
  const parts = buildReviewInput(input.plan.files, {
    chunkTokens,
    fileTokens: Math.min(limits.fileTokens, chunkTokens),
    maxChunks: limits.maxChunks,
  });
  const cut = cutsLine(fitted.cuts, window, provider.model);
  if (cut) parts.missingValidations.push(cut);
  return { context: fitted.ctx, window, inputBudget: budgetTokens, contextTokens, chunkTokens, input: parts };
}

export const budgetStage: Stage<BudgetInput, Budgeted> = {
  name: 'budget',
  run: budget,
  counts: (b, input) => ({
    contextWindow: b.window.contextTokens,
    contextWindowSource: b.window.source,
    inputBudget: b.inputBudget,
    contextTokens: b.contextTokens,
    chunkTokens: b.chunkTokens,
    parts: b.input.chunks.length,
    notReviewed: b.input.notReviewed.length,
    clipped: b.input.clipped.length,
    // Memory and linked issues the model's window left out (beyond what their own budgets left out).
    memoryLeftOut: input.prompt.context.memory.length - b.context.memory.length,
    linkedIssuesLeftOut:
      (input.prompt.context.linkedIssues?.length ?? 0) - (b.context.linkedIssues?.length ?? 0),
  }),
};
