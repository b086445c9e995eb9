import { loadConfig, type Config } from '../../config/index.js';

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
 * Validation is on: its commands run in the run's sandbox through `sandbox.internal` when
 * `VERDICT_CF_SANDBOX_ENABLED=1`, else it reports "no sandbox binding available" (sandbox.ts).
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
    validation: { ...loaded.validation, enabled: true, switch: 'auto' },
  };
}
