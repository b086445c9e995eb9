import { AlikeIndex } from '../../src/memory/alike.js';
import { Suppressor, suppressionReason } from '../../src/memory/suppress.js';
import type { DismissedFinding, MatchableCluster } from '../../src/store/suppression.js';
import { APART, RECORDED, REWORDED } from '../helpers/alike-pairs.js';

/**
 * Which findings memory withholds (src/memory/suppress.ts): like a finding dismissed on the pull request,
 * or most like a cluster of the repository that suppresses (`suppress`, or two dismissals and no 👍
 * unless `keep`), the clusters' standing read once for the clusters the findings matched.
 */

const cluster = (
  id: string,
  text: { title: string; body: string },
  over: Partial<MatchableCluster> = {},
): MatchableCluster => ({
  id,
  title: text.title,
  body: text.body,
  action: 'none',
  feedback: { up: 0, dismissed: 0 },
  ...over,
});
const { a: sql, b: sqlReworded } = REWORDED[1]!; // SQL injection through the search term, reworded
const newFinding = { ...sqlReworded, fingerprint: 'fp_new' };

/** The decisions for `findings`, the standing read from `clusters` (and the ids it was asked for). */
async function decide(
  clusters: MatchableCluster[],
  dismissed: DismissedFinding[],
  findings: Array<{ title: string; body: string; fingerprint: string }>,
  standing: MatchableCluster[] = clusters,
) {
  const asked: string[][] = [];
  const decisions = await new Suppressor(new AlikeIndex(clusters), dismissed).decide(
    findings,
    async (ids) => {
      asked.push([...ids]);
      return new Map(standing.filter((c) => ids.includes(c.id)).map((c) => [c.id, c]));
    },
  );
  return { decisions, asked };
}
const one = async (clusters: MatchableCluster[], dismissed: DismissedFinding[] = [], f = newFinding) =>
  (await decide(clusters, dismissed, [f])).decisions[0]!;

describe('Suppressor', () => {
  test('a suppressing cluster withholds what is alike it, and nothing else', async () => {
    const clusters = [cluster('clu_1', sql, { action: 'suppress' })];
    const withheld = await one(clusters);
    expect(withheld).toMatchObject({ reason: 'cluster', cluster: { id: 'clu_1', action: 'suppress' } });
    expect(suppressionReason(withheld!)).toBe(
      `like memory cluster clu_1 ("${sql.title}"), whose findings reviewers dismissed`,
    );
    const other = { ...RECORDED.leadingWildcardLikeCannotUse, fingerprint: 'fp_other' };
    expect(await one(clusters, [], other)).toBeNull();
  });

  test.each([
    ['action none, two dismissals, no up', { feedback: { up: 0, dismissed: 2 } }, true],
    ['action none, one dismissal', { feedback: { up: 0, dismissed: 1 } }, false],
    ['action none, two dismissals and an up', { feedback: { up: 1, dismissed: 2 } }, false],
    ['action keep, three dismissals', { action: 'keep' as const, feedback: { up: 0, dismissed: 3 } }, false],
    ['action suppress, an up', { action: 'suppress' as const, feedback: { up: 1, dismissed: 0 } }, true],
  ])('%s: withheld %s', async (_label, over, withheld) => {
    expect((await one([cluster('clu_1', sql, over)])) !== null).toBe(withheld);
  });

  test('a finding belongs to its most alike cluster: one most like a keep cluster is posted', async () => {
    const keep = cluster('clu_keep', sqlReworded, { action: 'keep' });
    const suppress = cluster('clu_sup', sql, { action: 'suppress' });
    expect(await one([suppress, keep])).toBeNull();
    expect(await one([suppress])).not.toBeNull();
  });

  test('the standing is read once, for the clusters matched; a cluster gone since withholds nothing', async () => {
    const clusters = [
      cluster('clu_sql', sql, { action: 'suppress' }),
      cluster('clu_leak', REWORDED[0]!.a, { action: 'suppress' }),
      cluster('clu_other', RECORDED.offByOneInPagewindow),
    ];
    const findings = [
      newFinding,
      { ...REWORDED[0]!.b, fingerprint: 'fp_leak' },
      { ...sql, fingerprint: 'fp_sql' },
    ];
    const { decisions, asked } = await decide(clusters, [], findings);
    expect(asked).toEqual([['clu_sql', 'clu_leak']]);
    expect(decisions.map((d) => (d?.reason === 'cluster' ? d.cluster.id : null))).toEqual([
      'clu_sql',
      'clu_leak',
      'clu_sql',
    ]);
    const gone = await decide(clusters, [], findings, clusters.slice(1));
    expect(gone.decisions.map((d) => d !== null)).toEqual([false, true, false]);
    // Nothing matched: the standing is not read.
    expect(
      (await decide(clusters, [], [{ ...RECORDED.diagnosisCodePattern, fingerprint: 'x' }])).asked,
    ).toEqual([]);
  });

  test('a finding like one dismissed on the pull request (same fingerprint, or alike) is withheld', async () => {
    const dismissed = { fingerprint: 'fp_old', ...sql, path: 'src/main/java/ContactDao.java' };
    expect(await one([], [dismissed], { ...sql, fingerprint: 'fp_old' })).toMatchObject({
      reason: 'dismissed',
      score: 1,
    });
    const like = await one([], [dismissed]);
    expect(like).toMatchObject({ reason: 'dismissed', like: { fingerprint: 'fp_old' } });
    expect(suppressionReason(like!)).toBe(`like a finding dismissed on this pull request: "${sql.title}"`);
    // A dismissal wins over a keep cluster.
    expect(await one([cluster('clu_keep', sqlReworded, { action: 'keep' })], [dismissed])).toMatchObject({
      reason: 'dismissed',
    });
    for (const { a, b } of APART.slice(0, 10)) {
      expect(await one([], [{ fingerprint: 'x', ...a, path: null }], { ...b, fingerprint: 'y' })).toBeNull();
    }
  });

  test('empty: nothing to match against', () => {
    expect(new Suppressor(new AlikeIndex([]), []).empty).toBe(true);
    expect(new Suppressor(new AlikeIndex([cluster('c', sql)]), []).empty).toBe(false);
  });
});
