import { ModelCallError, retryableStatus } from './types.js';

/**
 * The OpenRouter free-only guard (review-engine 7.3). Before every completion call it reads the model
 * catalog (`GET {base}/models`, cached per provider instance) and fails closed unless the catalog lists the
 * model with a numeric zero prompt AND completion price. It reads only the catalog: `VERDICT_MODEL_PRICES`
 * cannot make a paid model pass. Every failure is a ModelCallError with code `guard`; only a catalog that
 * could not be fetched (network, 408, 429, 5xx) is retryable.
 */

export const GUARD_PREFIX = 'OpenRouter free-only guard:';
export const DEFAULT_CATALOG_CACHE_MS = 10 * 60_000;

/** One entry of OpenRouter's `/models` answer (`{ data: [{ id, pricing: { prompt, completion, ... } }] }`). */
export type CatalogModel = { id: string; pricing?: { prompt?: unknown; completion?: unknown } | null };

export type OpenRouterGuardOptions = {
  baseURL: string;
  apiKey?: string | null;
  fetch?: typeof fetch;
  /** How long a fetched catalog is reused (default 10 minutes); failures are never cached. */
  cacheMs?: number;
  now?: () => number;
  /** The variable that names the model, for the "model is required" message. */
  modelVariable?: string;
};

/**
 * A guard failure. It always fails closed (no completion call); `retryable` only says whether the review
 * job may try again later: a catalog that could not be fetched (network, 408, 429, 5xx) may answer later,
 * a paid or unknown model will not.
 */
function guardError(message: string, retryable = false): ModelCallError {
  return new ModelCallError('guard', `${GUARD_PREFIX} ${message}`, {
    retryable,
    provider: 'openrouter',
  });
}

/** A price is free only when it is present and numerically zero ("0", "0.0" or 0). */
function isZeroPrice(value: unknown): boolean {
  if (typeof value === 'number') return value === 0;
  if (typeof value === 'string' && value.trim() !== '') return Number(value) === 0;
  return false;
}

function showPrice(value: unknown): string {
  if (value === undefined || value === null || value === '') return 'missing';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Checks one model against a catalog; throws the guard error when it is not listed or not free. */
export function assertFreeModel(model: string, catalog: ReadonlyMap<string, CatalogModel>): void {
  const entry = catalog.get(model);
  if (!entry) throw guardError(`model not found in the OpenRouter model list: ${model}`);
  const prompt = entry.pricing?.prompt;
  const completion = entry.pricing?.completion;
  if (!isZeroPrice(prompt) || !isZeroPrice(completion)) {
    throw guardError(
      `model ${model} is not free (prompt price ${showPrice(prompt)}, completion price ${showPrice(completion)}); ` +
        'set VERDICT_OPENROUTER_REQUIRE_FREE=0 to allow paid models',
    );
  }
}

export class OpenRouterFreeGuard {
  private cached: { at: number; models: Map<string, CatalogModel> } | null = null;
  private readonly cacheMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: OpenRouterGuardOptions) {
    this.cacheMs = opts.cacheMs ?? DEFAULT_CATALOG_CACHE_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Resolves when `model` is free; throws a `guard` ModelCallError otherwise. */
  async check(model: string, signal?: AbortSignal): Promise<void> {
    if (model.trim() === '') {
      throw guardError(`model is required (set ${this.opts.modelVariable ?? 'VERDICT_RUNNER_MODEL'})`);
    }
    assertFreeModel(model, await this.catalog(signal));
  }

  /** The catalog, from the cache while it is fresh. */
  async catalog(signal?: AbortSignal): Promise<Map<string, CatalogModel>> {
    const now = this.now();
    if (this.cached && now - this.cached.at < this.cacheMs) return this.cached.models;
    const models = await this.fetchCatalog(signal);
    this.cached = { at: now, models };
    return models;
  }

  private async fetchCatalog(signal?: AbortSignal): Promise<Map<string, CatalogModel>> {
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    let res: Response;
    try {
      res = await doFetch(`${this.opts.baseURL}/models`, { method: 'GET', headers, signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw guardError(`model list failed (${(error as Error).message})`, true);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw guardError(`model list failed with status ${res.status}`, retryableStatus(res.status));
    }
    let body: unknown;
    try {
      body = JSON.parse(await res.text());
    } catch (error) {
      if (signal?.aborted) throw error;
      throw guardError('model list returned invalid JSON');
    }
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) throw guardError('model list returned invalid JSON (no "data" array)');
    const models = new Map<string, CatalogModel>();
    for (const item of data) {
      if (item && typeof item === 'object' && typeof (item as CatalogModel).id === 'string') {
        models.set((item as CatalogModel).id, item as CatalogModel);
      }
    }
    return models;
  }
}
