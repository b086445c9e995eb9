import type { ProviderConfig } from '../../config/index.js';
import { mergePrices } from './prices.js';
import { createProvider, type SelectOptions } from './select.js';
import {
  ModelCallError,
  PROVIDER_NAMES,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ProviderName,
  type ProviderSelection,
} from './types.js';

/**
 * The operator repository configuration's `model` (operator-api 2.8, NAMES.md "Operator repository
 * configuration takes effect"): the provider and model that review that repository, a fallback provider and
 * model used when the first fails with an error another attempt could fix, and the reasoning effort where
 * the provider takes one. It wins over the server's `VERDICT_RUNNER_*` for that repository
 * (docs/configuration.md "Per repository").
 */

/** The reasoning efforts `PATCH /repos` accepts (OpenAI's and OpenRouter's words). */
export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export type RepoModel = {
  provider?: ProviderName;
  model?: string;
  fallbackProvider?: ProviderName;
  fallbackModel?: string;
  reasoningEffort?: ReasoningEffort;
};

const isProvider = (v: unknown): v is ProviderName =>
  typeof v === 'string' && (PROVIDER_NAMES as readonly string[]).includes(v);
const isEffort = (v: unknown): v is ReasoningEffort =>
  typeof v === 'string' && (REASONING_EFFORTS as readonly string[]).includes(v);
const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/**
 * The stored configuration's `model` section, keeping only what is usable (a value stored before the API
 * validated it is ignored, never a crash); null when it changes nothing.
 */
export function repoModelOf(config: Record<string, unknown> | null | undefined): RepoModel | null {
  const m = config?.model;
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return null;
  const raw = m as Record<string, unknown>;
  const out: RepoModel = {
    ...(isProvider(raw.provider) && { provider: raw.provider }),
    ...(text(raw.model) && { model: text(raw.model) }),
    ...(isProvider(raw.fallbackProvider) && { fallbackProvider: raw.fallbackProvider }),
    ...(text(raw.fallbackModel) && { fallbackModel: text(raw.fallbackModel) }),
    ...(isEffort(raw.reasoningEffort) && { reasoningEffort: raw.reasoningEffort }),
  };
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * A provider that answers with `fallback` when `primary` fails with a retryable error (timeout, 408, 409,
 * 429, 5xx, network). Each answer names who gave it (`ModelResponse.provider`/`model`), so spans and costs
 * show the model that answered; `fellBack` counts the calls that needed the fallback.
 */
export class FallbackProvider implements ModelProvider {
  fellBack = 0;

  constructor(
    readonly primary: ModelProvider,
    readonly fallback: ModelProvider,
  ) {}

  get name() {
    return this.primary.name;
  }

  get model() {
    return this.primary.model;
  }

  get maxTokens() {
    return this.primary.maxTokens;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    try {
      return await this.primary.complete(req);
    } catch (error) {
      if (!(error instanceof ModelCallError) || !error.retryable || req.signal?.aborted) throw error;
      this.fellBack += 1;
      return this.fallback.complete(req);
    }
  }
}

/**
 * The providers that review a repository: the server's, or with the repository's `model` set, its provider
 * and model (a provider without a model keeps the server's model only when it is the server's provider),
 * its reasoning effort, and its fallback. The shadow stays the server's; the verifier too when the provider
 * is unchanged (a `VERDICT_VERIFIER_MODEL` names a model of the server's provider), else the repository's
 * primary verifies.
 */
export function providersForRepo(
  base: ProviderSelection,
  config: ProviderConfig,
  repoModel: RepoModel | null,
  opts: SelectOptions = {},
): ProviderSelection {
  if (!repoModel) return base;
  const prices = opts.prices ?? mergePrices(config.priceOverrides);
  const make = (provider: ProviderName, model: string | undefined, samePrimary: boolean) =>
    createProvider(
      config,
      {
        provider,
        model: model ?? (samePrimary ? config.primary.model : null),
        modelVariable: 'the repository configuration model.model',
      },
      { ...opts, prices, reasoningEffort: repoModel.reasoningEffort },
    );
  const provider = repoModel.provider ?? config.primary.provider;
  const sameProvider = provider === config.primary.provider;
  const changesPrimary =
    repoModel.provider !== undefined ||
    repoModel.model !== undefined ||
    repoModel.reasoningEffort !== undefined;
  let primary = changesPrimary ? make(provider, repoModel.model, sameProvider) : base.primary;
  if (repoModel.fallbackProvider !== undefined || repoModel.fallbackModel !== undefined) {
    const fallbackProvider = repoModel.fallbackProvider ?? provider;
    const fallback = make(
      fallbackProvider,
      repoModel.fallbackModel,
      fallbackProvider === config.primary.provider,
    );
    primary = new FallbackProvider(primary, fallback);
  }
  return {
    primary,
    shadow: base.shadow,
    verifier: sameProvider ? (base.verifier ?? null) : null,
  };
}
