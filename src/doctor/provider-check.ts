import type { Config, HttpProviderConfig, ModelChoice } from '../config/index.js';
import { DEFAULT_CODEX_MODEL } from '../review/providers/codex.js';
import { assertFreeModel, type CatalogModel } from '../review/providers/openrouter-guard.js';
import { findBinary } from '../validation/bubblewrap.js';
import {
  apiMessage,
  fail,
  getJson,
  message,
  networkError,
  ok,
  warn,
  type CheckDeps,
  type CheckResult,
} from './checks.js';

// --- model provider ---------------------------------------------------------------------------------------

/**
 * The provider `choice` names has what it needs (an API key and a model; codex: its binary) and, online,
 * answers its models list. `check` is `provider` for the primary, `shadow-provider` for the shadow, whose
 * findings are at most `warn` (its review is never published).
 */
export async function providerCheck(
  config: Config,
  choice: ModelChoice,
  check: string,
  deps: CheckDeps,
): Promise<CheckResult> {
  const result = await providerResult(config, choice, check, deps);
  return check === 'provider' || result.status !== 'fail' ? result : { ...result, status: 'warn' };
}

async function providerResult(
  config: Config,
  choice: ModelChoice,
  check: string,
  deps: CheckDeps,
): Promise<CheckResult> {
  const providers = config.review.providers;
  const { provider } = choice;
  const variable = check === 'provider' ? 'VERDICT_RUNNER_PROVIDER' : 'VERDICT_RUNNER_SHADOW_PROVIDER';
  if (provider === 'codex') return codexResult(config, choice, check, variable, deps);
  const http: HttpProviderConfig = providers[provider];
  const missing: string[] = [];
  // A local OpenAI-compatible server (VERDICT_OPENAI_BASE_URL not at api.openai.com) may run without a key.
  const keyless = provider === 'openai' && !providers.openai.keyRequired;
  if (http.apiKey === null && !keyless) missing.push(`an API key: set ${http.apiKeyVariable}`);
  if (choice.model === null)
    missing.push(`a model: set ${choice.modelVariable} (${provider} has no default)`);
  if (missing.length > 0) return fail(check, `${provider} needs ${missing.join(', and ')}`);
  const model = choice.model!;
  if (deps.offline) {
    const key = http.apiKey === null ? `no key (${http.baseUrl} needs none)` : 'key set';
    return ok(check, `${provider}, model ${model}, ${key} (${provider} not asked: ${deps.offlineNote})`);
  }
  const url = provider === 'anthropic' ? `${http.baseUrl}/models?limit=1000` : `${http.baseUrl}/models`;
  const headers: Record<string, string> =
    provider === 'anthropic'
      ? {
          accept: 'application/json',
          'x-api-key': http.apiKey!,
          'anthropic-version': providers.anthropic.version,
        }
      : {
          accept: 'application/json',
          ...(http.apiKey === null ? {} : { authorization: `Bearer ${http.apiKey}` }),
        };
  let answer: { status: number; body: unknown };
  try {
    answer = await getJson(deps, url, headers);
  } catch (error) {
    return fail(check, `${provider}: cannot reach ${url} (${networkError(error, deps.timeoutMs)})`);
  }
  if (answer.status === 401 || answer.status === 403) {
    return fail(
      check,
      `${provider} refused the API key at GET ${url} (${answer.status}${apiMessage(answer.body)}): set a valid ${http.apiKeyVariable}`,
    );
  }
  const data = (answer.body as { data?: unknown } | null)?.data;
  if (answer.status !== 200 || !Array.isArray(data)) {
    return fail(
      check,
      `${provider}: GET ${url} answered ${answer.status}${answer.status === 200 ? ' without a "data" list' : apiMessage(answer.body)}`,
    );
  }
  return catalogueResult(config, choice, check, `${provider} answered GET ${url}`, data);
}

/** The codex CLI on PATH (its login is checked at the first review). */
function codexResult(
  config: Config,
  choice: ModelChoice,
  check: string,
  variable: string,
  deps: CheckDeps,
): CheckResult {
  const bin = config.review.providers.codex.bin;
  const found = findBinary(bin, deps.env.PATH);
  if (!found) {
    return fail(
      check,
      `codex: the binary "${bin}" is not ${bin.includes('/') ? 'an executable file' : 'on PATH'}: install the Codex CLI and sign in (codex login), set VERDICT_RUNNER_BIN to its path, or set ${variable} to openrouter, openai or anthropic with its API key`,
    );
  }
  return ok(
    check,
    `codex: ${found} (model ${choice.model ?? DEFAULT_CODEX_MODEL}; its login is checked at the first review)`,
  );
}

/** The model among the provider's models (and free, when OpenRouter must use a free one). */
function catalogueResult(
  config: Config,
  choice: ModelChoice,
  check: string,
  answered: string,
  data: unknown[],
): CheckResult {
  const provider = choice.provider;
  const model = choice.model!;
  const catalog = new Map<string, CatalogModel>();
  for (const item of data) {
    if (item && typeof item === 'object' && typeof (item as CatalogModel).id === 'string') {
      catalog.set((item as CatalogModel).id, item as CatalogModel);
    }
  }
  const listed = `${answered} (${catalog.size} models)`;
  if (provider === 'openrouter' && config.review.providers.openrouter.requireFree) {
    try {
      assertFreeModel(model, catalog);
    } catch (error) {
      return fail(check, `${listed}, but ${message(error)}`);
    }
    return ok(check, `${listed}; model ${model} is listed and free`);
  }
  if (!catalog.has(model)) {
    return warn(check, `${listed}, but model ${model} is not among them: check ${choice.modelVariable}`);
  }
  return ok(check, `${listed}; model ${model} is listed`);
}
