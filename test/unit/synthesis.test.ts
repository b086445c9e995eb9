import { mergeFindings, parseSynthesis, synthesisJsonSchema } from '../../src/review/synthesis.js';
import type { ReviewOutput } from '../../src/review/output.schema.js';
import { reviewOutput } from '../helpers/review-output.js';

const output = (findings: ReviewOutput['findings']): ReviewOutput =>
  reviewOutput({ findings, confidenceScore: 4, mergeVerdict: 'm' });
const f = (title: string, severity: 'blocker' | 'high' | 'medium' | 'low', path = 'a.ts') => ({
  severity,
  category: 'c',
  path,
  title,
  body: '',
  contextIds: [],
});

describe('synthesis', () => {
  test('its schema is strict: every property required, no others, no $schema', () => {
    const schema = synthesisJsonSchema() as any;
    expect(schema.$schema).toBeUndefined();
    expect(schema.additionalProperties).toBe(false);
    expect([...schema.required].sort()).toEqual(Object.keys(schema.properties).sort());
    expect(schema.required).toContain('duplicates');
  });

  test('a duplicate group keeps its most severe finding; the same fingerprint is kept once', () => {
    const merged = mergeFindings(
      [
        output([f('Race', 'medium'), f('Leak', 'low')]),
        output([f('Race again', 'high', 'b.ts'), f('Leak', 'low')]),
      ],
      [[1, 3], [99]],
    );
    expect(merged.findings.map((x) => x.title)).toEqual(['Leak', 'Race again']);
    expect(merged.merged).toBe(2);
  });

  test('an answer that is not the schema is refused with the field named', () => {
    expect(parseSynthesis('{"overview": "x"}')).toMatchObject({
      ok: false,
      error: expect.stringContaining('summary'),
    });
    expect(parseSynthesis('no json')).toEqual({
      ok: false,
      error: 'the synthesis answer holds no JSON object',
    });
  });
});
