/** The model providers (NAMES.md "Model providers"): one import point for the review engine and the config. */
export {
  PROVIDER_NAMES,
  ModelCallError,
  EMPTY_ANSWER_MESSAGE,
  retryableStatus,
  timeoutMessage,
  withDeadline,
  type ModelCallErrorCode,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelUsage,
  type PriceRate,
  type PriceTable,
  type ProviderName,
  type ProviderSelection,
} from './types.js';
export { BUILTIN_PRICES, costOf, mergePrices, priceFor } from './prices.js';
export {
  GUARD_PREFIX,
  DEFAULT_CATALOG_CACHE_MS,
  OpenRouterFreeGuard,
  assertFreeModel,
  type CatalogModel,
  type OpenRouterGuardOptions,
} from './openrouter-guard.js';
export { OpenAICompatibleProvider, type OpenAICompatibleOptions } from './openai-compatible.js';
export { AnthropicProvider, type AnthropicOptions } from './anthropic.js';
export {
  CodexProvider,
  DEFAULT_CODEX_MODEL,
  flattenPrompt,
  type CodexOptions,
  type SpawnFn,
} from './codex.js';
export {
  OPENROUTER_METADATA_HEADER,
  PROJECT_URL,
  createProvider,
  selectProviders,
  type SelectOptions,
} from './select.js';
