import {
  callTokens,
  cutsLine,
  DEFAULT_WINDOW,
  estimateTokens,
  fitContext,
  inputBudget,
  modelWindow,
} from '../../src/review/budget.js';
import { tokensOf } from '../../src/review/context.js';
import { chunkPrompt, type PromptContext } from '../../src/review/prompt.js';

const ctx = (over: Partial<PromptContext> = {}): PromptContext => ({
  repo: 'acme/web',
  number: 7,
  title: 'Add a cache',
  body: 'Caches user lookups. '.repeat(200),
  author: 'alice',
  baseRef: 'main',
  headRef: 'feature',
  headSha: 'a'.repeat(40),
  labels: [],
  customInstructions: '',
  memory: Array.from({ length: 8 }, (_, i) => ({
    kind: 'context' as const,
    id: `mem_${i}`,
    scope: 'acme/web; every path',
    title: `Rule ${i}`,
    body: 'Always check. '.repeat(200),
    clipped: false,
  })),
  prior: Array.from({ length: 6 }, (_, i) => ({
    priorReviewKey: 'k',
    fingerprint: `fp_${i}`,
    severity: i === 5 ? 'blocker' : 'low',
    category: 'c',
    path: 'src/a.ts',
    title: `Prior ${i}`,
    headSha: null,
  })),
  incremental: null,
  fullReviewNote: null,
  allPaths: ['src/a.ts'],
  competitors: Array.from({ length: 4 }, () => ({
    login: 'bot',
    kind: 'review',
    state: null,
    body: 'Looks good. '.repeat(300),
  })),
  ...over,
});

const measure = (c: PromptContext) => tokensOf(chunkPrompt(c, { index: 0, files: [], tokens: 0 }, 2));

describe('model windows', () => {
  test('the table by model id, a provider prefix ignored, the default for an unknown model', () => {
    expect(modelWindow('gpt-4o-mini-2024-07-18')).toEqual({
      contextTokens: 128_000,
      outputTokens: 16_384,
      source: 'table',
    });
    expect(modelWindow('claude-sonnet-4-20250514')).toMatchObject({
      contextTokens: 200_000,
      outputTokens: 64_000,
    });
    expect(modelWindow('meta-llama/llama-3.3-70b-instruct')).toMatchObject({ contextTokens: 131_072 });
    expect(modelWindow('my-local-model')).toEqual({ ...DEFAULT_WINDOW, source: 'default' });
  });

  test('VERDICT_MODEL_CONTEXT_TOKENS overrides the table', () => {
    expect(modelWindow('gpt-4o', 32_000)).toEqual({
      contextTokens: 32_000,
      outputTokens: 16_384,
      source: 'VERDICT_MODEL_CONTEXT_TOKENS',
    });
  });

  test('the input budget keeps room for the answer and a margin', () => {
    const w = modelWindow('gpt-4o');
    expect(inputBudget(w, null)).toBe(Math.floor((128_000 - 16_384) * 0.95));
    expect(inputBudget(w, 4000)).toBe(Math.floor((128_000 - 4000) * 0.95));
    // The answer's room never takes more than a quarter of a small window.
    expect(inputBudget(modelWindow('gpt-4o', 12_000), null)).toBe(Math.floor((12_000 - 3000) * 0.95));
  });

  test('Anthropic tokens are estimated at 1.25 o200k tokens, rounded up', () => {
    const text = 'function add(a, b) { return a + b; }\n'.repeat(50);
    expect(estimateTokens('openai', text)).toBe(tokensOf(text));
    expect(estimateTokens('anthropic', text)).toBe(Math.ceil(tokensOf(text) * 1.25));
  });

  test('a call counts its system prompt, schema and every message', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const n = callTokens('openai', 'sys', schema, [{ role: 'user', content: 'hello there' }]);
    expect(n).toBe(tokensOf(['sys', JSON.stringify(schema), 'hello there'].join('\n')));
  });
});

describe('fitting the context sections', () => {
  test('nothing is cut when it fits', () => {
    const c = ctx();
    const fitted = fitContext(c, 1_000_000, measure);
    expect(fitted.ctx).toBe(c);
    expect(fitted.cuts).toEqual([]);
  });

  test('competitor reviews go first, then memory, then prior findings (the most severe kept), then the description', () => {
    const full = measure(ctx());
    const onlyCompetitors = fitContext(ctx(), full - 100, measure);
    expect(onlyCompetitors.cuts.map((c) => c.what)).toEqual(['review(s) by other review bots']);
    expect(onlyCompetitors.ctx.memory).toHaveLength(8);

    const tight = fitContext(ctx(), 900, measure);
    expect(measure(tight.ctx)).toBeLessThanOrEqual(900);
    expect(tight.ctx.competitors).toHaveLength(0);
    expect(tight.ctx.memory).toHaveLength(0);
    expect(tight.cuts.map((c) => c.what)).toEqual(
      [
        'review(s) by other review bots',
        'memory item(s)',
        'prior finding(s) to dispose of',
        'the description, shortened',
      ].filter((w) => tight.cuts.some((c) => c.what === w)),
    );
    expect(tight.cuts.find((c) => c.what === 'memory item(s)')!.count).toBe(8);
    if (tight.ctx.prior.length > 0) expect(tight.ctx.prior[0]!.severity).toBe('blocker');
    expect(cutsLine(tight.cuts, modelWindow('gpt-4o'), 'gpt-4o')).toMatch(
      /^Left out of the prompt to stay within gpt-4o's context window \(128000 tokens\): 4 review\(s\) by other review bots, 8 memory item\(s\)/,
    );
  });
});
