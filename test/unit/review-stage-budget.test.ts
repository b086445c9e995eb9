import { inputBudget, modelWindow } from '../../src/review/budget.js';
import { budgetStage, type BudgetInput } from '../../src/review/budget.stage.js';
import type { PromptContext } from '../../src/review/prompt.js';
import { systemPrompt } from '../../src/review/prompt.js';
import { HEAD, changedFile } from '../helpers/stages.js';

/** Stage `budget`: the context fitted into the primary model's window, the diff packed into parts. */

function context(over: Partial<PromptContext> = {}): PromptContext {
  return {
    repo: 'acme/web',
    number: 7,
    title: 'T',
    body: 'A description.',
    author: 'marty',
    baseRef: 'main',
    headRef: 'feature',
    headSha: HEAD,
    labels: [],
    customInstructions: '',
    memory: [],
    prior: [],
    incremental: null,
    fullReviewNote: null,
    allPaths: [],
    competitors: [],
    ...over,
  };
}

function input(over: Partial<BudgetInput> = {}): BudgetInput {
  return {
    providers: { primary: { name: 'openai', model: 'gpt-4o-mini', maxTokens: null } },
    config: { contextTokens: null, chunkTokens: 60_000, fileTokens: 12_000, maxChunks: 12 },
    prompt: { system: systemPrompt(''), context: context() },
    plan: { files: [changedFile('src/a.ts'), changedFile('src/b.ts')] },
    ...over,
  };
}

describe('stage budget', () => {
  test("the model's window and input budget; every file shown is in a part, within the configured tokens", async () => {
    const i = input();
    const out = await budgetStage.run(i);
    expect(out.window).toMatchObject({ contextTokens: 128_000, source: 'table' });
    expect(out.inputBudget).toBe(inputBudget(modelWindow('gpt-4o-mini'), null));
    expect(out.chunkTokens).toBe(60_000);
    expect(out.input.chunks).toHaveLength(1);
    expect(out.input.chunks[0]!.files.map((f) => f.path)).toEqual(['src/a.ts', 'src/b.ts']);
    expect(out.input.missingValidations).toEqual([]);
    expect(out.context).toEqual(i.prompt.context);
    expect(budgetStage.counts(out, i)).toEqual({
      contextWindow: 128_000,
      contextWindowSource: 'table',
      inputBudget: out.inputBudget,
      contextTokens: out.contextTokens,
      chunkTokens: 60_000,
      parts: 1,
      notReviewed: 0,
      clipped: 0,
      memoryLeftOut: 0,
      linkedIssuesLeftOut: 0,
    });
  });

  test('a small window: the context is cut with a line that says what, and the diff gets what is left', async () => {
    const memory = Array.from({ length: 40 }, (_, n) => ({
      kind: 'context' as const,
      id: `mem-${n}`,
      scope: 'acme/web; every path',
      title: `Rule ${n}`,
      body: 'Keep every cache entry consistent with the store; '.repeat(30),
      clipped: false,
    }));
    const out = await budgetStage.run(
      input({
        config: { contextTokens: 12_000, chunkTokens: 60_000, fileTokens: 12_000, maxChunks: 12 },
        prompt: { system: systemPrompt(''), context: context({ memory }) },
      }),
    );
    expect(out.window).toMatchObject({ contextTokens: 12_000, source: 'VERDICT_MODEL_CONTEXT_TOKENS' });
    expect(out.context.memory.length).toBeLessThan(40);
    expect(out.input.missingValidations).toEqual([
      expect.stringMatching(
        /^Left out of the prompt to stay within gpt-4o-mini's context window \(12000 tokens\): \d+ memory item\(s\)\.$/,
      ),
    ]);
    expect(out.chunkTokens).toBeLessThan(out.inputBudget - out.contextTokens);
    expect(out.chunkTokens).toBeGreaterThanOrEqual(500);
  });

  test("Anthropic's tokens are counted larger: less diff fits one part", async () => {
    const limits = { contextTokens: 20_000, chunkTokens: 60_000, fileTokens: 12_000, maxChunks: 12 };
    const openai = await budgetStage.run(input({ config: limits }));
    const anthropic = await budgetStage.run(
      input({
        config: limits,
        providers: { primary: { name: 'anthropic', model: 'claude-sonnet-4-5', maxTokens: 8192 } },
      }),
    );
    expect(anthropic.chunkTokens).toBeLessThan(openai.chunkTokens);
  });

  test('more files than parts allow: the rest are listed as not reviewed', async () => {
    const files = Array.from({ length: 6 }, (_, n) => changedFile(`src/f${n}.ts`, 200));
    const out = await budgetStage.run(
      input({
        config: { contextTokens: null, chunkTokens: 3_000, fileTokens: 3_000, maxChunks: 2 },
        plan: { files },
      }),
    );
    expect(out.chunkTokens).toBe(3_000);
    expect(out.input.chunks).toHaveLength(2);
    for (const chunk of out.input.chunks) expect(chunk.tokens).toBeLessThanOrEqual(3_000);
    const placed = out.input.chunks.flatMap((c) => c.files.map((f) => f.path));
    expect([...placed, ...out.input.notReviewed.map((f) => f.path)].sort()).toEqual(
      files.map((f) => f.filename).sort(),
    );
    expect(out.input.notReviewed.length).toBeGreaterThan(0);
    expect(out.input.missingValidations[0]).toMatch(/changed file\(s\) not reviewed/);
  });
});
