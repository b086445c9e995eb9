/** The model providers (NAMES.md "Model providers"): one import point for the review engine and the config. */
export {
  ModelCallError,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ProviderSelection,
  type SchemaName,
} from './types.js';
export { BUILTIN_PRICES, costOf, mergePrices, priceFor } from './prices.js';
export { OpenAICompatibleProvider } from './openai-compatible.js';
export { AnthropicProvider } from './anthropic.js';
export { CodexProvider, DEFAULT_CODEX_MODEL } from './codex.js';
export { selectProviders, type SelectOptions } from './select.js';
