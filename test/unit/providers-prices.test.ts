import { ConfigError, loadConfig, type ProcessEnv } from '../../src/config/index.js';
import { BUILTIN_PRICES, costOf, mergePrices, priceFor } from '../../src/review/providers/index.js';
import type { PriceRate, ProviderName } from '../../src/review/providers/types.js';

/** The price table the configuration of `env` gives: the built-in rates with `VERDICT_MODEL_PRICES`. */
const loadPrices = (env: ProcessEnv) => mergePrices(loadConfig(env).review.providers.priceOverrides);

const usage = (inputTokens: number | null, outputTokens: number | null) => ({ inputTokens, outputTokens });

describe('model prices', () => {
  test('cost = (input x input rate + output x output rate) / 1e6', () => {
    const prices = loadPrices({});
    // gpt-4o: 2.5 / 10 USD per million tokens.
    expect(costOf('openai', 'gpt-4o', usage(1000, 500), prices)).toBeCloseTo(
      (1000 * 2.5 + 500 * 10) / 1e6,
      12,
    );
    expect(costOf('openai', 'gpt-4o-mini', usage(1_000_000, 1_000_000), prices)).toBeCloseTo(0.75, 12);
    // claude-sonnet-4: 3 / 15.
    expect(costOf('anthropic', 'claude-sonnet-4', usage(2000, 1000), prices)).toBeCloseTo(0.021, 12);
    // Known usage of zero tokens at a known rate is a known zero.
    expect(costOf('openai', 'gpt-4o', usage(0, 0), prices)).toBe(0);
  });

  test('null, never 0, when usage or the rate is unknown', () => {
    const prices = loadPrices({});
    expect(costOf('openai', 'gpt-4o', usage(null, 10), prices)).toBeNull();
    expect(costOf('openai', 'gpt-4o', usage(10, null), prices)).toBeNull();
    expect(costOf('openai', 'some-future-model', usage(10, 10), prices)).toBeNull();
    // No built-in rates for openrouter and codex.
    expect(costOf('openrouter', 'openai/gpt-4o', usage(10, 10), prices)).toBeNull();
    expect(costOf('openrouter', 'gpt-4o', usage(10, 10), prices)).toBeNull();
    expect(costOf('codex', 'gpt-5-codex', usage(10, 10), prices)).toBeNull();
    expect(costOf('codex', 'gpt-5', usage(10, 10), prices)).toBeNull();
  });

  // The last two: a different model that merely starts with a known id is not priced by it.
  test.each<[ProviderName, string, PriceRate | null]>([
    ['anthropic', 'claude-sonnet-4-20250514', { input: 3, output: 15 }],
    ['anthropic', 'claude-sonnet-4-0', { input: 3, output: 15 }],
    ['anthropic', 'claude-opus-4-1-20250805', { input: 15, output: 75 }],
    ['anthropic', 'claude-3-5-haiku-latest', { input: 0.8, output: 4 }],
    ['openai', 'gpt-4o-2024-08-06', { input: 2.5, output: 10, cachedInput: 1.25 }],
    ['openai', 'gpt-4o-mini-2024-07-18', { input: 0.15, output: 0.6, cachedInput: 0.075 }],
    ['openai', 'o4-mini-2025-04-16', { input: 1.1, output: 4.4, cachedInput: 0.275 }],
    ['openai', 'gpt-4o-audio-preview', null],
    ['anthropic', 'claude-sonnet-4-7', null],
  ])('dated and alias model ids price as their base model: %s %s', (provider, model, rate) => {
    expect(priceFor(provider, model, loadPrices({}))).toEqual(rate);
  });

  test('built-in rates cover the listed openai and anthropic models', () => {
    for (const id of ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini']) {
      expect(BUILTIN_PRICES[`openai/${id}`]).toBeDefined();
    }
    for (const id of ['claude-sonnet-4', 'claude-opus-4', 'claude-3-5-haiku']) {
      expect(BUILTIN_PRICES[`anthropic/${id}`]).toBeDefined();
    }
    expect(
      Object.keys(BUILTIN_PRICES).every((k) => k.startsWith('openai/') || k.startsWith('anthropic/')),
    ).toBe(true);
  });

  test('VERDICT_MODEL_PRICES overrides and adds rates, keyed provider/model or bare model', () => {
    const prices = loadPrices({
      VERDICT_MODEL_PRICES: JSON.stringify({
        'openai/gpt-4o': { input: 1, output: 2 },
        'openrouter/meta-llama/llama-3.3-70b-instruct': { input: 0.1, output: 0.2 },
        'gpt-4.1': { input: 3, output: 4 },
        'my-local-model': { input: 0, output: 0 },
      }),
    });
    expect(costOf('openai', 'gpt-4o', usage(1_000_000, 1_000_000), prices)).toBe(3);
    expect(
      costOf('openrouter', 'meta-llama/llama-3.3-70b-instruct', usage(1_000_000, 0), prices),
    ).toBeCloseTo(0.1);
    // A bare key replaces the built-in rate for every provider.
    expect(priceFor('openai', 'gpt-4.1', prices)).toEqual({ input: 3, output: 4 });
    expect(priceFor('openrouter', 'gpt-4.1', prices)).toEqual({ input: 3, output: 4 });
    // An explicit zero rate is a known zero cost.
    expect(costOf('codex', 'my-local-model', usage(10, 10), prices)).toBe(0);
    // Built-ins not overridden stay.
    expect(priceFor('openai', 'gpt-4o-mini', prices)).toEqual({
      input: 0.15,
      output: 0.6,
      cachedInput: 0.075,
    });
  });

  test("an OpenRouter model id that looks provider-qualified is priced only by openrouter's own key", () => {
    const prices = loadPrices({});
    expect(priceFor('openrouter', 'openai/gpt-4o', prices)).toBeNull();
    const withRate = loadPrices({
      VERDICT_MODEL_PRICES: JSON.stringify({ 'openrouter/openai/gpt-4o': { input: 2.5, output: 10 } }),
    });
    expect(costOf('openrouter', 'openai/gpt-4o', usage(1000, 1000), withRate)).toBeCloseTo(0.0125, 12);
    expect(priceFor('openai', 'gpt-4o', withRate)).toEqual({ input: 2.5, output: 10, cachedInput: 1.25 });
  });

  test('the legacy REVIEWBOT_MODEL_PRICES is read when the canonical one is unset; blank means none', () => {
    const legacy = loadPrices({ REVIEWBOT_MODEL_PRICES: '{"x-model":{"input":1,"output":1}}' });
    expect(priceFor('openai', 'x-model', legacy)).toEqual({ input: 1, output: 1 });
    // An empty canonical value does not fall through to the legacy one.
    const blank = loadPrices({
      VERDICT_MODEL_PRICES: '',
      REVIEWBOT_MODEL_PRICES: '{"x-model":{"input":1,"output":1}}',
    });
    expect(priceFor('openai', 'x-model', blank)).toBeNull();
    expect(loadPrices({ VERDICT_MODEL_PRICES: '  ' })).toEqual(BUILTIN_PRICES);
  });

  test.each([
    ['not json', /VERDICT_MODEL_PRICES must be a JSON object/],
    ['[1,2]', /VERDICT_MODEL_PRICES must be a JSON object/],
    ['"gpt-4o"', /VERDICT_MODEL_PRICES must be a JSON object/],
    ['{"gpt-4o": 3}', /VERDICT_MODEL_PRICES entry "gpt-4o" must be an object/],
    [
      '{"gpt-4o": {"input": -1, "output": 2}}',
      /VERDICT_MODEL_PRICES entry "gpt-4o" needs "input" as a finite, non-negative/,
    ],
    ['{"gpt-4o": {"input": 1, "output": 1e999}}', /"output" as a finite, non-negative number .*got null/],
    ['{"gpt-4o": {"input": "1", "output": 2}}', /needs "input"/],
    ['{"gpt-4o": {"input": 1}}', /needs "output" .*got nothing/],
    ['{"": {"input": 1, "output": 1}}', /empty model key/],
  ])('invalid VERDICT_MODEL_PRICES %s is a config error naming the variable', (raw, message) => {
    let error: unknown;
    try {
      loadPrices({ VERDICT_MODEL_PRICES: raw });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('VERDICT_MODEL_PRICES');
    expect((error as Error).message).toMatch(message);
  });

  test('an invalid legacy value names the legacy variable', () => {
    expect(() => loadPrices({ REVIEWBOT_MODEL_PRICES: '{' })).toThrow(
      /REVIEWBOT_MODEL_PRICES must be a JSON object/,
    );
  });
});

describe('cached input tokens', () => {
  const prices = loadPrices({});
  test('OpenAI cached input at the model rate, Anthropic cache reads at a tenth and writes at 1.25x', () => {
    const openai = costOf(
      'openai',
      'gpt-4o',
      { inputTokens: 1000, outputTokens: 0, cachedInputTokens: 800 },
      prices,
    );
    expect(openai).toBeCloseTo((200 * 2.5 + 800 * 1.25) / 1e6, 12);
    const anthropic = costOf(
      'anthropic',
      'claude-sonnet-4',
      { inputTokens: 1000, outputTokens: 10, cachedInputTokens: 600, cacheWriteTokens: 300 },
      prices,
    );
    expect(anthropic).toBeCloseTo((100 * 3 + 600 * 0.3 + 300 * 3.75 + 10 * 15) / 1e6, 12);
  });

  test('without a known discount cached tokens cost the full input rate; VERDICT_MODEL_PRICES can set one', () => {
    const table = loadPrices({
      VERDICT_MODEL_PRICES: '{"openrouter/x": {"input": 1, "output": 1, "cachedInput": 0.1}}',
    });
    expect(
      costOf('openrouter', 'x', { inputTokens: 1000, outputTokens: 0, cachedInputTokens: 1000 }, table),
    ).toBeCloseTo(1e-4, 12);
    const plain = loadPrices({ VERDICT_MODEL_PRICES: '{"openrouter/y": {"input": 1, "output": 1}}' });
    expect(
      costOf('openrouter', 'y', { inputTokens: 1000, outputTokens: 0, cachedInputTokens: 1000 }, plain),
    ).toBeCloseTo(1e-3, 12);
    expect(() =>
      loadPrices({ VERDICT_MODEL_PRICES: '{"x": {"input": 1, "output": 1, "cachedInput": -1}}' }),
    ).toThrow(/cachedInput/);
  });
});
