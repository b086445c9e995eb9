import {
  ALIKE_THRESHOLD,
  jaccard,
  mostAlike,
  shingles,
  similarity,
  tokens,
} from '../../src/memory/similarity.js';

/**
 * Findings as review models word them: each pair in `REWORDED` is one issue said twice (the second as a
 * model rewords it on the next push); each pair in `DIFFERENT` is two issues of the same file or topic.
 */
const RACE = {
  title: 'Eviction races with concurrent writes',
  body: 'evict() runs between get() and set(), so a concurrent write can be lost when the key is evicted.',
};
const LOGGER = {
  title: 'Use the logger instead of console.log',
  body: 'console.log bypasses the structured logger; use log.info so the request id is attached.',
};
const NULL_USER = {
  title: 'Missing null check on user lookup',
  body: 'users.find() can return undefined, and user.name is read without a check.',
};
const SQL = {
  title: 'SQL query built with string concatenation',
  body: 'The id is concatenated into the SQL string, which allows SQL injection. Use a parameterised query.',
};
const LODASH = { title: 'Unused import of lodash', body: 'lodash is imported but never used in this file.' };

const REWORDED: Array<[typeof RACE, typeof RACE]> = [
  [
    RACE,
    {
      title: 'Race between evict() and set()',
      body: 'If evict() runs while another request calls set(), the write is lost because evict deletes the key between get and set.',
    },
  ],
  [
    LOGGER,
    {
      title: 'console.log used instead of log.info',
      body: 'Replace console.log with log.info: the structured logger attaches the request id.',
    },
  ],
  [
    NULL_USER,
    {
      title: 'user may be undefined',
      body: 'find() returns undefined when no user matches; accessing user.name will throw.',
    },
  ],
  [
    SQL,
    {
      title: 'Possible SQL injection',
      body: 'req.params.id is interpolated into the query string; pass it as a bound parameter instead.',
    },
  ],
  [LODASH, { title: 'lodash import is unused', body: 'The lodash import is never used; remove it.' }],
];

const DIFFERENT: Array<[typeof RACE, typeof RACE]> = [
  [
    RACE,
    {
      title: 'Hits are never revalidated',
      body: 'get() returns stale entries because hits are never checked against the ttl.',
    },
  ],
  [
    LOGGER,
    {
      title: 'Log line leaks the password',
      body: 'log.info prints the whole request body, including the password field.',
    },
  ],
  [NULL_USER, SQL],
  [
    SQL,
    {
      title: 'Query runs inside a loop',
      body: 'The SQL query is executed once per user; batch it into one query with IN.',
    },
  ],
  [
    LODASH,
    {
      title: 'lodash is imported twice',
      body: 'lodash is imported in both index.ts and util.ts; import it once.',
    },
  ],
  [
    { title: 'set() ignores a ttl', body: 'The ttl argument is accepted but never passed to store.set.' },
    RACE,
  ],
  // Short findings with the same stock body: the titles share no word, so they are different issues.
  [
    { title: 'Eviction races with writes', body: 'Why it matters.' },
    { title: 'Hits are never revalidated', body: 'Why it matters.' },
  ],
];

describe('finding similarity (normalised stems, Jaccard)', () => {
  test('tokens: lower-cased, split at punctuation, function words and single letters dropped, stemmed', () => {
    expect(tokens('The store.delete() call in evict() IS racing, a bug')).toEqual([
      'store',
      'delet',
      'call',
      'evict',
      'racin',
      'bug',
    ]);
    expect(tokens('Eviction evicted evicts')).toEqual(['evict', 'evict', 'evict']);
    expect(tokens('')).toEqual([]);
  });

  test('jaccard: shared over all, symmetric, 0 for nothing shared and for two empty sets', () => {
    const a = new Set(['x', 'y', 'z']);
    const b = new Set(['y', 'z', 'w']);
    expect(jaccard(a, b)).toBeCloseTo(2 / 4);
    expect(jaccard(b, a)).toBe(jaccard(a, b));
    expect(jaccard(a, new Set(['q']))).toBe(0);
    expect(jaccard(new Set(), new Set())).toBe(0);
    expect(jaccard(a, a)).toBe(1);
  });

  test.each(REWORDED.map(([a, b]) => [a.title, b.title, a, b]))(
    'a rewording is alike: "%s" ~ "%s"',
    (_t1, _t2, a, b) => {
      expect(similarity(a, b)).toBeGreaterThanOrEqual(ALIKE_THRESHOLD);
      expect(similarity(b, a)).toBe(similarity(a, b));
    },
  );

  test.each(DIFFERENT.map(([a, b]) => [a.title, b.title, a, b]))(
    'different issues stay apart: "%s" / "%s"',
    (_t1, _t2, a, b) => {
      expect(similarity(a, b)).toBeLessThan(ALIKE_THRESHOLD);
    },
  );

  test('the threshold has room on both sides of the pairs', () => {
    const lowestAlike = Math.min(...REWORDED.map(([a, b]) => similarity(a, b)));
    const highestApart = Math.max(...DIFFERENT.map(([a, b]) => similarity(a, b)));
    expect(lowestAlike - ALIKE_THRESHOLD).toBeGreaterThanOrEqual(0.04);
    expect(ALIKE_THRESHOLD - highestApart).toBeGreaterThanOrEqual(0.04);
  });

  test('mostAlike: the best candidate at or above the threshold, the earlier one on a tie, else null', () => {
    const [race, reworded] = REWORDED[0]!;
    const candidates = [LOGGER, SQL, { ...reworded }, { ...reworded }, NULL_USER];
    const best = mostAlike(race, candidates);
    expect(best?.match).toBe(candidates[2]);
    expect(best?.score).toBeCloseTo(similarity(race, reworded));
    expect(mostAlike(race, [LOGGER, SQL])).toBeNull();
    expect(mostAlike(race, [])).toBeNull();
    // A text identical to a candidate scores 1.
    expect(mostAlike(LODASH, [LODASH])?.score).toBe(1);
    expect(shingles({ title: 'a b' }).size).toBe(0);
  });

  test('titles that share no word are different issues whatever the bodies share', () => {
    const body = 'evict() runs between get() and set(), so a concurrent write can be lost.';
    expect(similarity({ title: 'Eviction races', body }, { title: 'Lost update', body })).toBe(0);
    expect(similarity({ title: 'Eviction races', body }, { title: 'Races on eviction', body })).toBe(1);
  });
});
