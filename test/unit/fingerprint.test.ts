import { createHash } from 'node:crypto';

import {
  findingFingerprint,
  normaliseCategory,
  normaliseFindingPath,
  normaliseTitle,
} from '../../src/review/fingerprint.js';

const base = { path: 'src/queue/worker.ts', category: 'correctness', title: 'Retry loop never terminates' };
const fp = (overrides: Partial<typeof base> = {}) => findingFingerprint({ ...base, ...overrides });

describe('findingFingerprint', () => {
  test('is fp_ and 20 lowercase hex characters, deterministic', () => {
    expect(fp()).toMatch(/^fp_[0-9a-f]{20}$/);
    expect(fp()).toBe(fp());
  });

  test('is the sha256 prefix of the normalised parts', () => {
    const digest = createHash('sha256')
      .update(['src/queue/worker.ts', 'correctness', 'retry loop never terminates'].join('\u0000'))
      .digest('hex');
    expect(fp()).toBe('fp_' + digest.slice(0, 20));
  });

  test.each<[string, Partial<typeof base>]>([
    ['a ./ path prefix', { path: './src/queue/worker.ts' }],
    ['a repeated ./ prefix', { path: '././src/queue/worker.ts' }],
    ['backslashes', { path: 'src\\queue\\worker.ts' }],
    ['surrounding whitespace in the path', { path: '  src/queue/worker.ts\n' }],
    ['a doubled slash', { path: 'src//queue/worker.ts' }],
    ['category case and whitespace', { category: '  Correctness ' }],
    ['title case', { title: 'RETRY LOOP NEVER TERMINATES' }],
    ['title whitespace', { title: '  Retry   loop\n never\tterminates ' }],
    ['title punctuation', { title: 'Retry loop never terminates!' }],
    ['a backticked title', { title: '`Retry` loop never terminates.' }],
    ['line N', { title: 'Retry loop never terminates (line 42)' }],
    ['Line N with colon', { title: 'Line 17: retry loop never terminates' }],
    ['lines N-M', { title: 'Retry loop never terminates at lines 10-20' }],
    ['lines N to M', { title: 'Retry loop never terminates, lines 10 to 20' }],
    ['line N, column M', { title: 'Retry loop never terminates (line 42, column 7)' }],
    ['line #N', { title: 'Retry loop never terminates on line #42' }],
    ['LN', { title: 'Retry loop never terminates at L42' }],
    ['on line N', { title: 'Retry loop never terminates on line 7' }],
    ['near lines N-M', { title: 'Retry loop never terminates near lines 7–9' }],
    ['#LN-LM', { title: 'Retry loop never terminates #L42-L50' }],
  ])('is stable under %s', (_name, overrides) => {
    expect(fp(overrides)).toBe(fp());
  });

  test.each([
    ['file:line', 'worker.ts:88 retry loop never terminates', 'worker.ts retry loop never terminates'],
    [
      'file:line:col',
      'Retry loop never terminates (worker.ts:88:3)',
      'Retry loop never terminates (worker.ts)',
    ],
  ])('drops the line of %s references', (_name, withLine, without) => {
    expect(fp({ title: withLine })).toBe(fp({ title: without }));
  });

  test('the same line reference at two different lines gives one fingerprint', () => {
    expect(fp({ title: 'Null check missing (line 12)' })).toBe(
      fp({ title: 'Null check missing (line 340)' }),
    );
    expect(fp({ title: 'Null check missing at L12' })).toBe(fp({ title: 'Null check missing at L9' }));
    expect(fp({ title: 'a.ts:12 Null check missing' })).toBe(fp({ title: 'a.ts:99 Null check missing' }));
  });

  test.each<[string, Partial<typeof base>]>([
    ['another path', { path: 'src/queue/worker2.ts' }],
    ['another directory', { path: 'lib/queue/worker.ts' }],
    ['path case', { path: 'src/Queue/worker.ts' }],
    ['another category', { category: 'performance' }],
    ['a materially different title', { title: 'Retry loop leaks sockets' }],
    ['a negated title', { title: 'Retry loop terminates' }],
    ['a title differing in a non-line number', { title: 'Retry loop never terminates after 3 tries' }],
    ['an HTTP status in the title', { title: 'Retry loop never terminates on 404' }],
  ])('changes with %s', (_name, overrides) => {
    expect(fp(overrides)).not.toBe(fp());
  });

  test('path, category and title do not bleed into each other', () => {
    expect(findingFingerprint({ path: 'a', category: 'b c', title: 'd' })).not.toBe(
      findingFingerprint({ path: 'a', category: 'b', title: 'c d' }),
    );
  });
});

describe('normalisers', () => {
  test.each([
    ['./src/a.ts', 'src/a.ts'],
    ['  .\\src\\a.ts ', 'src/a.ts'],
    ['src/./a.ts', 'src/./a.ts'],
    ['../a.ts', '../a.ts'],
    ['.github/workflows/ci.yml', '.github/workflows/ci.yml'],
  ])('normaliseFindingPath(%j) = %j', (input, expected) => {
    expect(normaliseFindingPath(input)).toBe(expected);
  });

  test('normaliseCategory lower-cases and trims', () => {
    expect(normaliseCategory('  Security  Hardening ')).toBe('security hardening');
  });

  test.each([
    ['  Null   check, missing!  ', 'null check missing'],
    ['Off-by-one in pager (line 12)', 'off by one in pager'],
    ['Use SHA256 not MD5', 'use sha256 not md5'],
    ['Handles HTTP 429 (lines 3-9)', 'handles http 429'],
    ['Ünïcode naïve façade', 'ünïcode naïve façade'],
  ])('normaliseTitle(%j) = %j', (input, expected) => {
    expect(normaliseTitle(input)).toBe(expected);
  });
});
