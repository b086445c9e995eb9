import { buildReviewInput, type ReviewChunk } from '../../src/review/context.js';
import { callStage, type CallInput } from '../../src/review/call.stage.js';
import { REVIEW_SCHEMA } from '../../src/review/model-call.js';
import type { PromptContext } from '../../src/review/prompt.js';
import { ModelCallError, type ModelProvider } from '../../src/review/providers/index.js';
import { reviewOutput } from '../helpers/review-output.js';
import {
  HEAD,
  changedFile,
  fakeProvider,
  modelEnv,
  userMessage,
  type FakeAnswer,
} from '../helpers/stages.js';

/** Stage `call`: each part to the model, with its timeout, the repair attempt and the split of a cut answer. */

const CONTEXT: PromptContext = {
  repo: 'acme/web',
  number: 7,
  title: 'T',
  body: '',
  author: null,
  baseRef: 'main',
  headRef: 'f',
  headSha: HEAD,
  labels: [],
  customInstructions: '',
  memory: [
    { kind: 'context', id: 'mem-1', scope: 'acme/web; every path', title: 'Rule', body: 'b', clipped: false },
  ],
  prior: [],
  incremental: null,
  fullReviewNote: null,
  allPaths: ['src/a.ts', 'src/b.ts'],
  competitors: [],
};

const FINDING = {
  severity: 'high',
  category: 'bug',
  path: 'src/a.ts',
  title: 'Off by one',
  body: 'The loop reads past the end.',
  contextIds: ['mem-1', 'mem-unknown'],
};

const answer = (findings: unknown[] = [FINDING]) =>
  JSON.stringify(reviewOutput({ findings: findings as never }));

/** Two files in one part. */
function parts(): ReviewChunk[] {
  return buildReviewInput([changedFile('src/a.ts'), changedFile('src/b.ts')]).chunks;
}

function input(
  primary: ModelProvider,
  over: Partial<CallInput> = {},
): CallInput & { env: ReturnType<typeof modelEnv> } {
  const env = modelEnv();
  return {
    providers: { primary, shadow: null },
    prompt: { system: 'You are Verdict.' },
    budgeted: { context: CONTEXT, input: { chunks: parts() } },
    config: { timeoutMs: 5_000, shadowTimeoutMs: 2_000, concurrency: 2 },
    env,
    ...over,
  } as CallInput & { env: ReturnType<typeof modelEnv> };
}

describe('stage call', () => {
  test('one part, one usable answer: the part prompt and schema are sent, the call is a model span', async () => {
    const model = fakeProvider(() => answer());
    const i = input(model);
    const out = await callStage.run(i);
    expect(out.shadow).toBeUndefined();
    expect(out.primary.failed.size).toBe(0);
    expect(out.primary.outputs).toHaveLength(1);
    // Reading the answer removed the context id that was not supplied.
    expect(out.primary.outputs[0]!.output.findings[0]!.contextIds).toEqual(['mem-1']);
    expect(out.primary.outputs[0]!.warnings.join(' ')).toMatch(/unsupported contextId/);
    const [req] = model.requests;
    expect(req!.system).toBe('You are Verdict.');
    expect(req!.jsonSchema).toBe(REVIEW_SCHEMA);
    expect(req!.timeoutMs).toBe(5_000);
    expect(userMessage(req!)).toContain('### src/a.ts (modified)');
    expect(i.env.spans).toEqual([
      expect.objectContaining({
        kind: 'model',
        name: 'model',
        status: 'ok',
        provider: 'openai',
        inputTokens: 100,
        outputTokens: 10,
        costUsd: 0.001,
        attributes: expect.objectContaining({
          chunk: 0,
          attempt: 1,
          files: 2,
          promptTokens: expect.any(Number),
        }),
      }),
    ]);
    expect(callStage.counts(out, i)).toEqual({
      parts: 1,
      answers: 1,
      failedParts: 0,
      splits: 0,
      retryable: false,
    });
  });

  test('an unusable answer gets one repair attempt with the exact problem; the repaired answer is used', async () => {
    const model = fakeProvider((_req, n) => (n === 1 ? 'I could not decide.' : answer()));
    const out = await callStage.run(input(model));
    expect(model.requests).toHaveLength(2);
    const repair = model.requests[1]!.messages;
    expect(repair.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(repair[1]!.content).toBe('I could not decide.');
    expect(repair[2]!.content).toMatch(
      /^Your previous response could not be used\. The response contains no JSON object\./,
    );
    expect(out.primary.outputs).toHaveLength(1);
    expect(out.primary.failed.size).toBe(0);
  });

  test('unusable twice: the part fails, not retryable, with the reason', async () => {
    const out = await callStage.run(input(fakeProvider(() => '{"overview": 1}')));
    expect(out.primary.outputs).toEqual([]);
    expect(out.primary.retryable).toBe(false);
    expect(out.primary.failed.get(0)).toMatch(
      /^the model call succeeded but returned no usable review JSON payload \(The JSON object is not a usable review output: /,
    );
  });

  test('findings that cannot be read: the repair names them, and the answer that loses fewer is kept', async () => {
    const noPath = { ...FINDING, path: '' };
    const answers: FakeAnswer[] = [answer([FINDING, noPath]), answer([noPath, noPath])];
    const model = fakeProvider((_req, n) => answers[n - 1]!);
    const out = await callStage.run(input(model));
    expect(model.requests[1]!.messages[2]!.content).toMatch(
      /^1 finding\(s\) of your previous response could not be used:\n- finding 1 has no `path`/,
    );
    expect(out.primary.outputs).toHaveLength(1);
    expect(out.primary.outputs[0]!.unreadable).toBe(1);
    expect(out.primary.outputs[0]!.output.findings.map((f) => f.title)).toEqual(['Off by one']);
  });

  test('an answer cut at the output token limit: no repair, the part is split and both halves reviewed', async () => {
    const model = fakeProvider((_req, n) =>
      n === 1 ? { text: '{"overview": "cut', truncated: true } : answer([]),
    );
    const i = input(model);
    const out = await callStage.run(i);
    expect(model.requests).toHaveLength(3);
    expect(userMessage(model.requests[1]!)).toContain('### src/a.ts');
    expect(userMessage(model.requests[1]!)).not.toContain('### src/b.ts');
    expect(userMessage(model.requests[2]!)).toContain('### src/b.ts');
    expect(out.primary.splits).toBe(1);
    expect(out.primary.outputs.map((o) => o.chunk)).toEqual([0, 0]);
    expect(out.primary.outputs[0]!.warnings[0]).toBe(
      'the answer was cut at the output token limit: the part was split in two and both halves reviewed',
    );
    expect(i.env.spans.map((s) => s.attributes?.split ?? 0)).toEqual([0, 1, 1]);
  });

  test('a timeout fails the part as retryable, its model span an error with the code and no usage', async () => {
    const i = input(
      fakeProvider(() => new ModelCallError('timeout', 'chat completion timeout after 5000 ms')),
    );
    const out = await callStage.run(i);
    expect(out.primary.failed.get(0)).toBe('chat completion timeout after 5000 ms');
    expect(out.primary.retryable).toBe(true);
    expect(i.env.spans[0]).toMatchObject({
      kind: 'model',
      status: 'error',
      inputTokens: null,
      costUsd: null,
      attributes: expect.objectContaining({
        code: 'timeout',
        error: 'chat completion timeout after 5000 ms',
      }),
    });
  });

  test('a prompt over the input budget is not sent', async () => {
    const model = fakeProvider(() => answer());
    const system = 'Review the change. '.repeat(400);
    const i = input(model, { prompt: { system }, env: modelEnv({ contextTokens: 1_000 }) });
    const out = await callStage.run(i);
    expect(model.requests).toHaveLength(0);
    expect(out.primary.failed.get(0)).toMatch(
      /^the prompt is \d+ tokens, over the input budget of 1000 tokens of gpt-4o-mini; not sent$/,
    );
    expect(i.env.spans[0]!.attributes).toMatchObject({ code: 'over_budget', inputBudget: 1000 });
  });

  test('the shadow model reviews the same parts after the primary; its failure never fails the call', async () => {
    const primary = fakeProvider(() => answer());
    const shadow = fakeProvider(() => new Error('shadow is down'), { model: 'gpt-4o' });
    const i = input(primary, { providers: { primary, shadow } });
    const out = await callStage.run(i);
    expect(out.primary.outputs).toHaveLength(1);
    expect(out.shadow).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      status: 'failed',
      output: null,
      errors: [{ chunk: 0, error: 'shadow is down' }],
    });
    expect(userMessage(shadow.requests[0]!)).toBe(userMessage(primary.requests[0]!));
    expect(shadow.requests[0]!.timeoutMs).toBe(2_000);
    expect(i.env.spans.map((s) => s.name)).toEqual(['model', 'shadow-model']);
    expect(callStage.counts(out, i)).toMatchObject({ shadow: 'failed' });
  });

  test('no part with a diff: one call that says so', async () => {
    const model = fakeProvider(() => answer([]));
    const out = await callStage.run(input(model, { budgeted: { context: CONTEXT, input: { chunks: [] } } }));
    expect(model.requests).toHaveLength(1);
    expect(userMessage(model.requests[0]!)).toContain(
      'No changed file has a textual diff that can be reviewed',
    );
    expect(out.primary.outputs[0]!.chunk).toBe(0);
  });
});
