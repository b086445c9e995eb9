import type { ModelChoice, ProviderConfig } from '../../config/index.js';
import { AnthropicProvider } from './anthropic.js';
import { CodexProvider, DEFAULT_CODEX_MODEL, type SpawnFn } from './codex.js';
import { OpenAICompatibleProvider } from './openai-compatible.js';
import { DEFAULT_CATALOG_CACHE_MS, OpenRouterFreeGuard } from './openrouter-guard.js';
import { mergePrices } from './prices.js';
import type { ModelProvider, PriceTable, ProviderSelection } from './types.js';

/**
 * Provider selection of the Node worker entry point (review-engine 8): the providers the config chose
 * (`config.review.providers`, parsed and checked at start-up), built with their keys, base URLs and prices.
 * A missing API key or model does not stop start-up: the call fails with code `config`.
 */

/** OpenRouter's `HTTP-Referer` when `VERDICT_PUBLIC_URL` is unset. */
export const PROJECT_URL = 'https://github.com/verdict-app/verdict';
/** Sent to OpenRouter on every completion call, asking it to keep the request's metadata. */
export const OPENROUTER_METADATA_HEADER = 'X-OpenRouter-Metadata';

export type SelectOptions = {
  /** Replaces global fetch for every HTTP provider (the SDKs and the OpenRouter catalog). */
  fetch?: typeof fetch;
  /** Replaces child_process.spawn for the codex provider. */
  spawn?: SpawnFn;
  /** Clock for durations and the catalog cache. */
  now?: () => number;
  /** Prices to use instead of the built-in rates with the configured overrides. */
  prices?: PriceTable;
};

/** One provider instance for a provider and model choice. */
export function createProvider(
  config: ProviderConfig,
  { provider: name, model, modelVariable }: ModelChoice,
  opts: SelectOptions & { prices: PriceTable; reasoningEffort?: string },
): ModelProvider {
  const common = { modelVariable, prices: opts.prices, fetch: opts.fetch, now: opts.now };
  switch (name) {
    case 'openrouter':
    case 'openai': {
      const c = config[name];
      const openrouter = config.openrouter;
      return new OpenAICompatibleProvider({
        ...common,
        name,
        model: model ?? '',
        apiKey: c.apiKey,
        apiKeyVariable: c.apiKeyVariable,
        keyRequired: name === 'openai' ? config.openai.keyRequired : true,
        baseURL: c.baseUrl,
        maxTokens: config.maxTokens,
        ...(opts.reasoningEffort && { reasoningEffort: opts.reasoningEffort }),
        ...(name === 'openrouter' && {
          headers: {
            'HTTP-Referer': openrouter.appUrl ?? PROJECT_URL,
            'X-Title': openrouter.appName,
            [OPENROUTER_METADATA_HEADER]: 'enabled',
          },
          guard: openrouter.requireFree
            ? new OpenRouterFreeGuard({
                baseURL: openrouter.baseUrl,
                apiKey: openrouter.apiKey,
                fetch: opts.fetch,
                now: opts.now,
                cacheMs: DEFAULT_CATALOG_CACHE_MS,
                modelVariable,
              })
            : null,
        }),
      });
    }
    case 'anthropic': {
      const c = config.anthropic;
      return new AnthropicProvider({
        ...common,
        model: model ?? '',
        apiKey: c.apiKey,
        apiKeyVariable: c.apiKeyVariable,
        baseURL: c.baseUrl,
        version: c.version,
        maxTokens: c.maxTokens,
      });
    }
    case 'codex':
      return new CodexProvider({
        model: model ?? DEFAULT_CODEX_MODEL,
        bin: config.codex.bin,
        home: config.codex.home,
        ...(opts.reasoningEffort && { reasoningEffort: opts.reasoningEffort }),
        spawn: opts.spawn,
        now: opts.now,
      });
  }
}

/** The primary, the (optional) shadow and the (optional) verifier provider the config chose. */
export function selectProviders(config: ProviderConfig, opts: SelectOptions = {}): ProviderSelection {
  const prices = opts.prices ?? mergePrices(config.priceOverrides);
  return {
    primary: createProvider(config, config.primary, { ...opts, prices }),
    shadow: config.shadow && createProvider(config, config.shadow, { ...opts, prices }),
    verifier: config.verifier && createProvider(config, config.verifier, { ...opts, prices }),
  };
}
