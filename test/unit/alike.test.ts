import {
  ALIKE_THRESHOLD,
  AlikeIndex,
  alike,
  jaccard,
  mostAlike,
  shingles,
  similarity,
  tokens,
} from '../../src/memory/alike.js';
import { APART, RECORDED, REWORDED } from '../helpers/alike-pairs.js';

/**
 * The one measure of "alike" (src/memory/alike.ts), pinned on findings as review models write them:
 * recorded findings of the Test Lab corpus, each beside the same issue reworded as a model rewords it on
 * the next push (alike), and pairs of different issues of one file or of one kind (apart).
 */

describe('alike: normalised 4-character stems, Jaccard, titles must share a stem', () => {
  test('tokens: lower-cased, split at punctuation, function words and single letters dropped, stemmed', () => {
    expect(tokens('The store.delete() call in evict() IS racing, a bug')).toEqual([
      'stor',
      'dele',
      'call',
      'evic',
      'raci',
      'bug',
    ]);
    expect(tokens('Eviction evicted evicts')).toEqual(['evic', 'evic', 'evic']);
    expect(tokens('query queries')).toEqual(['quer', 'quer']);
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

  test('there are enough pairs of each kind', () => {
    expect(REWORDED.filter((p) => !p.label.includes('hand-written')).length).toBeGreaterThanOrEqual(10);
    expect(APART.length).toBeGreaterThanOrEqual(30);
  });

  test.each(REWORDED.map((p) => [p.label, p.a.title, p.b.title, p] as const))(
    'a rewording is alike (%s): "%s" ~ "%s"',
    (_label, _t1, _t2, { a, b }) => {
      expect(similarity(a, b)).toBeGreaterThanOrEqual(ALIKE_THRESHOLD);
      expect(similarity(b, a)).toBe(similarity(a, b));
      expect(alike(a, b)).toBe(true);
    },
  );

  test.each(APART.map((p) => [p.label, p.a.title, p.b.title, p] as const))(
    'different issues stay apart (%s): "%s" / "%s"',
    (_label, _t1, _t2, { a, b }) => {
      expect(similarity(a, b)).toBeLessThan(ALIKE_THRESHOLD);
      expect(alike(a, b)).toBe(false);
    },
  );

  test('the threshold lies between the lowest rewording and the highest pair of different issues', () => {
    const lowestAlike = Math.min(...REWORDED.map(({ a, b }) => similarity(a, b)));
    const highestApart = Math.max(...APART.map(({ a, b }) => similarity(a, b)));
    expect(ALIKE_THRESHOLD).toBe(0.24);
    expect(lowestAlike).toBeGreaterThanOrEqual(0.25);
    expect(highestApart).toBeLessThan(0.23);
  });

  test('titles that share no stem are different issues whatever the bodies share', () => {
    const body = 'evict() runs between get() and set(), so a concurrent write can be lost.';
    expect(similarity({ title: 'Eviction races', body }, { title: 'Lost update', body })).toBe(0);
    expect(similarity({ title: 'Eviction races', body }, { title: 'Races on eviction', body })).toBe(1);
    expect(shingles({ title: 'a b' }).size).toBe(0);
    expect(similarity({ title: '' }, { title: '' })).toBe(0);
  });

  test('mostAlike: the best candidate at or above the threshold, the earlier one on a tie, else null', () => {
    const { a: leak, b: reworded } = REWORDED[0]!;
    const candidates = [
      RECORDED.sqlInjectionThroughTheSearch,
      { ...reworded },
      { ...reworded },
      RECORDED.offByOneInPagewindow,
    ];
    const best = mostAlike(leak, candidates);
    expect(best?.match).toBe(candidates[1]);
    expect(best?.score).toBeCloseTo(similarity(leak, reworded));
    expect(mostAlike(leak, [RECORDED.sqlInjectionThroughTheSearch])).toBeNull();
    expect(mostAlike(leak, [])).toBeNull();
    expect(mostAlike(leak, [leak])?.score).toBe(1);
  });

  test('AlikeIndex: the same answer as scoring every candidate, a skipped candidate is passed over', () => {
    const everything = [...REWORDED.flatMap((p) => [p.b]), ...APART.flatMap((p) => [p.a, p.b])];
    const index = new AlikeIndex(everything);
    for (const { a } of [...REWORDED, ...APART]) {
      let expected: { index: number; score: number } | null = null;
      everything.forEach((c, i) => {
        const s = similarity(a, c);
        if (s >= ALIKE_THRESHOLD && (expected === null || s > expected.score))
          expected = { index: i, score: s };
      });
      const found = index.best(a);
      expect(found && { index: found.index, score: found.score }).toEqual(expected);
    }
    const { a, b } = REWORDED[1]!;
    const only = new AlikeIndex([b, b]);
    expect(only.best(a)?.index).toBe(0);
    expect(only.best(a, { accept: (_item, i) => i !== 0 })?.index).toBe(1);
    expect(only.best(a, { accept: () => false })).toBeNull();
  });
});
