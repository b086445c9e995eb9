import { ConfigError, prefixed, type Env } from '../../config.js';
import { AnthropicProvider, DEFAULT_ANTHROPIC_MAX_TOKENS, DEFAULT_ANTHROPIC_VERSION } from './anthropic.js';
import { CodexProvider, DEFAULT_CODEX_BIN, DEFAULT_CODEX_MODEL, type SpawnFn } from './codex.js';
import { OpenAICompatibleProvider } from './openai-compatible.js';
import { DEFAULT_CATALOG_CACHE_MS, OpenRouterFreeGuard } from './openrouter-guard.js';
import { loadPrices } from './prices.js';
import {
  PROVIDER_NAMES,
  nonBlank,
  prefixedVariable,
  type ModelProvider,
  type PriceTable,
  type ProviderName,
  type ProviderSelection,
} from './types.js';

/**
 * Provider selection of the Node worker entry point (review-engine 8): the provider from
 * `VERDICT_RUNNER_PROVIDER` only (default `codex`), the model from `VERDICT_RUNNER_MODEL` (the codex
 * provider falls back to `gpt-5-codex`). The shadow provider exists only when `VERDICT_RUNNER_SHADOW_MODEL`
 * is set (provider `VERDICT_RUNNER_SHADOW_PROVIDER`, else the primary's). Invalid values throw a
 * ConfigError; a missing API key does not (the server must start): the call fails with code `config`.
 */

export const DEFAULT_PROVIDER: ProviderName = 'codex';
export const DEFAULT_OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
/** OpenRouter's `HTTP-Referer` when `VERDICT_PUBLIC_URL` is unset. */
export const PROJECT_URL = 'https://github.com/verdict-app/verdict';
/** Sent to OpenRouter on every completion call, asking it to keep the request's metadata. */
export const OPENROUTER_METADATA_HEADER = 'X-OpenRouter-Metadata';

/** The spec's neutral provider words, named in the error to point at the real value. */
const SPEC_WORDS: Record<string, ProviderName> = {
  gateway: 'openrouter',
  direct_a: 'openai',
  direct_b: 'anthropic',
  cli: 'codex',
};

export type SelectOptions = {
  /** Replaces global fetch for every HTTP provider (the SDKs and the OpenRouter catalog). */
  fetch?: typeof fetch;
  /** Replaces child_process.spawn for the codex provider. */
  spawn?: SpawnFn;
  /** Clock for durations and the catalog cache. */
  now?: () => number;
  /** Prices to use instead of `loadPrices(env)`. */
  prices?: PriceTable;
};

/** The provider named by a prefixed variable, or undefined when it is unset or blank. */
export function providerFromEnv(env: Env, name: string): ProviderName | undefined {
  const raw = nonBlank(prefixed(env, name));
  if (raw === undefined) return undefined;
  const value = raw.toLowerCase();
  if ((PROVIDER_NAMES as readonly string[]).includes(value)) return value as ProviderName;
  const hint = SPEC_WORDS[value] ? `; use "${SPEC_WORDS[value]}"` : '';
  throw new ConfigError(
    prefixedVariable(env, name),
    `must be one of ${PROVIDER_NAMES.join(', ')} (got "${raw}"${hint})`,
  );
}

function positiveInt(env: Env, name: string): number | undefined {
  const raw = nonBlank(prefixed(env, name));
  if (raw === undefined) return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 10_000_000) {
    throw new ConfigError(prefixedVariable(env, name), `must be a positive integer (got "${raw}")`);
  }
  return n;
}

/** A base URL without its trailing slash; throws for anything but http(s). */
function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = nonBlank(prefixed(env, name)) ?? fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(prefixedVariable(env, name), `must be an http:// or https:// URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(prefixedVariable(env, name), `must be an http:// or https:// URL (got "${raw}")`);
  }
  return url.href.replace(/\/+$/, '');
}

/** The API key: the bare variable first, then the prefixed alias (blank values count as unset). */
function apiKey(env: Env, bare: string): { value: string | null; variable: string } {
  return {
    value: nonBlank(env[bare]) ?? nonBlank(prefixed(env, bare)) ?? null,
    variable: `${bare} (or VERDICT_${bare})`,
  };
}

/** One provider instance for `name` and `model`; `modelVariable` is named in "model is required" errors. */
export function createProvider(
  env: Env,
  name: ProviderName,
  model: string | undefined,
  opts: SelectOptions & { prices: PriceTable; modelVariable?: string },
): ModelProvider {
  const modelVariable = opts.modelVariable ?? 'VERDICT_RUNNER_MODEL';
  const capTokens = positiveInt(env, 'OPENROUTER_MAX_TOKENS');
  switch (name) {
    case 'openrouter': {
      const key = apiKey(env, 'OPENROUTER_API_KEY');
      const base = baseUrl(env, 'OPENROUTER_BASE_URL', DEFAULT_OPENROUTER_BASE_URL);
      const requireFree = prefixed(env, 'OPENROUTER_REQUIRE_FREE') !== '0';
      return new OpenAICompatibleProvider({
        name,
        model: model ?? '',
        modelVariable,
        apiKey: key.value,
        apiKeyVariable: key.variable,
        baseURL: base,
        maxTokens: capTokens ?? null,
        prices: opts.prices,
        headers: {
          'HTTP-Referer': nonBlank(prefixed(env, 'PUBLIC_URL')) ?? PROJECT_URL,
          'X-Title': nonBlank(prefixed(env, 'PRODUCT_NAME')) ?? 'Verdict',
          [OPENROUTER_METADATA_HEADER]: 'enabled',
        },
        guard: requireFree
          ? new OpenRouterFreeGuard({
              baseURL: base,
              apiKey: key.value,
              fetch: opts.fetch,
              now: opts.now,
              cacheMs: DEFAULT_CATALOG_CACHE_MS,
              modelVariable,
            })
          : null,
        fetch: opts.fetch,
        now: opts.now,
      });
    }
    case 'openai': {
      const key = apiKey(env, 'OPENAI_API_KEY');
      return new OpenAICompatibleProvider({
        name,
        model: model ?? '',
        modelVariable,
        apiKey: key.value,
        apiKeyVariable: key.variable,
        baseURL: baseUrl(env, 'OPENAI_BASE_URL', DEFAULT_OPENAI_BASE_URL),
        maxTokens: capTokens ?? null,
        prices: opts.prices,
        fetch: opts.fetch,
        now: opts.now,
      });
    }
    case 'anthropic': {
      const key = apiKey(env, 'ANTHROPIC_API_KEY');
      return new AnthropicProvider({
        model: model ?? '',
        modelVariable,
        apiKey: key.value,
        apiKeyVariable: key.variable,
        baseURL: baseUrl(env, 'ANTHROPIC_BASE_URL', DEFAULT_ANTHROPIC_BASE_URL),
        version: nonBlank(prefixed(env, 'ANTHROPIC_VERSION')) ?? DEFAULT_ANTHROPIC_VERSION,
        maxTokens: capTokens ?? positiveInt(env, 'ANTHROPIC_MAX_TOKENS') ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
        prices: opts.prices,
        fetch: opts.fetch,
        now: opts.now,
      });
    }
    case 'codex':
      return new CodexProvider({
        model: model ?? DEFAULT_CODEX_MODEL,
        bin: nonBlank(prefixed(env, 'RUNNER_BIN')) ?? DEFAULT_CODEX_BIN,
        home: nonBlank(prefixed(env, 'RUNNER_HOME')) ?? null,
        spawn: opts.spawn,
        now: opts.now,
      });
  }
}

/** The primary and (optional) shadow provider from the environment. Throws ConfigError on invalid values. */
export function selectProviders(env: Env, opts: SelectOptions = {}): ProviderSelection {
  const prices = opts.prices ?? loadPrices(env);
  const provider = providerFromEnv(env, 'RUNNER_PROVIDER') ?? DEFAULT_PROVIDER;
  const primary = createProvider(env, provider, nonBlank(prefixed(env, 'RUNNER_MODEL')), {
    ...opts,
    prices,
    modelVariable: prefixedVariable(env, 'RUNNER_MODEL'),
  });
  // Validated even without a shadow model, so a typo never waits for the day the shadow is turned on.
  const shadowProvider = providerFromEnv(env, 'RUNNER_SHADOW_PROVIDER') ?? provider;
  const shadowModel = nonBlank(prefixed(env, 'RUNNER_SHADOW_MODEL'));
  const shadow =
    shadowModel === undefined
      ? null
      : createProvider(env, shadowProvider, shadowModel, {
          ...opts,
          prices,
          modelVariable: prefixedVariable(env, 'RUNNER_SHADOW_MODEL'),
        });
  return { primary, shadow };
}
