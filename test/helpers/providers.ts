import { loadConfig, type ProcessEnv } from '../../src/config/index.js';
import { selectProviders, type SelectOptions } from '../../src/review/providers/index.js';

/** The providers the configuration of `env` selects; a bad value throws the ConfigError start-up would. */
export function providersFor(env: ProcessEnv, opts?: SelectOptions) {
  return selectProviders(loadConfig(env).review.providers, opts);
}
