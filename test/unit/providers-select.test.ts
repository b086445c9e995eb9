import { ConfigError } from '../../src/config/index.js';
import {
  AnthropicProvider,
  CodexProvider,
  DEFAULT_CODEX_MODEL,
  ModelCallError,
  OpenAICompatibleProvider,
} from '../../src/review/providers/index.js';
import { providersFor } from '../helpers/providers.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('provider selection (Node worker entry point)', () => {
  test('defaults: codex with the built-in model, no shadow', () => {
    const { primary, shadow } = providersFor({});
    expect(primary).toBeInstanceOf(CodexProvider);
    expect(primary.name).toBe('codex');
    expect(primary.model).toBe(DEFAULT_CODEX_MODEL);
    expect(DEFAULT_CODEX_MODEL).toBe('gpt-5-codex');
    expect((primary as CodexProvider).bin).toBe('codex');
    expect(shadow).toBeNull();
  });

  test('VERDICT_RUNNER_PROVIDER and VERDICT_RUNNER_MODEL choose the provider and model', () => {
    expect(
      providersFor({ VERDICT_RUNNER_PROVIDER: 'openai', VERDICT_RUNNER_MODEL: 'gpt-4o' }).primary,
    ).toMatchObject({
      name: 'openai',
      model: 'gpt-4o',
    });
    const router = providersFor({
      VERDICT_RUNNER_PROVIDER: 'openrouter',
      VERDICT_RUNNER_MODEL: 'x/y:free',
    });
    expect(router.primary).toBeInstanceOf(OpenAICompatibleProvider);
    expect(router.primary).toMatchObject({ name: 'openrouter', model: 'x/y:free' });
    const claude = providersFor({
      VERDICT_RUNNER_PROVIDER: ' Anthropic ',
      VERDICT_RUNNER_MODEL: 'claude-sonnet-4',
    });
    expect(claude.primary).toBeInstanceOf(AnthropicProvider);
    expect(providersFor({ VERDICT_RUNNER_MODEL: 'gpt-5' }).primary).toMatchObject({
      name: 'codex',
      model: 'gpt-5',
    });
  });

  test('only the RUNNER_ pair is read; the native MODEL_PROVIDER / MODEL names are ignored', () => {
    const { primary } = providersFor({ VERDICT_MODEL_PROVIDER: 'openai', VERDICT_MODEL: 'gpt-4o' });
    expect(primary).toMatchObject({ name: 'codex', model: DEFAULT_CODEX_MODEL });
  });

  test('legacy REVIEWBOT_ names with the nullish fallback', () => {
    expect(
      providersFor({ REVIEWBOT_RUNNER_PROVIDER: 'anthropic', REVIEWBOT_RUNNER_MODEL: 'claude-opus-4' })
        .primary,
    ).toMatchObject({ name: 'anthropic', model: 'claude-opus-4' });
    // An empty canonical value does not fall through to the legacy one (and blank means the default).
    expect(
      providersFor({ VERDICT_RUNNER_PROVIDER: '', REVIEWBOT_RUNNER_PROVIDER: 'openai' }).primary.name,
    ).toBe('codex');
  });

  test('an unknown provider is a config error naming the variable and the four values', () => {
    const error = configError(() => providersFor({ VERDICT_RUNNER_PROVIDER: 'gemini' }));
    expect(error.variable).toBe('VERDICT_RUNNER_PROVIDER');
    expect(error.message).toBe(
      'Invalid configuration: VERDICT_RUNNER_PROVIDER must be one of openrouter, openai, anthropic, codex (got "gemini")',
    );
    // The spec's neutral word points at the real value.
    expect(configError(() => providersFor({ VERDICT_RUNNER_PROVIDER: 'gateway' })).message).toMatch(
      /\(got "gateway"; use "openrouter"\)/,
    );
    // The legacy variable is named when it supplied the value.
    expect(configError(() => providersFor({ REVIEWBOT_RUNNER_PROVIDER: 'cli' })).variable).toBe(
      'REVIEWBOT_RUNNER_PROVIDER',
    );
  });

  test('the shadow provider exists only with VERDICT_RUNNER_SHADOW_MODEL', () => {
    expect(providersFor({ VERDICT_RUNNER_SHADOW_PROVIDER: 'openai' }).shadow).toBeNull();
    expect(providersFor({ VERDICT_MODEL_SHADOW: 'gpt-4o' }).shadow).toBeNull();
    // Provider defaults to the primary's.
    const same = providersFor({
      VERDICT_RUNNER_PROVIDER: 'openai',
      VERDICT_RUNNER_MODEL: 'gpt-4o',
      VERDICT_RUNNER_SHADOW_MODEL: 'gpt-4o-mini',
    });
    expect(same.shadow).toMatchObject({ name: 'openai', model: 'gpt-4o-mini' });
    expect(same.shadow).not.toBe(same.primary);
    const other = providersFor({
      VERDICT_RUNNER_SHADOW_MODEL: 'claude-sonnet-4',
      VERDICT_RUNNER_SHADOW_PROVIDER: 'anthropic',
    });
    expect(other.primary.name).toBe('codex');
    expect(other.shadow).toBeInstanceOf(AnthropicProvider);
    expect(other.shadow).toMatchObject({ name: 'anthropic', model: 'claude-sonnet-4' });
  });

  test('an invalid shadow provider is a config error even without a shadow model', () => {
    expect(configError(() => providersFor({ VERDICT_RUNNER_SHADOW_PROVIDER: 'nope' })).variable).toBe(
      'VERDICT_RUNNER_SHADOW_PROVIDER',
    );
  });

  test('a missing API key does not fail selection; the call fails with code config naming the variable', async () => {
    for (const [provider, variable] of [
      ['openrouter', 'OPENROUTER_API_KEY'],
      ['openai', 'OPENAI_API_KEY'],
      ['anthropic', 'ANTHROPIC_API_KEY'],
    ] as const) {
      const { primary } = providersFor({
        VERDICT_RUNNER_PROVIDER: provider,
        VERDICT_RUNNER_MODEL: 'm',
        VERDICT_OPENROUTER_REQUIRE_FREE: '0',
      });
      const error = await primary
        .complete({ system: 's', messages: [{ role: 'user', content: 'u' }], timeoutMs: 1000 })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(ModelCallError);
      expect(error).toMatchObject({ code: 'config', retryable: false });
      expect((error as Error).message).toBe(
        `${variable} (or VERDICT_${variable}) is not set; provider ${provider} needs an API key`,
      );
    }
  });

  test('openai at another base URL than api.openai.com runs without a key, sending no Authorization header', async () => {
    const seen: Array<{ url: string; authorization: string | null }> = [];
    const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
      seen.push({ url: String(url), authorization: new Headers(init?.headers).get('authorization') });
      return new Response(
        JSON.stringify({
          id: 'chatcmpl-local',
          object: 'chat.completion',
          created: 1_750_000_000,
          model: 'qwen2.5-coder:7b',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: '{"overview":"ok"}', refusal: null },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    }) as typeof globalThis.fetch;
    const env = {
      VERDICT_RUNNER_PROVIDER: 'openai',
      VERDICT_RUNNER_MODEL: 'qwen2.5-coder:7b',
      VERDICT_OPENAI_BASE_URL: 'http://localhost:11434/v1',
    };
    const call = { system: 's', messages: [{ role: 'user' as const, content: 'u' }], timeoutMs: 5000 };
    const keyless = await providersFor(env, { fetch }).primary.complete(call);
    expect(keyless.text).toBe('{"overview":"ok"}');
    // A key that is set is still sent.
    await providersFor({ ...env, OPENAI_API_KEY: 'sk-local' }, { fetch }).primary.complete(call);
    expect(seen).toEqual([
      { url: 'http://localhost:11434/v1/chat/completions', authorization: null },
      { url: 'http://localhost:11434/v1/chat/completions', authorization: 'Bearer sk-local' },
    ]);
    // At OpenAI's own API the key stays required (the default base URL, or it named explicitly).
    for (const base of [{}, { VERDICT_OPENAI_BASE_URL: 'https://API.openai.com/v1' }]) {
      const { VERDICT_OPENAI_BASE_URL: _local, ...rest } = env;
      await expect(
        providersFor({ ...rest, ...base }, { fetch }).primary.complete(call),
      ).rejects.toMatchObject({ code: 'config' });
    }
    expect(seen).toHaveLength(2);
  });

  test('a missing model of an HTTP provider fails at call time with code config', async () => {
    const { primary } = providersFor({ VERDICT_RUNNER_PROVIDER: 'openai', OPENAI_API_KEY: 'k' });
    expect(primary.model).toBe('');
    await expect(primary.complete({ system: 's', messages: [], timeoutMs: 1000 })).rejects.toMatchObject({
      code: 'config',
      message: 'VERDICT_RUNNER_MODEL is required for provider openai',
    });
  });

  test('codex reads VERDICT_RUNNER_BIN and VERDICT_RUNNER_HOME', () => {
    const { primary } = providersFor({
      VERDICT_RUNNER_BIN: '/opt/codex/bin/codex',
      VERDICT_RUNNER_HOME: '/srv/codex',
    });
    expect((primary as CodexProvider).bin).toBe('/opt/codex/bin/codex');
    expect((primary as CodexProvider).args()).toEqual([
      'exec',
      '--skip-git-repo-check',
      '-m',
      'gpt-5-codex',
      '-',
    ]);
  });

  test.each([
    [{ VERDICT_OPENAI_BASE_URL: 'not a url', VERDICT_RUNNER_PROVIDER: 'openai' }, 'VERDICT_OPENAI_BASE_URL'],
    [
      { VERDICT_ANTHROPIC_BASE_URL: 'ftp://x', VERDICT_RUNNER_PROVIDER: 'anthropic' },
      'VERDICT_ANTHROPIC_BASE_URL',
    ],
    [
      { VERDICT_OPENROUTER_MAX_TOKENS: '0', VERDICT_RUNNER_PROVIDER: 'openai' },
      'VERDICT_OPENROUTER_MAX_TOKENS',
    ],
    [
      { VERDICT_ANTHROPIC_MAX_TOKENS: 'lots', VERDICT_RUNNER_PROVIDER: 'anthropic' },
      'VERDICT_ANTHROPIC_MAX_TOKENS',
    ],
    [{ VERDICT_MODEL_PRICES: '{"gpt-4o":{"input":-1,"output":1}}' }, 'VERDICT_MODEL_PRICES'],
  ])('invalid %p is a config error naming %s', (env, variable) => {
    expect(configError(() => providersFor(env)).variable).toBe(variable);
  });
});
