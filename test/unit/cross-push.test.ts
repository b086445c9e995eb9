import { CROSS_PUSH_LINE_TOLERANCE, continuePrior, matchAcrossPushes } from '../../src/review/cross-push.js';
import type { PriorConcern } from '../../src/review/cross-push.js';
import { findingFingerprint } from '../../src/review/fingerprint.js';
import { findLineText, followLine } from '../../src/review/line-map.js';
import { RECORDED, REWORDED } from '../helpers/alike-pairs.js';

/**
 * Cross-push matching (src/review/cross-push.ts) and following a line between heads (line-map.ts): a
 * finding the model rewords on the next push keeps its prior finding's identity when it is on the same
 * path, at or near the prior anchor followed to the new head, and alike in text.
 */

describe('followLine: a line of an earlier head at the later head', () => {
  // Old file: lines 1..10. The patch inserts two lines after line 2, replaces line 5 with two lines and
  // removes line 8.
  const patch = [
    '@@ -2,1 +2,3 @@',
    ' two',
    '+two-a',
    '+two-b',
    '@@ -4,3 +6,4 @@',
    ' four',
    '-five',
    '+five-a',
    '+five-b',
    ' six',
    '@@ -8,1 +10,0 @@',
    '-eight',
  ].join('\n');

  test('lines before, inside and after hunks', () => {
    expect(followLine(patch, 1)).toEqual({ line: 1, kept: true });
    expect(followLine(patch, 2)).toEqual({ line: 2, kept: true });
    expect(followLine(patch, 3)).toEqual({ line: 5, kept: true });
    expect(followLine(patch, 4)).toEqual({ line: 6, kept: true });
    // The removed line stands where its replacement starts.
    expect(followLine(patch, 5)).toEqual({ line: 7, kept: false });
    expect(followLine(patch, 6)).toEqual({ line: 9, kept: true });
    expect(followLine(patch, 7)).toEqual({ line: 10, kept: true });
    // New: 1 one, 2 two, 3-4 two-a/b, 5 three, 6 four, 7-8 five-a/b, 9 six, 10 seven, 11 nine, 12 ten.
    expect(followLine(patch, 8)).toEqual({ line: 11, kept: false });
    expect(followLine(patch, 9)).toEqual({ line: 11, kept: true });
    expect(followLine(patch, 10)).toEqual({ line: 12, kept: true });
  });

  test('a pure insertion, and no patch (the file did not change)', () => {
    const insert = '@@ -3,0 +4,2 @@\n+new\n+new';
    expect(followLine(insert, 3)).toEqual({ line: 3, kept: true });
    expect(followLine(insert, 4)).toEqual({ line: 6, kept: true });
    expect(followLine(null, 42)).toEqual({ line: 42, kept: true });
  });

  test('findLineText: the occurrence of the anchored text nearest the old line', () => {
    const source = ['a', '  store.delete(key);', 'b', 'c', 'd', '  store.delete(key);', 'e'].join('\n');
    expect(findLineText(source, 'store.delete(key);\nmore', 5)).toBe(6);
    expect(findLineText(source, 'store.delete(key);', 1)).toBe(2);
    expect(findLineText(source, 'not there', 1)).toBeNull();
    expect(findLineText(source, '   ', 1)).toBeNull();
    expect(findLineText(source, null, 1)).toBeNull();
  });
});

describe('matchAcrossPushes', () => {
  const { a: leak, b: leakReworded } = REWORDED[0]!; // rates/client.go, "Response body not closed ..."
  const path = 'rates/client.go';
  const prior = (over: Partial<PriorConcern> = {}): PriorConcern => ({
    fingerprint: findingFingerprint({ path, category: 'resource-leak', title: leak.title }),
    title: leak.title,
    body: leak.body,
    category: 'resource-leak',
    path,
    at: { line: 76, endLine: 78 },
    ...over,
  });
  const finding = (over: Record<string, unknown> = {}) => ({
    path,
    category: 'reliability',
    title: leakReworded.title,
    body: leakReworded.body,
    line: 80,
    endLine: 81,
    ...over,
  });

  test('a rewording on the same path near the followed anchor continues the prior finding', () => {
    const matches = matchAcrossPushes([finding()], [prior()]);
    expect(matches).toHaveLength(1);
    expect(matches[0]).toMatchObject({ index: 0, title: leakReworded.title, prior: { title: leak.title } });
    // It takes the prior finding's title and category, and so its fingerprint (and thread).
    const continued = continuePrior(finding(), matches[0]!.prior);
    expect(findingFingerprint(continued)).toBe(prior().fingerprint);
    expect(continued).toMatchObject({ body: leakReworded.body, line: 80, category: 'resource-leak' });
  });

  test('too far from the anchor, on another path, or another issue: no match', () => {
    const far = 78 + CROSS_PUSH_LINE_TOLERANCE + 1;
    expect(matchAcrossPushes([finding({ line: far, endLine: far })], [prior()])).toEqual([]);
    expect(matchAcrossPushes([finding({ line: far - 1, endLine: far - 1 })], [prior()])).toHaveLength(1);
    expect(matchAcrossPushes([finding({ path: 'rates/other.go' })], [prior()])).toEqual([]);
    const sleep = RECORDED.backoffSleepIgnoresContextCancellation;
    expect(matchAcrossPushes([finding({ ...sleep, line: 77, endLine: 77 })], [prior()])).toEqual([]);
  });

  test('without an anchor on either side the text and path decide', () => {
    expect(matchAcrossPushes([finding({ line: null, endLine: null })], [prior()])).toHaveLength(1);
    expect(matchAcrossPushes([finding({ line: 300, endLine: 300 })], [prior({ at: null })])).toHaveLength(1);
  });

  test('an exact match wins; a prior finding continues at most one new finding', () => {
    const exact = finding({ title: leak.title, category: 'resource-leak', body: leak.body });
    expect(matchAcrossPushes([finding(), exact], [prior()])).toEqual([]);
    const twice = matchAcrossPushes([finding(), finding({ line: 77, endLine: 77 })], [prior()]);
    expect(twice.map((m) => m.index)).toEqual([0]);
  });
});
