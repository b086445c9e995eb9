import { goldenRunScores, scoreGolden } from '../../src/testlab/golden.js';
import type { GoldenFinding, TestLabCase } from '../../src/testlab/case.js';
import type { Judge, ScoredFinding } from '../../src/testlab/score.js';

const g = (id: string, over: Partial<GoldenFinding> = {}): GoldenFinding => ({
  id,
  path: 'src/auth.ts',
  lines: [40, 44],
  label: 'tp',
  severity: 'high',
  category: 'security',
  keywords: ['token', 'expiry', 'verifyjwt'],
  description: 'The token expiry is never checked by verifyJwt.',
  ...over,
});

const f = (over: Partial<ScoredFinding> = {}): ScoredFinding => ({
  severity: 'high',
  category: 'security',
  path: 'src/auth.ts',
  line: 42,
  endLine: 42,
  title: 'Token expiry not checked',
  body: 'verifyJwt accepts an expired token.',
  ...over,
});

const caseWith = (golden: GoldenFinding[]): TestLabCase =>
  ({
    name: 'rbench-x-1',
    dir: '/x',
    meta: { title: 't', body: '', language: 'typescript', base: 'main', head: 'pull/1', kind: 'fix' },
    bugs: [],
    golden,
    clean: false,
    files: [],
    answers: new Map(),
    authored: [],
    answerProblems: [],
  }) as TestLabCase;

describe('scoring a real pull request by ReviewBench rules', () => {
  test('same file, overlapping lines and the same issue in words: a match; any one missing: none', async () => {
    const c = caseWith([g('g01')]);
    const cases: Array<[Partial<ScoredFinding>, string | null]> = [
      [{}, 'g01'],
      [{ line: 47, endLine: 47 }, 'g01'], // 3 lines past the range still overlaps
      [{ line: 48, endLine: 50 }, null], // further away: no
      [{ path: 'src/other.ts' }, null], // another file: never
      [{ title: 'Missing null check', body: 'The handler dereferences user.' }, null], // another issue
      [{ line: null, endLine: null }, 'g01'], // no lines: the words alone
      [{ line: null, endLine: null, title: 'Tokens', body: 'Something about tokens.' }, null], // one keyword of three is not enough
    ];
    for (const [over, expected] of cases) {
      const score = await scoreGolden(c, [f(over)]);
      expect([over, score.matches[0]]).toEqual([over, expected]);
    }
  });

  test('recall counts a golden finding once; precision gives each golden finding to its first finding', async () => {
    const c = caseWith([
      g('g01'),
      g('g02', { lines: [41, 41] }),
      g('g03', { path: 'src/db.ts', keywords: ['sql'] }),
    ]);
    // Finding 0 matches g01 and g02 (it takes g01, the first); finding 1 also matches both (takes g02);
    // finding 2 matches both too but both are taken: unmatched. Finding 3 is about nothing golden.
    const findings = [f(), f(), f(), f({ path: 'src/db.ts', title: 'Unbounded query', body: 'No limit.' })];
    const score = await scoreGolden(c, findings);
    expect(score.matches).toEqual(['g01', 'g02', null, null]);
    expect(score.golden.map((x) => [x.id, x.findings])).toEqual([
      ['g01', [0, 1, 2]],
      ['g02', [0, 1, 2]],
      ['g03', []],
    ]);
    expect(score).toMatchObject({
      goldenTp: 3,
      goldenFp: 0,
      findings: 4,
      matched: 2,
      matchedTp: 2,
      unmatched: 2,
      coveredTp: 2,
      groundedPrecision: 1,
      groundedRecall: 0.667,
      precisionAllCounted: 0.5,
    });
  });

  test('a finding that matches an fp golden finding is a false finding: grounded precision falls', async () => {
    const c = caseWith([
      g('g01'),
      g('g02', { label: 'fp', path: 'src/cache.ts', keywords: ['race', 'cache'], lines: [10, 12] }),
    ]);
    const score = await scoreGolden(c, [
      f(),
      f({
        path: 'src/cache.ts',
        line: 11,
        endLine: 11,
        title: 'Cache race',
        body: 'Two writers race on the cache.',
      }),
    ]);
    expect(score.matches).toEqual(['g01', 'g02']);
    expect(score).toMatchObject({
      goldenTp: 1,
      goldenFp: 1,
      matched: 2,
      matchedTp: 1,
      matchedFp: 1,
      coveredTp: 1,
      groundedPrecision: 0.5,
      groundedRecall: 1,
    });
  });

  test('a judge decides, among the same-file findings, the golden findings the rules left unmatched', async () => {
    const c = caseWith([g('g01'), g('g02', { path: 'src/db.ts', keywords: ['sql', 'injection'] })]);
    const asked: string[] = [];
    const judge: Judge = async (_c, bug, offered) => {
      asked.push(`${bug.id}:${offered.map((x) => x.title).join('|')}`);
      return bug.id === 'g02' ? 0 : null;
    };
    const findings = [
      f(),
      f({ path: 'src/db.ts', line: 3, endLine: 3, title: 'Query built by concatenation', body: 'x' }),
    ];
    const score = await scoreGolden(c, findings, judge);
    expect(asked).toEqual(['g02:Query built by concatenation']);
    expect(score.golden.map((x) => x.matchedBy)).toEqual(['lines+words', 'judge']);
    expect(score.matches).toEqual(['g01', 'g02']);
  });

  test('run scores pool the counts (micro) and average the cases (macro)', async () => {
    const one = await scoreGolden(caseWith([g('g01'), g('g02', { path: 'b.ts' })]), [f()]);
    const two = await scoreGolden(caseWith([g('g01')]), [f(), f({ path: 'c.ts', title: 'x', body: 'y' })]);
    expect(goldenRunScores([one, two])).toMatchObject({
      cases: 2,
      goldenTp: 3,
      coveredTp: 2,
      matched: 2,
      matchedTp: 2,
      unmatched: 1,
      findings: 3,
      groundedRecall: 0.667,
      groundedPrecision: 1,
      precisionAllCounted: 0.667,
      macroGroundedRecall: 0.75,
      macroGroundedPrecision: 1,
    });
  });
});
