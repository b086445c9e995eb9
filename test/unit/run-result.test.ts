import { readRunResult } from '../../src/review/run-result.js';

describe('readRunResult', () => {
  // A result as an early version stored it: no warnings, admission, synthesis, degraded flag and so on,
  // and an output from before its newer fields.
  const older = {
    headSha: 'a'.repeat(40),
    provider: 'openai',
    model: 'gpt-4o-mini',
    output: {
      verdict: 'needs-attention',
      confidenceScore: 4,
      summary: 'Eviction races with writes.',
      findings: [
        { severity: 'high', path: 'src/cache.ts', title: 'Eviction race', body: 'evict() runs between.' },
      ],
    },
    priorFindings: {
      supplied: 1,
      resolved: [{ fingerprint: 'fp-1', disposition: 'resolved', explanation: 'guarded now' }],
    },
  };

  test('reads an older result as stored, with neutral values for the parts it lacks', () => {
    const result = readRunResult(structuredClone(older));
    expect(result).not.toBeNull();
    expect(result!.output).toEqual(older.output);
    expect(result!.priorFindings).toEqual(older.priorFindings);
    expect(result!.headSha).toBe(older.headSha);
    expect(result!.warnings).toEqual([]);
    expect(result!.admission).toEqual({ notes: [] });
    expect(result!.unreadableFindings).toBe(0);
    expect(result!.synthesis).toBeNull();
    expect(result!.degraded).toBe(false);
    // No neutral value: a missing coverage stays missing (publication reads it as missing).
    expect(result!.coverage).toBeUndefined();
    const { priorFindings: _, ...withoutPrior } = older;
    expect(readRunResult(withoutPrior)!.priorFindings).toEqual({
      supplied: 0,
      resolved: [],
      rejected: [],
      carriedOpen: [],
    });
  });

  test('a value that is not a result reads as null', () => {
    for (const value of [null, undefined, 'analysed', 42, [older], {}, { attempts: 1 }, { output: 'x' }]) {
      expect(readRunResult(value)).toBeNull();
    }
    expect(readRunResult({ ...older, output: { verdict: 'clear' } })).toBeNull();
    expect(readRunResult({ ...older, output: { findings: 'none' } })).toBeNull();
  });
});
