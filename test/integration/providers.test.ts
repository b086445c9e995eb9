import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import {
  ModelCallError,
  OpenAICompatibleProvider,
  type ModelProvider,
  type ModelRequest,
} from '../../src/review/providers/index.js';
import { acceptsTemperature } from '../../src/review/providers/anthropic.js';
import { providersFor } from '../helpers/providers.js';

/**
 * The four model providers against nock'd APIs (bodies shaped like the real OpenAI, Anthropic and
 * OpenRouter answers) and a fake `codex` executable. Nothing here reaches the internet.
 */
const OPENAI = 'https://api.openai.com';
const ANTHROPIC = 'https://api.anthropic.com';
const OPENROUTER = 'https://openrouter.ai';
const SCHEMA = {
  type: 'object',
  properties: { overview: { type: 'string' } },
  required: ['overview'],
};
const ANSWER = JSON.stringify({ overview: 'Looks fine.' });

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: 'You review pull requests.',
    messages: [{ role: 'user', content: 'Review this diff.' }],
    jsonSchema: SCHEMA,
    timeoutMs: 5000,
    ...over,
  };
}

/** An OpenAI chat completion, as the API returns it. */
function completion(
  content: string | null,
  usage: Record<string, number> | null = { prompt_tokens: 1000, completion_tokens: 500 },
) {
  return {
    id: 'chatcmpl-abc123',
    object: 'chat.completion',
    created: 1_750_000_000,
    model: 'gpt-4o-2024-08-06',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    ...(usage
      ? { usage: { ...usage, total_tokens: (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0) } }
      : {}),
  };
}

/** An Anthropic message, as the API returns it. */
function message(texts: string[], usage = { input_tokens: 1000, output_tokens: 200 }) {
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-20250514',
    content: texts.map((text) => ({ type: 'text', text })),
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage,
  };
}

/** OpenRouter's model list, as `GET /api/v1/models` returns it. */
function catalog(models: Array<{ id: string; pricing?: Record<string, string> }>) {
  return {
    data: models.map((m) => ({
      id: m.id,
      canonical_slug: m.id,
      name: m.id,
      created: 1_740_000_000,
      description: 'A model.',
      context_length: 131072,
      architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'] },
      ...(m.pricing ? { pricing: m.pricing } : {}),
      top_provider: { context_length: 131072, max_completion_tokens: 8192, is_moderated: false },
    })),
  };
}

/** One `GET /api/v1/models` of OpenRouter, answered with a catalog of these models. */
function catalogReply(models: Parameters<typeof catalog>[0]) {
  return nock(OPENROUTER).get('/api/v1/models').reply(200, catalog(models));
}

const FREE = { prompt: '0', completion: '0', request: '0', image: '0' };
const PAID = { prompt: '0.0000025', completion: '0.00001', request: '0', image: '0' };

async function failure(provider: ModelProvider, req: ModelRequest = request()): Promise<ModelCallError> {
  const error = await provider.complete(req).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelCallError);
  return error as ModelCallError;
}

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterEach(() => {
  nock.abortPendingRequests();
  nock.cleanAll();
});
afterAll(() => nock.enableNetConnect());

describe('openai', () => {
  const env = {
    VERDICT_RUNNER_PROVIDER: 'openai',
    VERDICT_RUNNER_MODEL: 'gpt-4o',
    OPENAI_API_KEY: 'sk-test',
  };

  test('POST {base}/chat/completions with the key, model, messages and json_schema; usage and cost', async () => {
    let sent: any = null;
    const scope = nock(OPENAI)
      .post('/v1/chat/completions', (body) => ((sent = body), true))
      .matchHeader('authorization', 'Bearer sk-test')
      .reply(200, completion(ANSWER));
    const { primary } = providersFor(env);
    const res = await primary.complete(request());
    expect(scope.isDone()).toBe(true);
    expect(sent).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You review pull requests.' },
        { role: 'user', content: 'Review this diff.' },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'review', schema: SCHEMA, strict: true },
      },
      temperature: 0.1,
    });
    expect(res).toMatchObject({
      text: ANSWER,
      usage: { inputTokens: 1000, outputTokens: 500 },
      provider: 'openai',
      model: 'gpt-4o',
    });
    // gpt-4o: 2.5 / 10 USD per million tokens.
    expect(res.costUsd).toBeCloseTo((1000 * 2.5 + 500 * 10) / 1e6, 12);
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('the structured output is named after the call: review, synthesis, verification (NAMES.md)', async () => {
    const names: string[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (body) => (names.push(body.response_format.json_schema.name), true))
      .times(3)
      .reply(200, completion(ANSWER));
    const { primary } = providersFor(env);
    await primary.complete(request());
    await primary.complete(request({ schemaName: 'synthesis' }));
    await primary.complete(request({ schemaName: 'verification' }));
    expect(names).toEqual(['review', 'synthesis', 'verification']);
  });

  test('a model that refuses the temperature is asked again without one, and not sent one again', async () => {
    const temperatures: unknown[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (body) => (temperatures.push(body.temperature), true))
      .reply(400, {
        error: {
          message: "Unsupported value: 'temperature' does not support 0.1 with this model.",
          type: 'invalid_request_error',
          param: 'temperature',
          code: 'unsupported_value',
        },
      })
      .post('/v1/chat/completions', (body) => (temperatures.push(body.temperature), true))
      .times(2)
      .reply(200, completion(ANSWER));
    const { primary } = providersFor({ ...env, VERDICT_RUNNER_MODEL: 'my-finetune' });
    expect((await primary.complete(request())).text).toBe(ANSWER);
    expect((await primary.complete(request())).text).toBe(ANSWER);
    expect(temperatures).toEqual([0.1, undefined, undefined]);
  });

  test('no response_format without a schema; VERDICT_OPENROUTER_MAX_TOKENS caps it; base URL and key alias', async () => {
    let sent: any = null;
    nock('http://llm.internal:8080')
      .post('/proxy/v1/chat/completions', (body) => ((sent = body), true))
      .matchHeader('authorization', 'Bearer alias-key')
      .reply(200, completion(ANSWER));
    const { primary } = providersFor({
      VERDICT_RUNNER_PROVIDER: 'openai',
      VERDICT_RUNNER_MODEL: 'gpt-4.1-mini',
      VERDICT_OPENAI_API_KEY: 'alias-key',
      VERDICT_OPENAI_BASE_URL: 'http://llm.internal:8080/proxy/v1/',
      VERDICT_OPENROUTER_MAX_TOKENS: '4000',
    });
    await primary.complete(request({ jsonSchema: undefined }));
    expect(sent.response_format).toBeUndefined();
    // OpenAI's current models take max_completion_tokens (they refuse max_tokens).
    expect(sent.max_completion_tokens).toBe(4000);
    expect(sent.max_tokens).toBeUndefined();
  });

  test('unknown model or missing usage: cost null, never 0', async () => {
    nock(OPENAI).post('/v1/chat/completions').reply(200, completion(ANSWER));
    const unknown = await providersFor({ ...env, VERDICT_RUNNER_MODEL: 'gpt-99' }).primary.complete(
      request(),
    );
    expect(unknown.usage).toEqual({ inputTokens: 1000, outputTokens: 500 });
    expect(unknown.costUsd).toBeNull();

    nock(OPENAI).post('/v1/chat/completions').reply(200, completion(ANSWER, null));
    const noUsage = await providersFor(env).primary.complete(request());
    expect(noUsage.usage).toEqual({ inputTokens: null, outputTokens: null });
    expect(noUsage.costUsd).toBeNull();
  });

  test('a 200 without text is code empty', async () => {
    nock(OPENAI).post('/v1/chat/completions').reply(200, completion(null));
    const error = await failure(providersFor(env).primary);
    expect(error).toMatchObject({ code: 'empty', retryable: false });
    expect(error.message).toBe('model call succeeded but returned no review text');
    nock(OPENAI).post('/v1/chat/completions').reply(200, completion('   '));
    expect((await failure(providersFor(env).primary)).code).toBe('empty');
  });

  test.each([
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [422, false],
    [408, true],
    [409, true],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
  ])('HTTP %i is code http, retryable %p', async (status, retryable) => {
    nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(status, { error: { message: 'nope', type: 'invalid_request_error', param: null, code: null } });
    const error = await failure(providersFor(env).primary);
    expect(error).toMatchObject({ code: 'http', status, retryable });
    expect(error.message).toContain(`status ${status}`);
  });

  test('a network error is code http, retryable, without a status', async () => {
    nock(OPENAI).post('/v1/chat/completions').replyWithError('socket hang up');
    const error = await failure(providersFor(env).primary);
    expect(error).toMatchObject({ code: 'http', retryable: true });
    expect(error.status).toBeUndefined();
  });

  test('a slow answer times out with the milliseconds (retryable); no SDK retry', async () => {
    const scope = nock(OPENAI)
      .post('/v1/chat/completions')
      .times(2)
      .delay(3000)
      .reply(200, completion(ANSWER));
    const started = Date.now();
    const error = await failure(providersFor(env).primary, request({ timeoutMs: 200 }));
    expect(Date.now() - started).toBeLessThan(2500);
    expect(error).toMatchObject({ code: 'timeout', retryable: true });
    expect(error.message).toBe('chat completion timeout after 200 ms');
    // maxRetries 0: the second interceptor was never used (dropped here, on purpose unused).
    expect(scope.pendingMocks()).toHaveLength(1);
    nock.cleanAll();
  });

  test("the caller's signal aborts the call", async () => {
    const scope = nock(OPENAI).post('/v1/chat/completions').delay(3000).reply(200, completion(ANSWER));
    // The caller gives up once the call is under way (the answer would take 3 s).
    const controller = new AbortController();
    scope.on('request', () => controller.abort());
    const error = await failure(providersFor(env).primary, request({ signal: controller.signal }));
    expect(error).toMatchObject({ code: 'timeout', retryable: true, message: 'chat completion aborted' });
  });
});

describe('openrouter', () => {
  const MODEL = 'meta-llama/llama-3.3-70b-instruct:free';
  const env = {
    VERDICT_RUNNER_PROVIDER: 'openrouter',
    VERDICT_RUNNER_MODEL: MODEL,
    OPENROUTER_API_KEY: 'or-key',
  };

  test('the guard reads the catalog, then POST {base}/chat/completions with the gateway headers', async () => {
    const models = catalogReply([
      { id: 'openai/gpt-4o', pricing: PAID },
      { id: MODEL, pricing: FREE },
    ]);
    let sent: any = null;
    const chat = nock(OPENROUTER)
      .post('/api/v1/chat/completions', (body) => ((sent = body), true))
      .matchHeader('authorization', 'Bearer or-key')
      .matchHeader('HTTP-Referer', 'https://github.com/verdict-app/verdict')
      .matchHeader('X-Title', 'Verdict')
      .matchHeader('X-OpenRouter-Metadata', 'enabled')
      .reply(200, { ...completion(ANSWER), model: MODEL, provider: 'Together' });
    const res = await providersFor(env).primary.complete(request());
    expect(models.isDone()).toBe(true);
    expect(chat.isDone()).toBe(true);
    expect(sent.model).toBe(MODEL);
    expect(sent.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'review', schema: SCHEMA, strict: true },
    });
    expect(sent.max_tokens).toBeUndefined();
    expect(res).toMatchObject({ text: ANSWER, provider: 'openrouter', model: MODEL });
    expect(res.usage).toEqual({ inputTokens: 1000, outputTokens: 500 });
    // No built-in rates for openrouter.
    expect(res.costUsd).toBeNull();
  });

  test('VERDICT_PUBLIC_URL, VERDICT_PRODUCT_NAME, max_tokens, base URL and a VERDICT_MODEL_PRICES rate', async () => {
    nock('https://router.example.com')
      .get('/v1/models')
      .reply(200, catalog([{ id: MODEL, pricing: FREE }]));
    let sent: any = null;
    nock('https://router.example.com')
      .post('/v1/chat/completions', (body) => ((sent = body), true))
      .matchHeader('HTTP-Referer', 'https://verdict.acme.dev')
      .matchHeader('X-Title', 'Acme Review')
      .reply(200, completion(ANSWER));
    const res = await providersFor({
      ...env,
      VERDICT_OPENROUTER_BASE_URL: 'https://router.example.com/v1',
      VERDICT_PUBLIC_URL: 'https://verdict.acme.dev',
      VERDICT_PRODUCT_NAME: 'Acme Review',
      VERDICT_OPENROUTER_MAX_TOKENS: '2048',
      VERDICT_MODEL_PRICES: JSON.stringify({ [`openrouter/${MODEL}`]: { input: 1, output: 2 } }),
    }).primary.complete(request());
    expect(sent.max_tokens).toBe(2048);
    expect(res.costUsd).toBeCloseTo((1000 * 1 + 500 * 2) / 1e6, 12);
  });

  test('the catalog is cached per provider instance', async () => {
    const models = nock(OPENROUTER)
      .get('/api/v1/models')
      .once()
      .reply(200, catalog([{ id: MODEL, pricing: FREE }]));
    nock(OPENROUTER).post('/api/v1/chat/completions').times(2).reply(200, completion(ANSWER));
    const { primary } = providersFor(env);
    await primary.complete(request());
    await primary.complete(request());
    expect(models.isDone()).toBe(true);
  });

  test('an expired catalog is read again', async () => {
    let now = 1_000_000;
    const models = nock(OPENROUTER)
      .get('/api/v1/models')
      .times(2)
      .reply(200, catalog([{ id: MODEL, pricing: FREE }]));
    nock(OPENROUTER).post('/api/v1/chat/completions').times(2).reply(200, completion(ANSWER));
    const { primary } = providersFor(env, { now: () => now });
    await primary.complete(request());
    now += 10 * 60_000 + 1;
    await primary.complete(request());
    expect(models.isDone()).toBe(true);
  });

  describe('free-only guard failures (code guard, no completion call; only an unreachable catalog is retryable)', () => {
    let chat: nock.Scope;
    beforeEach(() => {
      chat = nock(OPENROUTER).post('/api/v1/chat/completions').reply(200, completion(ANSWER));
    });
    afterEach(() => {
      // The completion interceptor is a tripwire: unused on purpose, then dropped.
      expect(chat.pendingMocks()).toHaveLength(1);
      nock.cleanAll();
    });

    async function guardFailure(
      over: Record<string, string | undefined> = {},
      retryable = false,
    ): Promise<ModelCallError> {
      const error = await failure(providersFor({ ...env, ...over }).primary);
      expect(error).toMatchObject({ code: 'guard', retryable });
      return error;
    }

    test('model is required', async () => {
      const error = await guardFailure({ VERDICT_RUNNER_MODEL: undefined });
      expect(error.message).toBe('OpenRouter free-only guard: model is required (set VERDICT_RUNNER_MODEL)');
    });

    test('model list failed, with the response status', async () => {
      nock(OPENROUTER).get('/api/v1/models').reply(503, 'upstream unavailable');
      const error = await guardFailure({}, true);
      expect(error.message).toBe('OpenRouter free-only guard: model list failed with status 503');
      // A refusal of the catalog request itself will not change by trying again.
      nock(OPENROUTER).get('/api/v1/models').reply(401, 'no auth');
      expect((await guardFailure({}, false)).message).toBe(
        'OpenRouter free-only guard: model list failed with status 401',
      );
    });

    test('model list returned invalid JSON', async () => {
      nock(OPENROUTER).get('/api/v1/models').reply(200, '<html>not json</html>');
      expect((await guardFailure()).message).toBe(
        'OpenRouter free-only guard: model list returned invalid JSON',
      );
      nock(OPENROUTER).get('/api/v1/models').reply(200, { models: [] });
      expect((await guardFailure()).message).toBe(
        'OpenRouter free-only guard: model list returned invalid JSON (no "data" array)',
      );
    });

    test('model not found', async () => {
      catalogReply([{ id: 'openai/gpt-4o', pricing: PAID }]);
      expect((await guardFailure()).message).toBe(
        `OpenRouter free-only guard: model not found in the OpenRouter model list: ${MODEL}`,
      );
    });

    test('model is not free, with the prompt and completion prices', async () => {
      catalogReply([{ id: 'openai/gpt-4o', pricing: PAID }]);
      const error = await guardFailure({ VERDICT_RUNNER_MODEL: 'openai/gpt-4o' });
      expect(error.message).toBe(
        'OpenRouter free-only guard: model openai/gpt-4o is not free (prompt price 0.0000025, completion price 0.00001); ' +
          'set VERDICT_OPENROUTER_REQUIRE_FREE=0 to allow paid models',
      );
    });

    test('a free prompt with a paid completion is not free', async () => {
      catalogReply([{ id: MODEL, pricing: { prompt: '0', completion: '0.000001' } }]);
      expect((await guardFailure()).message).toMatch(
        /is not free \(prompt price 0, completion price 0.000001\)/,
      );
    });

    test('a missing price fails closed', async () => {
      catalogReply([{ id: MODEL, pricing: { prompt: '0' } }]);
      expect((await guardFailure()).message).toMatch(
        /is not free \(prompt price 0, completion price missing\)/,
      );
      catalogReply([{ id: MODEL }]);
      expect((await guardFailure()).message).toMatch(
        /is not free \(prompt price missing, completion price missing\)/,
      );
      // OpenRouter's "-1" (variable price, e.g. its auto router) is not zero either.
      catalogReply([{ id: MODEL, pricing: { prompt: '-1', completion: '-1' } }]);
      expect((await guardFailure()).message).toMatch(/is not free \(prompt price -1, completion price -1\)/);
    });

    test('VERDICT_MODEL_PRICES with a zero rate cannot make a paid model pass', async () => {
      catalogReply([{ id: 'openai/gpt-4o', pricing: PAID }]);
      const error = await guardFailure({
        VERDICT_RUNNER_MODEL: 'openai/gpt-4o',
        VERDICT_MODEL_PRICES: JSON.stringify({
          'openrouter/openai/gpt-4o': { input: 0, output: 0 },
          'openai/gpt-4o': { input: 0, output: 0 },
        }),
      });
      expect(error.message).toMatch(/is not free \(prompt price 0.0000025, completion price 0.00001\)/);
    });

    test('a network failure of the model list (retryable)', async () => {
      nock(OPENROUTER).get('/api/v1/models').replyWithError('getaddrinfo ENOTFOUND openrouter.ai');
      expect((await guardFailure({}, true)).message).toMatch(
        /^OpenRouter free-only guard: model list failed \(/,
      );
    });
  });

  test('a failed catalog read is not cached', async () => {
    nock(OPENROUTER)
      .get('/api/v1/models')
      .reply(500)
      .get('/api/v1/models')
      .reply(200, catalog([{ id: MODEL, pricing: FREE }]));
    nock(OPENROUTER).post('/api/v1/chat/completions').reply(200, completion(ANSWER));
    const { primary } = providersFor(env);
    expect((await failure(primary)).message).toMatch(/status 500/);
    expect((await primary.complete(request())).text).toBe(ANSWER);
  });

  test('VERDICT_OPENROUTER_REQUIRE_FREE=0 turns the guard off (no catalog read); other values keep it on', async () => {
    const models = catalogReply([]);
    nock(OPENROUTER).post('/api/v1/chat/completions').reply(200, completion(ANSWER));
    const off = providersFor({
      ...env,
      VERDICT_RUNNER_MODEL: 'openai/gpt-4o',
      VERDICT_OPENROUTER_REQUIRE_FREE: '0',
    });
    expect((await off.primary.complete(request())).text).toBe(ANSWER);
    expect(models.isDone()).toBe(false);
    expect((off.primary as OpenAICompatibleProvider).model).toBe('openai/gpt-4o');

    for (const value of ['false', 'no', ' 0', '']) {
      catalogReply([{ id: 'openai/gpt-4o', pricing: PAID }]);
      const on = providersFor({
        ...env,
        VERDICT_RUNNER_MODEL: 'openai/gpt-4o',
        VERDICT_OPENROUTER_REQUIRE_FREE: value,
      });
      expect((await failure(on.primary)).code).toBe('guard');
    }
    nock.cleanAll(); // the first catalog interceptor was a tripwire: unused on purpose
  });

  test('a missing key is a config error before any catalog read', async () => {
    const models = catalogReply([{ id: MODEL, pricing: FREE }]);
    const error = await failure(providersFor({ ...env, OPENROUTER_API_KEY: undefined }).primary);
    expect(error).toMatchObject({ code: 'config', retryable: false });
    expect(error.message).toContain('OPENROUTER_API_KEY');
    expect(models.isDone()).toBe(false);
    nock.cleanAll(); // a tripwire: unused on purpose
  });

  test('a slow catalog read counts against the timeout', async () => {
    nock(OPENROUTER)
      .get('/api/v1/models')
      .delay(3000)
      .reply(200, catalog([{ id: MODEL, pricing: FREE }]));
    const error = await failure(providersFor(env).primary, request({ timeoutMs: 150 }));
    expect(error).toMatchObject({
      code: 'timeout',
      retryable: true,
      message: 'chat completion timeout after 150 ms',
    });
  });

  test('a 200 carrying an OpenRouter error object is code http with its status', async () => {
    catalogReply([{ id: MODEL, pricing: FREE }]);
    nock(OPENROUTER)
      .post('/api/v1/chat/completions')
      .reply(200, { error: { code: 502, message: 'Provider returned error' } });
    const error = await failure(providersFor(env).primary);
    expect(error).toMatchObject({ code: 'http', status: 502, retryable: true });
  });
});

describe('anthropic', () => {
  const env = {
    VERDICT_RUNNER_PROVIDER: 'anthropic',
    VERDICT_RUNNER_MODEL: 'claude-sonnet-4-20250514',
    ANTHROPIC_API_KEY: 'sk-ant-test',
  };

  test('POST {base}/messages with anthropic-version, max_tokens 8192, the schema as a forced tool, the system cached', async () => {
    let sent: any = null;
    const scope = nock(ANTHROPIC)
      .post('/v1/messages', (body) => ((sent = body), true))
      .matchHeader('anthropic-version', '2023-06-01')
      .matchHeader('authorization', 'Bearer sk-ant-test')
      .reply(200, message(['{"overview": ', '"Looks fine."}']));
    const res = await providersFor(env).primary.complete(request());
    expect(scope.isDone()).toBe(true);
    expect(sent.model).toBe('claude-sonnet-4-20250514');
    expect(sent.max_tokens).toBe(8192);
    expect(sent.messages).toEqual([{ role: 'user', content: 'Review this diff.' }]);
    expect(sent.system).toEqual([
      { type: 'text', text: 'You review pull requests.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(sent.tools).toEqual([{ name: 'review', description: expect.any(String), input_schema: SCHEMA }]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'review' });
    // The same low, fixed temperature as the other providers.
    expect(sent.temperature).toBe(0.1);
    expect(res).toMatchObject({
      text: '{"overview": "Looks fine."}',
      usage: { inputTokens: 1000, outputTokens: 200 },
      provider: 'anthropic',
      model: 'claude-sonnet-4-20250514',
    });
    // claude-sonnet-4 (dated id): 3 / 15 USD per million tokens.
    expect(res.costUsd).toBeCloseTo((1000 * 3 + 200 * 15) / 1e6, 12);
  });

  test('a verification call forces the tool named `verification` and reads its input', async () => {
    let sent: any = null;
    const input = { results: [{ id: 'c1', verdict: 'refuted', score: 5, reason: 'Handled on line 3.' }] };
    nock(ANTHROPIC)
      .post('/v1/messages', (body) => ((sent = body), true))
      .reply(200, {
        ...message([]),
        content: [{ type: 'tool_use', id: 'toolu_01', name: 'verification', input }],
        stop_reason: 'tool_use',
      });
    const res = await providersFor(env).primary.complete(request({ schemaName: 'verification' }));
    expect(sent.tools[0].name).toBe('verification');
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'verification' });
    expect(JSON.parse(res.text)).toEqual(input);
  });

  test('a model that refuses the temperature is asked again without one, and not sent one again', async () => {
    const temperatures: unknown[] = [];
    nock(ANTHROPIC)
      .post('/v1/messages', (body) => (temperatures.push(body.temperature), true))
      .reply(400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'temperature is not supported for this model' },
      })
      .post('/v1/messages', (body) => (temperatures.push(body.temperature), true))
      .times(2)
      .reply(200, message([ANSWER]));
    const { primary } = providersFor(env);
    expect((await primary.complete(request())).text).toBe(ANSWER);
    expect((await primary.complete(request())).text).toBe(ANSWER);
    expect(temperatures).toEqual([0.1, undefined, undefined]);
  });

  test('no temperature where it is refused: Opus 4.7 and later, generation 5 models, API version 2026-10-21', () => {
    const v = '2023-06-01';
    expect(acceptsTemperature('claude-sonnet-4-20250514', v)).toBe(true);
    expect(acceptsTemperature('claude-opus-4-20250514', v)).toBe(true);
    expect(acceptsTemperature('claude-opus-4-1', v)).toBe(true);
    expect(acceptsTemperature('claude-3-5-haiku-latest', v)).toBe(true);
    expect(acceptsTemperature('claude-sonnet-4-5', v)).toBe(true);
    expect(acceptsTemperature('claude-opus-4-7', v)).toBe(false);
    expect(acceptsTemperature('anthropic.claude-opus-4-8', v)).toBe(false);
    expect(acceptsTemperature('claude-sonnet-5', v)).toBe(false);
    expect(acceptsTemperature('claude-haiku-5-5', v)).toBe(false);
    expect(acceptsTemperature('claude-sonnet-4-20250514', '2026-10-21')).toBe(false);
  });

  test('base URL without /v1, version, max tokens and the key alias', async () => {
    let sent: any = null;
    const scope = nock('https://llm-proxy.example.com')
      .post('/anthropic/messages', (body) => ((sent = body), true))
      .matchHeader('anthropic-version', '2024-01-01')
      .matchHeader('authorization', 'Bearer alias')
      .reply(200, message([ANSWER]));
    await providersFor({
      VERDICT_RUNNER_PROVIDER: 'anthropic',
      VERDICT_RUNNER_MODEL: 'claude-3-5-haiku-latest',
      VERDICT_ANTHROPIC_API_KEY: 'alias',
      VERDICT_ANTHROPIC_BASE_URL: 'https://llm-proxy.example.com/anthropic',
      VERDICT_ANTHROPIC_VERSION: '2024-01-01',
      VERDICT_ANTHROPIC_MAX_TOKENS: '1024',
    }).primary.complete(request({ jsonSchema: undefined }));
    expect(scope.isDone()).toBe(true);
    expect(sent.max_tokens).toBe(1024);
    expect(sent.system[0].text).toBe('You review pull requests.');
    // Without a schema there is no tool to force.
    expect(sent.tools).toBeUndefined();
  });

  test('VERDICT_OPENROUTER_MAX_TOKENS overrides the anthropic max tokens', async () => {
    let sent: any = null;
    nock(ANTHROPIC)
      .post('/v1/messages', (body) => ((sent = body), true))
      .reply(200, message([ANSWER]));
    await providersFor({
      ...env,
      VERDICT_ANTHROPIC_MAX_TOKENS: '1024',
      VERDICT_OPENROUTER_MAX_TOKENS: '3000',
    }).primary.complete(request());
    expect(sent.max_tokens).toBe(3000);
  });

  test('no text blocks is code empty; unknown model cost is null', async () => {
    nock(ANTHROPIC).post('/v1/messages').reply(200, message([]));
    expect((await failure(providersFor(env).primary)).code).toBe('empty');
    nock(ANTHROPIC)
      .post('/v1/messages')
      .reply(200, message([ANSWER]));
    const res = await providersFor({ ...env, VERDICT_RUNNER_MODEL: 'claude-next' }).primary.complete(
      request(),
    );
    expect(res.costUsd).toBeNull();
  });

  test.each([
    [400, false],
    [401, false],
    [429, true],
    [500, true],
    [529, true],
  ])('HTTP %i is code http, retryable %p', async (status, retryable) => {
    nock(ANTHROPIC)
      .post('/v1/messages')
      .reply(status, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const error = await failure(providersFor(env).primary);
    expect(error).toMatchObject({ code: 'http', status, retryable });
  });

  test('a slow answer times out with the milliseconds', async () => {
    nock(ANTHROPIC)
      .post('/v1/messages')
      .delay(3000)
      .reply(200, message([ANSWER]));
    const error = await failure(providersFor(env).primary, request({ timeoutMs: 250 }));
    expect(error).toMatchObject({
      code: 'timeout',
      retryable: true,
      message: 'chat completion timeout after 250 ms',
    });
  });
});

describe('codex', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'verdict-codex-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function fakeCodex(body: string): string {
    const bin = join(dir, 'codex');
    writeFileSync(bin, `#!/bin/sh\n${body}\n`);
    chmodSync(bin, 0o755);
    return bin;
  }

  test('runs `<bin> exec --skip-git-repo-check -m <model> --output-schema <file> -` with the prompt on stdin and CODEX_HOME', async () => {
    const bin = fakeCodex(
      [
        `cat > '${dir}/stdin.txt'`,
        `printf '%s\\n' "$@" > '${dir}/args.txt'`,
        `cp "$6" '${dir}/schema.json'`,
        `printf '%s' "$CODEX_HOME" > '${dir}/home.txt'`,
        `pwd > '${dir}/cwd.txt'`,
        `echo 'thinking...' >&2`,
        `echo '${ANSWER}'`,
      ].join('\n'),
    );
    const { primary } = providersFor({
      VERDICT_RUNNER_BIN: bin,
      VERDICT_RUNNER_HOME: join(dir, 'home'),
      VERDICT_RUNNER_MODEL: 'gpt-5-codex',
    });
    const res = await primary.complete(
      request({
        messages: [
          { role: 'user', content: 'Review this diff.' },
          { role: 'assistant', content: 'not json' },
          { role: 'user', content: 'Answer with JSON only.' },
        ],
      }),
    );
    expect(res).toEqual({
      text: `${ANSWER}\n`,
      usage: { inputTokens: null, outputTokens: null },
      costUsd: null,
      provider: 'codex',
      model: 'gpt-5-codex',
      durationMs: expect.any(Number),
      structuredOutput: 'output_schema',
    });
    const args = readFileSync(join(dir, 'args.txt'), 'utf8').trim().split('\n');
    expect(args).toEqual([
      'exec',
      '--skip-git-repo-check',
      '-m',
      'gpt-5-codex',
      '--output-schema',
      expect.any(String),
      '-',
    ]);
    // The schema goes to the CLI as a file, not into the prompt.
    expect(JSON.parse(readFileSync(join(dir, 'schema.json'), 'utf8'))).toEqual(SCHEMA);
    expect(readFileSync(join(dir, 'home.txt'), 'utf8')).toBe(join(dir, 'home'));
    const stdin = readFileSync(join(dir, 'stdin.txt'), 'utf8');
    expect(stdin).toContain('You review pull requests.');
    expect(stdin).not.toContain(JSON.stringify(SCHEMA));
    const order = ['Review this diff.', 'not json', 'Answer with JSON only.'].map((s) => stdin.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBeGreaterThan(0);
    // It ran in a throwaway directory, not the server's working directory, and that was removed.
    const cwd = readFileSync(join(dir, 'cwd.txt'), 'utf8').trim();
    expect(cwd).not.toBe(process.cwd());
    expect(existsSync(cwd)).toBe(false);
  });

  test('a non-zero exit names the exit code and the last stderr line', async () => {
    const bin = fakeCodex(
      `cat > /dev/null\necho 'starting' >&2\necho 'error: not logged in; run codex login' >&2\nexit 3`,
    );
    const error = await failure(providersFor({ VERDICT_RUNNER_BIN: bin }).primary);
    expect(error.code).toBe('unavailable');
    expect(error.message).toBe('codex exited with code 3: error: not logged in; run codex login');
  });

  test('a missing binary is code unavailable, not retryable', async () => {
    const bin = join(dir, 'does-not-exist', 'codex');
    const error = await failure(providersFor({ VERDICT_RUNNER_BIN: bin }).primary);
    expect(error).toMatchObject({ code: 'unavailable', retryable: false });
    expect(error.message).toBe(
      `codex binary not found: ${bin} (set VERDICT_RUNNER_BIN or choose another VERDICT_RUNNER_PROVIDER)`,
    );
  });

  test('empty output is code empty', async () => {
    const bin = fakeCodex('cat > /dev/null\nexit 0');
    expect((await failure(providersFor({ VERDICT_RUNNER_BIN: bin }).primary)).code).toBe('empty');
  });

  test('a slow run is killed and times out with the milliseconds', async () => {
    const bin = fakeCodex(`echo $$ > '${dir}/pid.txt'\nsleep 30\necho '${ANSWER}'`);
    const started = Date.now();
    const error = await failure(
      providersFor({ VERDICT_RUNNER_BIN: bin }).primary,
      request({ timeoutMs: 400 }),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toMatchObject({
      code: 'timeout',
      retryable: true,
      message: 'chat completion timeout after 400 ms',
    });
    const pid = Number(readFileSync(join(dir, 'pid.txt'), 'utf8').trim());
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 5000;
    while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toBe(false);
  });
});
