import { NATIVE_CONTAINER_ENV_ALLOWLIST, containerEnv } from '../../../src/native/forwarding.js';
import {
  nativeConfig,
  nativeModel,
  nativeProvider,
  nativePublishMode,
  startupGuard,
} from '../../../src/native/container/env.js';

/** review-engine 5.5 and 8: what reaches the container, its startup guard, provider and publish mode. */
describe('native container environment', () => {
  it('forwards only nonblank values of the allow-list: bare keys, never aliases, base URLs or caps', () => {
    const env = {
      OPENAI_API_KEY: 'sk-bare',
      VERDICT_OPENAI_API_KEY: 'sk-alias',
      ANTHROPIC_API_KEY: '  ',
      VERDICT_MODEL_PROVIDER: 'openai',
      VERDICT_MODEL: 'gpt-4o-mini',
      VERDICT_RUNNER_MODEL: 'other-model',
      VERDICT_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
      VERDICT_OPENROUTER_MAX_TOKENS: '100',
      VERDICT_RUNNER_SHADOW_MODEL: 'shadow-model',
      VERDICT_HYPOTHESIS_PLANNER: '1',
      VERDICT_EVIDENCE_ARTIFACTS: '1',
      PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----',
      APP_ID: '123',
      DATABASE_URL: 'postgres://x',
      VERDICT_PUBLISH_MODE: 'live',
      VERDICT_CF_SANDBOX_ENABLED: '1',
    };
    expect(containerEnv(env)).toEqual({
      OPENAI_API_KEY: 'sk-bare',
      VERDICT_MODEL_PROVIDER: 'openai',
      VERDICT_MODEL: 'gpt-4o-mini',
      VERDICT_PUBLISH_MODE: 'live',
      VERDICT_CF_SANDBOX_ENABLED: '1',
    });
    expect(containerEnv({ VERDICT_CF_SANDBOX_ENABLED: 'true' })).toEqual({});
    for (const name of NATIVE_CONTAINER_ENV_ALLOWLIST) {
      expect(name).not.toMatch(/^VERDICT_.*_API_KEY$|_BASE_URL$|MAX_TOKENS|SHADOW|PRIVATE_KEY|APP_ID/);
    }
  });

  it('startup guard: any supported key passes, none fails with the spec’s words; codex needs none', () => {
    expect(startupGuard({})).toBe('review provider openrouter selected but no model API key in env');
    expect(startupGuard({ VERDICT_MODEL_PROVIDER: 'anthropic', OPENAI_API_KEY: ' ' })).toBe(
      'review provider anthropic selected but no model API key in env',
    );
    // Not the selected provider's key: any supported one.
    expect(startupGuard({ VERDICT_MODEL_PROVIDER: 'anthropic', OPENROUTER_API_KEY: 'k' })).toBeNull();
    expect(startupGuard({ VERDICT_OPENAI_API_KEY: 'k' })).toBeNull();
    expect(startupGuard({ VERDICT_MODEL_PROVIDER: 'codex' })).toBeNull();
  });

  it('provider: VERDICT_MODEL_PROVIDER, then VERDICT_RUNNER_PROVIDER, default gateway (openrouter)', () => {
    expect(nativeProvider({})).toBe('openrouter');
    expect(nativeProvider({ VERDICT_RUNNER_PROVIDER: 'anthropic' })).toBe('anthropic');
    expect(nativeProvider({ VERDICT_MODEL_PROVIDER: 'openai', VERDICT_RUNNER_PROVIDER: 'anthropic' })).toBe(
      'openai',
    );
    expect(nativeProvider({ VERDICT_MODEL_PROVIDER: 'direct_b' })).toBe('anthropic');
    expect(nativeModel({ VERDICT_MODEL: 'a', VERDICT_RUNNER_MODEL: 'b' })).toBe('a');
    expect(nativeModel({ VERDICT_MODEL: ' ', VERDICT_RUNNER_MODEL: 'b' })).toBe('b');
  });

  it('publish mode: code default shadow, live only when set so', () => {
    expect(nativePublishMode({})).toBe('shadow');
    expect(nativePublishMode({ VERDICT_PUBLISH_MODE: 'live' })).toBe('live');
    expect(nativePublishMode({ VERDICT_PUBLISH_MODE: 'loud' })).toBe('shadow');
  });

  it('maps the native selection onto the engine config, without App credentials', () => {
    const config = nativeConfig({
      VERDICT_MODEL_PROVIDER: 'openai',
      VERDICT_MODEL: 'gpt-4o-mini',
      OPENAI_API_KEY: 'sk',
      VERDICT_PUBLISH_MODE: 'live',
    });
    expect(config.review.providers.primary).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(config.publishMode).toBe('live');
    expect(config.github.privateKey).toBeNull();
    // Validation is on: its executors are the sandbox's (src/native/container/sandbox.ts).
    expect(config.validation).toMatchObject({ enabled: true, switch: 'auto' });
    expect(nativeConfig({ OPENROUTER_API_KEY: 'k' }).publishMode).toBe('shadow');
  });
});
