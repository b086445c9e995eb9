import { Suppressor, suppressionReason } from '../../src/memory/suppress.js';
import type { MatchableCluster } from '../../src/store/suppression.js';
import { APART, RECORDED, REWORDED } from '../helpers/alike-pairs.js';

/**
 * Which findings memory withholds (src/memory/suppress.ts): like a finding dismissed on the pull request,
 * or most like a cluster of the repository that suppresses (`suppress`, or two dismissals and no 👍
 * unless `keep`).
 */

const cluster = (
  id: string,
  text: { title: string; body: string },
  over: Partial<MatchableCluster> = {},
) => ({
  id,
  title: text.title,
  body: text.body,
  action: 'none' as const,
  feedback: { up: 0, dismissed: 0 },
  ...over,
});
const { a: sql, b: sqlReworded } = REWORDED[1]!; // SQL injection through the search term, reworded
const newFinding = { ...sqlReworded, fingerprint: 'fp_new' };

describe('Suppressor', () => {
  test('a suppressing cluster withholds what is alike it, and nothing else', () => {
    const s = Suppressor.of([cluster('clu_1', sql, { action: 'suppress' })], []);
    expect(s.decide(newFinding)).toMatchObject({ reason: 'cluster', cluster: { id: 'clu_1' } });
    const other = { ...RECORDED.leadingWildcardLikeCannotUse, fingerprint: 'fp_other' };
    expect(s.decide(other)).toBeNull();
    expect(suppressionReason(s.decide(newFinding)!)).toBe(
      `like memory cluster clu_1 ("${sql.title}"), whose findings reviewers dismissed`,
    );
  });

  test.each([
    ['action none, two dismissals, no up', { feedback: { up: 0, dismissed: 2 } }, true],
    ['action none, one dismissal', { feedback: { up: 0, dismissed: 1 } }, false],
    ['action none, two dismissals and an up', { feedback: { up: 1, dismissed: 2 } }, false],
    ['action keep, three dismissals', { action: 'keep' as const, feedback: { up: 0, dismissed: 3 } }, false],
    ['action suppress, an up', { action: 'suppress' as const, feedback: { up: 1, dismissed: 0 } }, true],
  ])('%s: withheld %s', (_label, over, withheld) => {
    const s = Suppressor.of([cluster('clu_1', sql, over)], []);
    expect(s.decide(newFinding) !== null).toBe(withheld);
  });

  test('a finding belongs to its most alike cluster: one most like a keep cluster is posted', () => {
    const keep = cluster('clu_keep', sqlReworded, { action: 'keep' });
    const suppress = cluster('clu_sup', sql, { action: 'suppress' });
    expect(Suppressor.of([suppress, keep], []).decide(newFinding)).toBeNull();
    expect(Suppressor.of([suppress], []).decide(newFinding)).not.toBeNull();
  });

  test('a finding like one dismissed on the pull request (same fingerprint, or alike) is withheld', () => {
    const dismissed = { fingerprint: 'fp_old', ...sql, path: 'src/main/java/ContactDao.java' };
    const s = Suppressor.of([], [dismissed]);
    expect(s.decide({ ...sql, fingerprint: 'fp_old' })).toMatchObject({ reason: 'dismissed', score: 1 });
    expect(s.decide(newFinding)).toMatchObject({ reason: 'dismissed', like: { fingerprint: 'fp_old' } });
    expect(suppressionReason(s.decide(newFinding)!)).toBe(
      `like a finding dismissed on this pull request: "${sql.title}"`,
    );
    for (const { a, b } of APART.slice(0, 10)) {
      expect(
        Suppressor.of([], [{ fingerprint: 'x', ...a, path: null }]).decide({ ...b, fingerprint: 'y' }),
      ).toBeNull();
    }
  });

  test('empty: nothing to match against', () => {
    expect(Suppressor.of([], []).empty).toBe(true);
    expect(Suppressor.of([], []).decide(newFinding)).toBeNull();
    expect(Suppressor.of([cluster('c', sql)], []).empty).toBe(false);
  });
});
