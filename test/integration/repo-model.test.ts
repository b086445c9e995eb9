import nock from 'nock';
import { loadConfig } from '../../src/config/index.js';
import { FallbackProvider, providersForRepo, repoModelOf } from '../../src/review/providers/repo-model.js';
import { selectProviders } from '../../src/review/providers/select.js';
import { ModelCallError, type ModelProvider } from '../../src/review/providers/types.js';
import { runResultSchema } from '../../src/review/run-result.js';
import { TOKENS } from '../helpers/operator.js';
import {
  HEAD,
  HEAD2,
  OPENAI,
  completion,
  github,
  pull,
  review,
  reviewHarness,
} from '../helpers/review-harness.js';

/**
 * The operator repository configuration's `model` takes effect (issue 36 item 4): provider, model,
 * fallback and reasoning effort of `PATCH /operator/api/repos/:repo` decide who reviews that repository.
 */
const ANTHROPIC = 'https://api.anthropic.com';
const ENV = {
  VERDICT_RUNNER_PROVIDER: 'openai',
  VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
  OPENAI_API_KEY: 'sk-test',
  ANTHROPIC_API_KEY: 'sk-ant-test',
};
const request = {
  system: 's',
  messages: [{ role: 'user' as const, content: 'Review this diff.' }],
  timeoutMs: 5000,
};

/** A provider answering from a list: a text, or an error to throw. */
function scripted(
  name: 'openai' | 'anthropic',
  model: string,
  answers: Array<string | Error>,
): ModelProvider {
  return {
    name,
    model,
    async complete() {
      const next = answers.shift();
      if (next === undefined || next instanceof Error) throw next ?? new Error('no answer left');
      return {
        text: next,
        usage: { inputTokens: 1, outputTokens: 1 },
        costUsd: null,
        provider: name,
        model,
        durationMs: 1,
      };
    },
  };
}

describe('repoModelOf: the stored model section, only what is usable', () => {
  test('keeps known providers, non-blank models and known efforts; null when nothing is left', () => {
    expect(
      repoModelOf({ model: { provider: 'anthropic', model: ' claude-x ', reasoningEffort: 'high' } }),
    ).toEqual({
      provider: 'anthropic',
      model: 'claude-x',
      reasoningEffort: 'high',
    });
    expect(
      repoModelOf({ model: { provider: 'direct_a', model: '  ', reasoningEffort: 'extreme' } }),
    ).toBeNull();
    expect(repoModelOf({ enabled: true })).toBeNull();
    expect(repoModelOf(null)).toBeNull();
  });
});

describe('FallbackProvider', () => {
  test('a retryable failure of the first is answered by the fallback, and counted', async () => {
    const p = new FallbackProvider(
      scripted('openai', 'a', [new ModelCallError('http', '503', { status: 503 })]),
      scripted('anthropic', 'b', ['{"ok":true}']),
    );
    expect(await p.complete(request)).toMatchObject({
      text: '{"ok":true}',
      provider: 'anthropic',
      model: 'b',
    });
    expect(p.fellBack).toBe(1);
  });

  test('a failure another attempt cannot fix is not hidden by the fallback', async () => {
    const p = new FallbackProvider(
      scripted('openai', 'a', [new ModelCallError('config', 'OPENAI_API_KEY is required')]),
      scripted('anthropic', 'b', ['{"ok":true}']),
    );
    await expect(p.complete(request)).rejects.toThrow('OPENAI_API_KEY is required');
    expect(p.fellBack).toBe(0);
  });
});

describe('providersForRepo', () => {
  const config = loadConfig({ ...ENV, VERDICT_VERIFIER_MODEL: 'gpt-4o' }).review.providers;
  const base = selectProviders(config);

  test('no model section: the server providers as they are', () => {
    expect(providersForRepo(base, config, null)).toBe(base);
  });

  test("a model of the server's provider; a verifier of that provider is kept", () => {
    const p = providersForRepo(base, config, { model: 'gpt-4.1' });
    expect([p.primary.name, p.primary.model]).toEqual(['openai', 'gpt-4.1']);
    expect(p.verifier).toBe(base.verifier);
    expect(p.shadow).toBe(base.shadow);
  });

  test('another provider: its model, and it verifies its own findings', () => {
    const p = providersForRepo(base, config, { provider: 'anthropic', model: 'claude-sonnet-4-20250514' });
    expect([p.primary.name, p.primary.model]).toEqual(['anthropic', 'claude-sonnet-4-20250514']);
    expect(p.verifier).toBeNull();
  });

  test('a fallback wraps the primary; a fallback model alone falls back within the provider', () => {
    const p = providersForRepo(base, config, { fallbackModel: 'gpt-4o' });
    expect(p.primary).toBeInstanceOf(FallbackProvider);
    const f = p.primary as FallbackProvider;
    expect([f.primary.model, f.fallback.name, f.fallback.model]).toEqual(['gpt-4o-mini', 'openai', 'gpt-4o']);
  });
});

describe('reasoning effort reaches the provider that takes it', () => {
  afterEach(() => nock.cleanAll());

  test('openai: reasoning_effort; openrouter: reasoning.effort', async () => {
    const bodies: any[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (b) => (bodies.push(b), true))
      .reply(200, completion('{}'));
    const config = loadConfig(ENV).review.providers;
    await providersForRepo(selectProviders(config), config, { reasoningEffort: 'high' }).primary.complete(
      request,
    );
    expect(bodies[0]).toMatchObject({ model: 'gpt-4o-mini', reasoning_effort: 'high' });

    nock('https://openrouter.ai')
      .post('/api/v1/chat/completions', (b) => (bodies.push(b), true))
      .reply(200, completion('{}'));
    const or = loadConfig({
      VERDICT_RUNNER_PROVIDER: 'openrouter',
      VERDICT_RUNNER_MODEL: 'openai/gpt-4o-mini',
      OPENROUTER_API_KEY: 'sk-or',
      VERDICT_OPENROUTER_REQUIRE_FREE: '0',
    }).review.providers;
    await providersForRepo(selectProviders(or), or, { reasoningEffort: 'low' }).primary.complete(request);
    expect(bodies[1]).toMatchObject({ model: 'openai/gpt-4o-mini', reasoning: { effort: 'low' } });
    expect(bodies[1].reasoning_effort).toBeUndefined();
  });

  test('codex: -c model_reasoning_effort=<effort>', () => {
    const config = loadConfig({ VERDICT_RUNNER_PROVIDER: 'codex' }).review.providers;
    const codex = providersForRepo(selectProviders(config), config, { reasoningEffort: 'medium' })
      .primary as unknown as {
      args(): string[];
    };
    expect(codex.args()).toEqual(expect.arrayContaining(['-c', 'model_reasoning_effort=medium']));
  });
});

describe('a review of a repository whose operator configuration sets model', () => {
  const h = reviewHarness();

  async function configure(model: Record<string, unknown>, body: Record<string, unknown> = { model }) {
    const res = await fetch(`${h.app.baseUrl}/operator/api/repos/acme%2Fweb`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_ADMIN_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  test('PATCH refuses a provider that is not one of the four, naming the field', async () => {
    await h.start({ ...ENV, VERDICT_VERIFICATION: '0' });
    const res = await configure({ provider: 'direct_a' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/model\.provider/);
    expect(JSON.stringify(res.body)).toContain('use \\"openai\\"');
    expect((await configure({ reasoningEffort: 'extreme' })).status).toBe(400);
  });

  test('its model and reasoning effort are what the model is asked with', async () => {
    await h.start({ ...ENV, VERDICT_VERIFICATION: '0' });
    expect((await configure({ model: 'gpt-4.1', reasoningEffort: 'high' })).status).toBe(200);
    github();
    let sent: any = null;
    nock(OPENAI)
      .post('/v1/chat/completions', (b) => ((sent = b), true))
      .reply(200, completion(JSON.stringify(review({ findings: [] }))));
    const run = await h.reviewRun();
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
    expect(sent).toMatchObject({ model: 'gpt-4.1', reasoning_effort: 'high' });
    expect(runResultSchema.parse(run.result)).toMatchObject({ provider: 'openai', model: 'gpt-4.1' });
  }, 60_000);

  test('the first provider failing with a 503: the fallback provider answers, and the run says so', async () => {
    await h.start({ ...ENV, VERDICT_VERIFICATION: '0' });
    const patched = await configure({
      fallbackProvider: 'anthropic',
      fallbackModel: 'claude-sonnet-4-20250514',
    });
    expect(patched.status).toBe(200);
    github();
    const openai = nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(503, { error: { message: 'overloaded', type: 'server_error' } });
    const anthropic = nock(ANTHROPIC)
      .post('/v1/messages')
      .reply(200, {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-20250514',
        content: [{ type: 'tool_use', id: 'toolu_01', name: 'review', input: review({ findings: [] }) }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 1000, output_tokens: 200 },
      });
    const run = await h.reviewRun();
    expect(openai.isDone()).toBe(true);
    expect(anthropic.isDone()).toBe(true);
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
    const result = runResultSchema.parse(run.result);
    expect(result.warnings.join('\n')).toContain(
      'model fallback: 1 call(s) answered by anthropic/claude-sonnet-4-20250514 after openai/gpt-4o-mini failed',
    );
    const spans = (await h.spansOf(run)).spans.filter((s: any) => s.kind === 'model');
    expect(spans.map((s: any) => s.attributes?.provider ?? s.provider)).toContain('anthropic');
  }, 60_000);

  test('branches.include: [master] makes a pull request into master reviewed (it was refused before)', async () => {
    await h.start({ ...ENV, VERDICT_VERIFICATION: '0' });
    const intoMaster = (sha: string) =>
      github(pull({ head: { sha, ref: 'fix' }, base: { ref: 'master', repo: { default_branch: 'main' } } }));
    intoMaster(HEAD);
    expect(await h.reviewRun()).toMatchObject({ status: 'skipped', reason: 'auto_review_disabled' });
    expect((await configure({}, { branches: { include: ['master'] } })).status).toBe(200);
    intoMaster(HEAD2);
    nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(200, completion(JSON.stringify(review({ findings: [] }))));
    // A new head: the pull request's next push after the operator's change.
    const reviewed = await h.reviewRun(HEAD2);
    expect(reviewed).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
  }, 60_000);
});
