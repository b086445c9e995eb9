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
