import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withoutTrailingCommas } from '../../src/review/parse-json.js';
import { parseReviewOutput, repairFindingsPrompt } from '../../src/review/parse-output.js';

/**
 * Recorded answers with the habits of real models (fixtures/model-answers/): extra keys, other severity
 * words, prose, fences and reasoning around the JSON, trailing commas, a truncated answer, strings where
 * objects belong. Each is parsed as the engine parses it; `expected.json` says what must come out. No
 * finding is lost silently: each is kept, or counted as unreadable.
 */
const DIR = join(process.cwd(), 'fixtures', 'model-answers');
type Expected = {
  ok: boolean;
  findings?: Array<[string, string]>;
  unreadable?: number;
  warning?: string;
  error?: string;
  importantFiles?: string[];
  line?: number;
};
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as Record<string, Expected>;
const answers = readdirSync(DIR).filter((f) => f !== 'expected.json');

test('at least 15 recorded answers, each with its expectation', () => {
  expect(answers.length).toBeGreaterThanOrEqual(15);
  expect(answers.sort()).toEqual(Object.keys(expected).sort());
});

describe.each(answers)('%s', (name) => {
  const want = expected[name]!;
  const parsed = parseReviewOutput(readFileSync(join(DIR, name), 'utf8'), { suppliedContextIds: new Set() });

  test(want.ok ? 'is read, every finding kept or counted' : 'is refused with a precise error', () => {
    expect(parsed.ok).toBe(want.ok);
    if (!parsed.ok) {
      expect(parsed.error).toContain(want.error!);
      return;
    }
    expect(parsed.output.findings.map((f) => [f.severity, f.title])).toEqual(want.findings);
    expect(parsed.unreadable).toHaveLength(want.unreadable!);
    if (want.warning) expect(parsed.warnings).toContain(want.warning);
    if (want.importantFiles)
      expect(parsed.output.importantFiles.map((f) => f.path)).toEqual(want.importantFiles);
    if (want.line) expect(parsed.output.findings[0]!.line).toBe(want.line);
    for (const f of parsed.output.findings) expect(f.contextIds).toEqual([]);
  });
});

test('the repair message names each unreadable finding', () => {
  const parsed = parseReviewOutput(readFileSync(join(DIR, '11-missing-path.json'), 'utf8'), {
    suppliedContextIds: new Set(),
  });
  expect(parsed.ok && parsed.unreadable).toEqual([{ index: 0, reason: 'finding 0 has no `path`' }]);
  const text = repairFindingsPrompt(parsed.ok ? parsed.unreadable : []);
  expect(text).toContain(
    '1 finding(s) of your previous response could not be used:\n- finding 0 has no `path`',
  );
});

test('trailing commas are removed outside strings only', () => {
  expect(withoutTrailingCommas('{"a": [1, 2,], "b": "x,}",}')).toBe('{"a": [1, 2], "b": "x,}"}');
  expect(withoutTrailingCommas('{"a": "quote \\" ,]"}')).toBe('{"a": "quote \\" ,]"}');
});
