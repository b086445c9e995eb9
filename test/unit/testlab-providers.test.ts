import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelProvider, ModelRequest } from '../../src/review/providers/index.js';
import { SYNTHESIS_SYSTEM } from '../../src/review/synthesis.js';
import { loadCase } from '../../src/testlab/case.js';
import { answerFileOf, RecordingProvider, ReplayProvider } from '../../src/testlab/replay-provider.js';

const req = (content: string, over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are Verdict.',
  messages: [{ role: 'user', content }],
  timeoutMs: 1000,
  ...over,
});

describe('replay and recording providers', () => {
  test('a call is named by its case and part; synthesis and repair calls by their own files', () => {
    expect(answerFileOf(req('# Pull request testlab/go-x#1: T\n\n## Part 2 of 3\n'))).toEqual({
      caseName: 'go-x',
      file: 'part-2.txt',
    });
    expect(answerFileOf(req('# Pull request testlab/go-x#1: T'))).toEqual({
      caseName: 'go-x',
      file: 'part-1.txt',
    });
    expect(answerFileOf(req('# Pull request testlab/go-x#1: T', { system: SYNTHESIS_SYSTEM })).file).toBe(
      'synthesis.txt',
    );
    const repair = req('# Pull request testlab/go-x#1: T');
    repair.messages.push({ role: 'assistant', content: 'oops' }, { role: 'user', content: 'again' });
    expect(answerFileOf(repair).file).toBe('part-1.repair.txt');
    expect(answerFileOf(req('# Pull request acme/web#3: T')).caseName).toBeNull();
  });

  test('what a real provider answers is recorded, and replay answers the same; a missing answer fails the call', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tl-rec-')), 'go-shortener-click-stats');
    try {
      cpSync(join(process.cwd(), 'fixtures/testlab/go-shortener-click-stats'), dir, { recursive: true });
      rmSync(join(dir, 'answers'), { recursive: true });
      const c = loadCase(dir);
      const real: ModelProvider = {
        name: 'openai',
        model: 'gpt-test',
        complete: async () => ({
          text: '{"recorded": true}',
          usage: { inputTokens: 1, outputTokens: 1 },
          costUsd: 0.01,
          provider: 'openai',
          model: 'gpt-test',
          durationMs: 5,
        }),
      };
      const recorder = new RecordingProvider(real, new Map([[c.name, c]]));
      const prompt = req(`# Pull request testlab/${c.name}#1: T`);
      expect((await recorder.complete(prompt)).costUsd).toBe(0.01);
      expect(readFileSync(join(dir, 'answers/part-1.txt'), 'utf8')).toBe('{"recorded": true}');
      const replay = new ReplayProvider([loadCase(dir)]);
      expect(await replay.complete(prompt)).toMatchObject({
        text: '{"recorded": true}',
        provider: 'replay',
        costUsd: 0,
      });
      await expect(
        replay.complete(req(`# Pull request testlab/${c.name}#1: T\n\n## Part 2 of 2\n`)),
      ).rejects.toThrow(/no recorded answer go-shortener-click-stats\/answers\/part-2\.txt/);
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true });
    }
  });
});
