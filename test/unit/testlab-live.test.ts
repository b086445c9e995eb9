import { callOf, promptHash, RecordedAnswersProvider, type RecordedCall } from '../../src/testlab/live.js';
import type { ModelRequest } from '../../src/review/providers/index.js';
import { SYNTHESIS_SYSTEM } from '../../src/review/synthesis.js';

const req = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You review code.',
  messages: [{ role: 'user', content: '# Pull request testlab/go-x#1\n## Part 2 of 3\ndiff' }],
  timeoutMs: 1000,
  ...over,
});

const recorded = (over: Partial<RecordedCall> = {}): RecordedCall => ({
  key: 'part-2',
  kind: 'review',
  promptHash: promptHash(req()),
  answerHash: 'h',
  answer: '{"findings": []}',
  model: 'gpt-x',
  inputTokens: 10,
  outputTokens: 2,
  costUsd: 0.001,
  durationMs: 5,
  ...over,
});

describe('prompt hashes of live Test Lab calls', () => {
  test('the hash covers the system prompt, the structured output and every message', () => {
    const hash = promptHash(req());
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(promptHash(req())).toBe(hash);
    expect(promptHash(req({ timeoutMs: 5 }))).toBe(hash); // not part of the prompt
    for (const changed of [
      req({ system: 'You review code!' }),
      req({ schemaName: 'verification' }),
      req({ jsonSchema: { type: 'object' } }),
      req({ messages: [{ role: 'user', content: '# Pull request testlab/go-x#1\n## Part 2 of 3\ndiff ' }] }),
      req({ messages: [...req().messages, { role: 'assistant', content: 'x' }] }),
    ]) {
      expect(promptHash(changed)).not.toBe(hash);
    }
  });

  test('a call is named by its case, part and kind', () => {
    expect(callOf(req())).toEqual({ caseName: 'go-x', key: 'part-2', kind: 'review' });
    expect(callOf(req({ messages: [...req().messages, { role: 'user', content: 'fix it' }] }))).toEqual({
      caseName: 'go-x',
      key: 'part-2.repair',
      kind: 'repair',
    });
    expect(callOf(req({ system: SYNTHESIS_SYSTEM })).kind).toBe('synthesis');
    expect(callOf(req({ schemaName: 'verification' })).key).toBe('verification');
    expect(callOf(req({ messages: [{ role: 'user', content: 'no case' }] })).caseName).toBeNull();
  });

  test('a recorded answer is served once, to its own prompt; any other prompt is refused', async () => {
    const provider = new RecordedAnswersProvider(new Map([['go-x', [recorded()]]]), 'recorded:tl_1');
    const res = await provider.complete(req());
    expect(res).toMatchObject({
      text: '{"findings": []}',
      usage: { inputTokens: 10, outputTokens: 2 },
      costUsd: 0.001,
    });
    await expect(provider.complete(req())).rejects.toThrow(
      /the prompt changed: go-x\/part-2 was recorded for prompt/,
    );
    await expect(provider.complete(req({ system: 'other' }))).rejects.toThrow(
      /recorded answers refused: the prompt changed/,
    );
    await expect(
      provider.complete(req({ messages: [{ role: 'user', content: '# Pull request testlab/go-y#1' }] })),
    ).rejects.toThrow(/no answer of go-y\/part-1 was recorded/);
    expect(provider.served).toEqual(['go-x/part-2']);
    expect(provider.refusals).toHaveLength(3);
  });
});
