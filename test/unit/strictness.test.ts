import type { Finding } from '../../src/review/output.schema.js';
import {
  ALWAYS_KEPT_SEVERITIES,
  ALWAYS_KEPT_TERMS,
  applyStrictness,
  isAlwaysKept,
  matchedAlwaysKeptTerm,
  recognizedConfidence,
  type Strictness,
} from '../../src/review/strictness.js';

type Candidate = Finding & { confidence?: number | null };

function f(severity: string, overrides: Partial<Candidate> = {}): Candidate {
  return {
    severity: severity as Finding['severity'],
    category: 'style',
    path: 'src/a.ts',
    title: 'Rename variable',
    body: 'The name is unclear.',
    contextIds: [],
    ...overrides,
  };
}

const kept = (finding: Candidate, strictness: Strictness) =>
  applyStrictness([finding], strictness).kept.length === 1;

describe('applyStrictness rows (3.3)', () => {
  test.each<[string, Strictness, Candidate, boolean]>([
    // low: publish all
    ['low keeps low', 'low', f('low'), true],
    ['low keeps medium with low confidence', 'low', f('medium', { confidence: 0.1 }), true],
    ['low keeps a nit', 'low', f('nit'), true],
    // medium: drop medium findings carrying a recognized confidence below 0.8
    ['medium drops medium at 0.79', 'medium', f('medium', { confidence: 0.79 }), false],
    ['medium drops medium at 0', 'medium', f('medium', { confidence: 0 }), false],
    ['medium keeps medium at exactly 0.8', 'medium', f('medium', { confidence: 0.8 }), true],
    ['medium keeps medium at 0.95', 'medium', f('medium', { confidence: 0.95 }), true],
    ['medium keeps medium with missing confidence', 'medium', f('medium'), true],
    ['medium keeps medium with null confidence', 'medium', f('medium', { confidence: null }), true],
    [
      'medium keeps medium with NaN confidence (not recognized)',
      'medium',
      f('medium', { confidence: NaN }),
      true,
    ],
    [
      'medium keeps medium with confidence 3 (not recognized)',
      'medium',
      f('medium', { confidence: 3 }),
      true,
    ],
    ['medium keeps medium with negative confidence', 'medium', f('medium', { confidence: -0.2 }), true],
    ['medium keeps low even at low confidence', 'medium', f('low', { confidence: 0.1 }), true],
    ['medium keeps low with missing confidence', 'medium', f('low'), true],
    ['medium keeps high at low confidence', 'medium', f('high', { confidence: 0.1 }), true],
    ['medium keeps blocker at low confidence', 'medium', f('blocker', { confidence: 0.1 }), true],
    ['medium matches severity case-insensitively', 'medium', f('Medium', { confidence: 0.5 }), false],
    // high: drop medium and low
    ['high drops medium', 'high', f('medium'), false],
    ['high drops medium even at confidence 1', 'high', f('medium', { confidence: 1 }), false],
    ['high drops low', 'high', f('low'), false],
    ['high drops nit', 'high', f('nit'), false],
    ['high drops info', 'high', f('info'), false],
    ['high keeps high', 'high', f('high'), true],
    ['high keeps blocker', 'high', f('blocker', { confidence: 0.1 }), true],
    ['high keeps critical', 'high', f('critical'), true],
    ['high keeps HIGH in capitals', 'high', f('HIGH'), true],
  ])('%s', (_name, strictness, finding, expected) => {
    expect(kept(finding, strictness)).toBe(expected);
    const result = applyStrictness([finding], strictness);
    expect(result.kept.length + result.dropped.length).toBe(1);
  });

  test('splits a mixed list into kept and dropped, preserving order and identity', () => {
    const a = f('blocker');
    const b = f('medium', { confidence: 0.5 });
    const c = f('low');
    const d = f('medium', { title: 'SQL injection in search' });
    const e = f('high');
    expect(applyStrictness([a, b, c, d, e], 'high')).toEqual({ kept: [a, d, e], dropped: [b, c] });
    expect(applyStrictness([a, b, c, d, e], 'medium')).toEqual({ kept: [a, c, d, e], dropped: [b] });
    const low = applyStrictness([a, b, c, d, e], 'low');
    expect(low.kept).toEqual([a, b, c, d, e]);
    expect(low.kept[1]).toBe(b);
    expect(low.dropped).toEqual([]);
  });

  test('an empty list stays empty', () => {
    expect(applyStrictness([], 'high')).toEqual({ kept: [], dropped: [] });
  });
});

describe('always kept', () => {
  test('exports the 3.3 terms and severities', () => {
    expect([...ALWAYS_KEPT_TERMS].map((t) => t.toLowerCase())).toEqual([
      'security',
      'injection',
      'xss',
      'csrf',
      'ssrf',
      'memory leak',
      'infinite loop',
      'null dereference',
      'missing validation',
    ]);
    expect([...ALWAYS_KEPT_SEVERITIES]).toEqual(['blocker', 'critical', 'high']);
  });

  describe.each([...ALWAYS_KEPT_TERMS])('term %s', (term) => {
    test.each<['title' | 'body' | 'category', (t: string) => string]>([
      ['title', (t) => `Possible ${t} here`],
      ['body', (t) => `This looks like a ${t.toUpperCase()} problem.`],
      ['category', (t) => t.toLowerCase()],
    ])('keeps low and medium findings at high strictness when it is in the %s', (field, text) => {
      const low = f('low', { [field]: text(term) });
      const medium = f('medium', { [field]: text(term), confidence: 0.1 });
      expect(kept(low, 'high')).toBe(true);
      expect(kept(medium, 'high')).toBe(true);
      expect(kept(medium, 'medium')).toBe(true);
      expect(matchedAlwaysKeptTerm(text(term))).toBe(term);
    });

    test('the same finding without the term is dropped (control)', () => {
      expect(kept(f('low', { title: 'Possible typo here' }), 'high')).toBe(false);
    });
  });

  test.each([
    'SQL-injection in search',
    'Stored xss via markdown',
    'Security: token logged',
    'memory-leak in cache',
    'Memory   leaks on reconnect',
    'infinite_loop on retry',
    'Potential NULL dereference',
    'Missing validation of the body',
    'missing validations on input',
    'SQL injections',
    '(SSRF)',
    'csrf.',
  ])('word-ish match: %s', (text) => {
    expect(isAlwaysKept(f('low', { title: text }))).toBe(true);
  });

  test.each([
    'insecurity of the naming',
    'securityContext is renamed',
    'reinjection of config',
    'memory usage leaks nothing',
    'loop that is infinite',
    'validation is missing',
    'XSSI',
    'null',
    'missing test',
  ])('no match inside other words or phrases: %s', (text) => {
    expect(isAlwaysKept(f('low', { title: text, body: '', category: 'style' }))).toBe(false);
  });

  test('recognizedConfidence accepts finite numbers 0..1 only', () => {
    expect(recognizedConfidence(0.5)).toBe(0.5);
    expect(recognizedConfidence(0)).toBe(0);
    expect(recognizedConfidence(1)).toBe(1);
    for (const v of [undefined, null, NaN, Infinity, -0.1, 1.01, 80, '0.5'])
      expect(recognizedConfidence(v)).toBeNull();
  });
});
