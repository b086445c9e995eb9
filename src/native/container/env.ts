import { loadConfig, type Config } from '../../config/index.js';

/**
 * The review container's environment (review-engine 5.5 and 8 "Native forwarding"). The edge worker builds
 * the container's environment with `containerEnv` from this allow-list only: bare model keys (never the
 * `VERDICT_*_API_KEY` aliases), the native provider selection, the former model name (`VERDICT_MODEL`; the
 * `VERDICT_RUNNER_MODEL` name does not survive the projection), publish mode, the GitHub host, and the
 * validation executor with `VERDICT_CF_SANDBOX_ENABLED`. Provider base URLs, token caps, shadow selectors,
 * swarm/planner/evidence flags and prefixed key aliases are not forwarded.
 */
export const NATIVE_CONTAINER_ENV_ALLOWLIST = [
  'OPENROUTER_API_KEY',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'VERDICT_MODEL_PROVIDER',
  'VERDICT_RUNNER_PROVIDER',
  'VERDICT_MODEL',
  'VERDICT_PUBLISH_MODE',
  'VERDICT_PRODUCT_NAME',
  'VERDICT_BOT_HANDLES',
  'VERDICT_COMPETITOR_LOGINS',
  'VERDICT_RUNNER_TIMEOUT_MS',
  'VERDICT_GITHUB_RETRIES',
  'GHE_HOST',
  'GHE_PROTOCOL',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'MAX_ATTEMPTS',
  'VERDICT_VALIDATION_EXECUTOR',
  'VERDICT_CF_SANDBOX_ENABLED',
] as const;

/** The container's environment as the worker hands it over: the nonblank values of the allow-list. */
export function containerEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of NATIVE_CONTAINER_ENV_ALLOWLIST) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') out[name] = value;
  }
  // The sandbox flag is forwarded only as `1` (review-engine 8).
  if (out.VERDICT_CF_SANDBOX_ENABLED !== undefined && out.VERDICT_CF_SANDBOX_ENABLED !== '1') {
    delete out.VERDICT_CF_SANDBOX_ENABLED;
  }
  return out;
}

/** The keys the startup guard accepts: any supported provider's bare key or prefixed alias (5.5). */
const MODEL_KEYS = [
  'OPENROUTER_API_KEY',
  'VERDICT_OPENROUTER_API_KEY',
  'OPENAI_API_KEY',
  'VERDICT_OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'VERDICT_ANTHROPIC_API_KEY',
];

/** The spec's provider words, accepted beside this project's names (NAMES.md "Model providers"). */
const SPEC_PROVIDERS: Record<string, string> = {
  gateway: 'openrouter',
  direct_a: 'openai',
  direct_b: 'anthropic',
  cli: 'codex',
};

const nonblank = (value: string | undefined): string | undefined =>
  value !== undefined && value.trim() !== '' ? value.trim() : undefined;

/** Provider selection of the native container: `VERDICT_MODEL_PROVIDER`, `VERDICT_RUNNER_PROVIDER`, `gateway`. */
export function nativeProvider(env: Record<string, string | undefined>): string {
  const value = nonblank(env.VERDICT_MODEL_PROVIDER) ?? nonblank(env.VERDICT_RUNNER_PROVIDER) ?? 'gateway';
  return SPEC_PROVIDERS[value] ?? value;
}

/** Model of the native container: `VERDICT_MODEL`, then `VERDICT_RUNNER_MODEL`. */
export function nativeModel(env: Record<string, string | undefined>): string | undefined {
  return nonblank(env.VERDICT_MODEL) ?? nonblank(env.VERDICT_RUNNER_MODEL);
}

/**
 * The startup guard (review-engine 5.5): any supported model key will do, not only the selected
 * provider's; the `codex` provider uses its local login and always passes. Null when the guard passes.
 */
export function startupGuard(env: Record<string, string | undefined>): string | null {
  const provider = nativeProvider(env);
  if (provider === 'codex') return null;
  if (MODEL_KEYS.some((name) => nonblank(env[name]) !== undefined)) return null;
  return `review provider ${provider} selected but no model API key in env`;
}

/** `VERDICT_PUBLISH_MODE` of the container: code default `shadow`; anything but `live` is shadow. */
export function nativePublishMode(env: Record<string, string | undefined>): 'live' | 'shadow' {
  return nonblank(env.VERDICT_PUBLISH_MODE) === 'live' ? 'live' : 'shadow';
}

/**
 * The engine's configuration in the container: the project's config loader over the container's
 * environment, with the native provider selection, the container's publish mode, and GitHub reachable
 * (installation tokens come from the broker, so the engine reads GitHub as with App credentials).
 * Validation has no executor here: it is reported skipped as the Node runtime words it (docs/native.md).
 */
export function nativeConfig(env: Record<string, string | undefined>): Config {
  const model = nativeModel(env);
  const loaded = loadConfig({
    ...env,
    VERDICT_RUNNER_PROVIDER: nativeProvider(env),
    ...(model !== undefined ? { VERDICT_RUNNER_MODEL: model } : { VERDICT_RUNNER_MODEL: undefined }),
    VERDICT_DB_PATH: ':memory:',
    VERDICT_PUBLISH_MODE: nativePublishMode(env),
  });
  return {
    ...loaded,
    publishMode: nativePublishMode(env),
    github: { ...loaded.github, hasCredentials: true },
    validation: { ...loaded.validation, enabled: false, switch: 'auto' },
  };
}
