import { tokensOf } from './context.js';
import { severityRank } from './output.schema.js';
import type { ModelMessage } from './providers/index.js';
import type { PromptContext } from './prompt.js';

/**
 * The whole prompt in budget (the review issue, item 3): every call counts its system prompt, schema,
 * PR text, instructions, memory, prior findings, competitor text and diff against the model's context
 * window, less the room kept for the answer. Windows come from a table of the common models of each
 * provider, overridable with `VERDICT_MODEL_CONTEXT_TOKENS`.
 */

export type ModelWindow = {
  /** Tokens the model takes in one call, input and output together. */
  contextTokens: number;
  /** Tokens the model can answer at most. */
  outputTokens: number;
  source: 'table' | 'VERDICT_MODEL_CONTEXT_TOKENS' | 'default';
};

/** Context windows and output limits of the common models (tokens), by model id prefix, longest first. */
export const MODEL_WINDOWS: ReadonlyArray<[string, number, number]> = [
  ['gpt-4o-mini', 128_000, 16_384],
  ['gpt-4o', 128_000, 16_384],
  ['gpt-4.1-mini', 1_047_576, 32_768],
  ['gpt-4.1-nano', 1_047_576, 32_768],
  ['gpt-4.1', 1_047_576, 32_768],
  ['gpt-5-codex', 400_000, 128_000],
  ['gpt-5-mini', 400_000, 128_000],
  ['gpt-5-nano', 400_000, 128_000],
  ['gpt-5.1', 400_000, 128_000],
  ['gpt-5', 400_000, 128_000],
  ['o3-mini', 200_000, 100_000],
  ['o4-mini', 200_000, 100_000],
  ['o3', 200_000, 100_000],
  ['claude-opus-4-5', 200_000, 64_000],
  ['claude-opus-4-1', 200_000, 32_000],
  ['claude-opus-4', 200_000, 32_000],
  ['claude-sonnet-4-5', 200_000, 64_000],
  ['claude-sonnet-4', 200_000, 64_000],
  ['claude-haiku-4-5', 200_000, 64_000],
  ['claude-3-7-sonnet', 200_000, 64_000],
  ['claude-3-5-sonnet', 200_000, 8_192],
  ['claude-3-5-haiku', 200_000, 8_192],
  ['claude-3-haiku', 200_000, 4_096],
  ['claude-3-opus', 200_000, 4_096],
  ['llama-3.3-70b', 131_072, 8_192],
  ['deepseek', 128_000, 8_192],
  ['qwen', 131_072, 8_192],
  ['gemini-2.5', 1_048_576, 65_536],
  ['mistral', 128_000, 8_192],
];

/** A model not in the table: a window most current models have, so that nothing is sent over it. */
export const DEFAULT_WINDOW = { contextTokens: 128_000, outputTokens: 8_192 };

/** The answer room kept when no output cap is configured (a review answer rarely needs more). */
export const DEFAULT_ANSWER_TOKENS = 16_384;

/** The share of the window never filled, for the tokenizer's error. */
const MARGIN = 0.05;

/** The window of a model: `VERDICT_MODEL_CONTEXT_TOKENS` when set, else the table, else the default. */
export function modelWindow(model: string, override: number | null = null): ModelWindow {
  const id = model.toLowerCase().split('/').pop() ?? '';
  const row = MODEL_WINDOWS.find(([prefix]) => id.startsWith(prefix));
  const base = row ? { contextTokens: row[1], outputTokens: row[2] } : DEFAULT_WINDOW;
  if (override !== null) {
    return {
      contextTokens: override,
      outputTokens: Math.min(base.outputTokens, override),
      source: 'VERDICT_MODEL_CONTEXT_TOKENS',
    };
  }
  return { ...base, source: row ? 'table' : 'default' };
}

/**
 * Tokens of a text for a provider's budget. Counted with the o200k tokenizer (OpenAI's); Anthropic's
 * tokenizer is not published and gives more tokens for the same code, so its count is the o200k count
 * times 1.25, rounded up (an estimate that errs on the large side).
 */
export function estimateTokens(provider: string, text: string): number {
  const n = tokensOf(text);
  const scale = tokenScale(provider);
  return scale === 1 ? n : Math.ceil(n * scale);
}

/** How many of a provider's tokens one o200k token is taken to be (Anthropic: 1.25, an estimate). */
export function tokenScale(provider: string): number {
  return provider === 'anthropic' ? 1.25 : 1;
}

/** Input tokens one call may send: the window, less the answer's room and a margin. */
export function inputBudget(window: ModelWindow, answerTokens: number | null): number {
  // The answer's room never takes more than a quarter of the window.
  const answer = Math.min(
    window.outputTokens,
    answerTokens ?? DEFAULT_ANSWER_TOKENS,
    Math.floor(window.contextTokens / 4),
  );
  return Math.max(1000, Math.floor((window.contextTokens - answer) * (1 - MARGIN)));
}

/** Tokens a call sends: system prompt, schema and every message. */
export function callTokens(
  provider: string,
  system: string,
  schema: Record<string, unknown> | undefined,
  messages: readonly ModelMessage[],
): number {
  const text = [system, schema ? JSON.stringify(schema) : '', ...messages.map((m) => m.content)].join('\n');
  return estimateTokens(provider, text);
}

export type ContextCut = { what: string; count: number };

/**
 * Fits the context sections of the prompt (everything but the diff) into `maxTokens`: competitor reviews
 * are left out first, then linked issues, then memory (contexts and knowledge documents, from the end
 * of their order: memory.ts), then instruction files, then prior findings (the most severe are kept),
 * then the description is shortened. Returns the fitted context and what was cut, to be named in
 * `missingValidations`.
 */
export function fitContext(
  ctx: PromptContext,
  maxTokens: number,
  measure: (ctx: PromptContext) => number,
): { ctx: PromptContext; cuts: ContextCut[] } {
  let fitted = { ...ctx };
  const cuts: ContextCut[] = [];
  const cut = (what: string, n: number) => {
    if (n <= 0) return;
    const existing = cuts.find((c) => c.what === what);
    if (existing) existing.count += n;
    else cuts.push({ what, count: n });
  };
  fitted.prior = [...fitted.prior].sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  // Each list keeps its first half until it fits: the first items are the ones to keep.
  const shrink = (key: 'competitors' | 'linkedIssues' | 'memory' | 'prior', what: string) => {
    const length = () => fitted[key]?.length ?? 0;
    while (length() > 0 && measure(fitted) > maxTokens) {
      const keep = Math.floor(length() / 2);
      cut(what, length() - keep);
      fitted = { ...fitted, [key]: fitted[key]!.slice(0, keep) };
    }
  };
  if (measure(fitted) <= maxTokens) return { ctx: ctx, cuts };
  shrink('competitors', 'review(s) by other review bots');
  shrink('linkedIssues', 'linked issue(s)');
  shrink('memory', 'memory item(s)');
  while ((fitted.instructions?.length ?? 0) > 0 && measure(fitted) > maxTokens) {
    cut('repository instruction file(s)', 1);
    fitted = { ...fitted, instructions: fitted.instructions!.slice(0, -1) };
  }
  shrink('prior', 'prior finding(s) to dispose of');
  while (measure(fitted) > maxTokens && fitted.body.length > 200) {
    fitted = {
      ...fitted,
      body: `${fitted.body.slice(0, Math.floor(fitted.body.length / 2))}\n… [shortened by Verdict]`,
    };
    if (!cuts.some((c) => c.what === 'the description, shortened'))
      cuts.push({ what: 'the description, shortened', count: 1 });
  }
  return { ctx: fitted, cuts };
}

/** The missing-validation line naming what the budget left out of the prompt. */
export function cutsLine(cuts: readonly ContextCut[], window: ModelWindow, model: string): string | null {
  if (cuts.length === 0) return null;
  const what = cuts.map((c) => (c.what.startsWith('the ') ? c.what : `${c.count} ${c.what}`)).join(', ');
  return `Left out of the prompt to stay within ${model}'s context window (${window.contextTokens} tokens): ${what}.`;
}
