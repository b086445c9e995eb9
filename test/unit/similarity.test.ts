import {
  ALIKE_THRESHOLD,
  findingText,
  fold,
  jaccard,
  shingles,
  textSimilarity,
  textsAlike,
  words,
} from '../../src/review/similarity.js';

/** The deterministic similarity of finding texts (src/review/similarity.ts), and its threshold pinned. */

const f = (title: string, body: string) => ({ title, body });

/** Pairs written about the same bug in other words: alike. */
const SAME: Array<[string, ReturnType<typeof f>, ReturnType<typeof f>]> = [
  [
    'reworded',
    f('Eviction races with concurrent writes', 'evict() runs between get and set.'),
    f('Race between evict and concurrent set', 'evict can run between get and set, losing the write.'),
  ],
  [
    'near identical',
    f(
      'Off-by-one in loop bound',
      'The loop runs while i <= items.length, so items[items.length] is undefined.',
    ),
    f(
      'Off-by-one: loop reads past the end',
      'The loop condition i <= items.length reads items[items.length], which is undefined.',
    ),
  ],
];

/** Pairs about different bugs of one file, some sharing words: not alike. */
const DIFFERENT: Array<[string, ReturnType<typeof f>, ReturnType<typeof f>]> = [
  [
    'different bugs on the same lines',
    f('Missing await on save', 'save() returns a promise that is never awaited, so errors are lost.'),
    f(
      'Off-by-one in loop bound',
      'The loop runs while i <= items.length, so items[items.length] is undefined.',
    ),
  ],
  [
    'shared words: user',
    f('Null dereference of user', 'user may be null when the session expired; user.id throws.'),
    f('User id not validated', 'The user id from the request is not validated before the query.'),
  ],
  [
    'shared words: cache',
    f('Cache entry never expires', 'The TTL is ignored, so stale entries are served forever.'),
    f('Cache key ignores tenant', 'Two tenants share the cache entry for the same user id.'),
  ],
];

describe('similarity of finding texts', () => {
  test('words: lower case, split on anything but letters and digits, glue words and single letters dropped', () => {
    expect(words('The store.delete(key) call IS racing: ünïcode v2 x')).toEqual([
      'stor',
      'delet',
      'key',
      'call',
      'rac',
      'ünïcod',
      'v2',
    ]);
  });

  test('inflections fold together', () => {
    for (const group of [
      ['race', 'races', 'raced', 'racing'],
      ['cache', 'caches', 'cached', 'caching'],
      ['query', 'queries'],
    ]) {
      expect(new Set(group.map(fold)).size).toBe(1);
    }
    expect(fold('class')).toBe('class');
    expect(fold('status')).toBe('status');
    expect(fold('bed')).toBe('bed');
  });

  test('shingles are the words and the pairs of neighbouring words; Jaccard compares the sets', () => {
    expect([...shingles('null pointer dereference')]).toEqual([
      'null',
      'pointer',
      'dereferenc',
      'null pointer',
      'pointer dereferenc',
    ]);
    expect(jaccard(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3, 10);
    expect(jaccard(new Set(), new Set())).toBe(1);
    expect(textSimilarity('same text here', 'same text here')).toBe(1);
    expect(textSimilarity('alpha beta', 'gamma delta')).toBe(0);
    // Symmetric and deterministic.
    const [, a, b] = SAME[0]!;
    expect(textSimilarity(findingText(a), findingText(b))).toBe(
      textSimilarity(findingText(b), findingText(a)),
    );
  });

  test.each(SAME)('the same bug, %s: alike', (_label, a, b) => {
    expect(textSimilarity(findingText(a), findingText(b))).toBeGreaterThanOrEqual(ALIKE_THRESHOLD);
    expect(textsAlike(a, b)).toBe(true);
  });

  test.each(DIFFERENT)('%s: not alike', (_label, a, b) => {
    expect(textSimilarity(findingText(a), findingText(b))).toBeLessThan(ALIKE_THRESHOLD);
    expect(textsAlike(a, b)).toBe(false);
  });

  test('the threshold is 0.2; a terse and a long description of one bug can fall under it (said in the docs)', () => {
    expect(ALIKE_THRESHOLD).toBe(0.2);
    const terse = f('SQL injection in search', 'The search term is interpolated into the SQL string.');
    const long = f(
      'User input interpolated into SQL query',
      'The term from the request is concatenated into the query string instead of being passed as a bound parameter; an attacker can inject SQL.',
    );
    expect(textsAlike(terse, long)).toBe(false);
  });
});
