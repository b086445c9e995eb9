import {
  PROVIDER_NAMES,
  type ModelResponse,
  type ModelUsage,
  type PriceRate,
  type PriceTable,
  type ProviderName,
} from './types.js';

/**
 * Model prices (review-engine 8, "Costs"): USD per million input and output tokens. Built-in rates exist
 * for `openai` and `anthropic` only; `openrouter` and `codex` have none, so their cost stays null unless
 * `VERDICT_MODEL_PRICES` gives a rate. Rates are list prices for standard (non-batch, non-cached) tokens.
 */
export const BUILTIN_PRICES: Readonly<PriceTable> = Object.freeze({
  'openai/gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'openai/gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'openai/gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'openai/gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'openai/o3': { input: 2, output: 8, cachedInput: 0.5 },
  'openai/o3-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
  'openai/o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'openai/gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'openai/gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
  'openai/gpt-5-nano': { input: 0.05, output: 0.4, cachedInput: 0.005 },
  'openai/gpt-5.1': { input: 1.25, output: 10, cachedInput: 0.125 },
  'anthropic/claude-opus-4': { input: 15, output: 75 },
  'anthropic/claude-opus-4-1': { input: 15, output: 75 },
  'anthropic/claude-opus-4-5': { input: 5, output: 25 },
  'anthropic/claude-sonnet-4': { input: 3, output: 15 },
  'anthropic/claude-sonnet-4-5': { input: 3, output: 15 },
  'anthropic/claude-haiku-4-5': { input: 1, output: 5 },
  'anthropic/claude-3-7-sonnet': { input: 3, output: 15 },
  'anthropic/claude-3-5-sonnet': { input: 3, output: 15 },
  'anthropic/claude-3-5-haiku': { input: 0.8, output: 4 },
  'anthropic/claude-3-haiku': { input: 0.25, output: 1.25 },
  'anthropic/claude-3-opus': { input: 15, output: 75 },
});

/**
 * A dated or alias suffix that does not change the price: `-20250514`, `-2024-08-06`, `-latest`, `-0`
 * (`claude-sonnet-4-20250514` and `claude-sonnet-4-0` price as `claude-sonnet-4`).
 */
const VERSION_SUFFIX = /-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest|0)$/;

/** Whether a price key names a provider (`openai/gpt-4o`) rather than a bare model id. */
function isProviderQualified(key: string): boolean {
  const slash = key.indexOf('/');
  return slash > 0 && (PROVIDER_NAMES as readonly string[]).includes(key.slice(0, slash));
}

/**
 * The rate of one model. Lookup order: `provider/model`, bare `model`, then both again with a version
 * suffix removed. A bare lookup is skipped when the model id itself looks provider-qualified: the
 * OpenRouter model `openai/gpt-4o` is priced only by the key `openrouter/openai/gpt-4o`, never by the
 * built-in rate of the `openai` provider.
 */
export function priceFor(provider: ProviderName, model: string, prices: PriceTable): PriceRate | null {
  const candidates = [model];
  const stripped = model.replace(VERSION_SUFFIX, '');
  if (stripped !== model && stripped !== '') candidates.push(stripped);
  for (const id of candidates) {
    const qualified = prices[`${provider}/${id}`];
    if (qualified) return qualified;
    if (!isProviderQualified(id)) {
      const bare = prices[id];
      if (bare) return bare;
    }
  }
  return null;
}

/** cost = (input tokens x input rate + output tokens x output rate) / 1e6; null when anything is unknown. */
export function costOf(
  provider: ProviderName,
  model: string,
  usage: ModelUsage,
  prices: PriceTable,
): number | null {
  if (usage.inputTokens === null || usage.outputTokens === null) return null;
  const rate = priceFor(provider, model, prices);
  if (!rate) return null;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.inputTokens - cached);
  const plain = usage.inputTokens - cached - written;
  // Anthropic bills cache reads at a tenth of the input rate and cache writes at 1.25 times it; OpenAI
  // bills cached input at the model's `cachedInput` rate. Without a known discount, the full input rate.
  const cachedRate = rate.cachedInput ?? (provider === 'anthropic' ? rate.input * 0.1 : rate.input);
  const writeRate = provider === 'anthropic' ? rate.input * 1.25 : rate.input;
  return (
    (plain * rate.input + cached * cachedRate + written * writeRate + usage.outputTokens * rate.output) / 1e6
  );
}

/**
 * The built-in rates overridden by `VERDICT_MODEL_PRICES` (parsed and checked by the config). A bare model
 * key in the overrides replaces the built-in rate of that model for every provider.
 */
export function mergePrices(overrides: Readonly<PriceTable>): PriceTable {
  const table: PriceTable = { ...BUILTIN_PRICES };
  for (const [key, rate] of Object.entries(overrides)) {
    if (!isProviderQualified(key)) {
      for (const provider of PROVIDER_NAMES) delete table[`${provider}/${key}`];
    }
    table[key] = rate;
  }
  return table;
}

/** A token count an API reported, or null when it did not (never 0 for unknown). */
export function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/** The response of an HTTP provider: text, the reported usage, and its cost at the known rate. */
export function priced(
  provider: ProviderName,
  model: string,
  text: string,
  reported: { input: unknown; output: unknown; cached?: unknown; written?: unknown },
  prices: PriceTable,
  durationMs: number,
): ModelResponse {
  const usage: ModelUsage = {
    inputTokens: tokenCount(reported.input),
    outputTokens: tokenCount(reported.output),
  };
  const cached = tokenCount(reported.cached);
  const written = tokenCount(reported.written);
  if (cached !== null) usage.cachedInputTokens = cached;
  if (written !== null) usage.cacheWriteTokens = written;
  return { text, usage, costUsd: costOf(provider, model, usage, prices), provider, model, durationMs };
}
