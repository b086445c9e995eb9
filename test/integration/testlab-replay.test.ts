import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { baselineOf, regressions, type Baseline } from '../../src/testlab/baseline.js';
import { compareRecords, saveTestLabRun } from '../../src/testlab/record.js';
import { runTestLab, type TestLabRun } from '../../src/testlab/runner.js';
import { openTestStore } from '../helpers/store.js';

const CORPUS = join(process.cwd(), 'fixtures/testlab');

/**
 * The whole corpus through the real pipeline (local GitHub API, Probot's installation auth, job table,
 * review worker, engine, shadow publication) with the replay provider: no network. A change that loses a
 * caught bug, an exact anchor or a point of any score fails here.
 */
/** `run` with the bugs of the case `pick` chooses changed by `change`. */
function withBugs(
  run: TestLabRun,
  pick: (c: TestLabRun['cases'][number], i: number) => boolean,
  change: Partial<TestLabRun['cases'][number]['bugs'][number]>,
): TestLabRun {
  return {
    ...run,
    cases: run.cases.map((c, i) =>
      pick(c, i) ? { ...c, bugs: c.bugs.map((b) => ({ ...b, ...change })) } : c,
    ),
  };
}

describe('Test Lab corpus in replay', () => {
  let run: TestLabRun;
  beforeAll(async () => {
    run = await runTestLab({
      corpus: CORPUS,
      concurrency: 4,
      env: {},
      provider: 'replay',
      log: pino({ level: 'silent' }),
    });
  }, 120_000);

  test('every case is reviewed, from what the local GitHub API serves', () => {
    expect(run.provider).toBe('replay');
    expect(run.cases.length).toBeGreaterThanOrEqual(40);
    // The real pull requests have no authored answers: replay skips them (live only), counted as skipped.
    const skipped = run.cases.filter((c) => c.status === 'skipped');
    expect(skipped.map((c) => c.name).every((n) => n.startsWith('rbench-'))).toBe(true);
    expect(run.scores.skippedCases).toBe(skipped.length);
    expect(
      run.cases
        .filter((c) => c.status !== 'analysed' && c.status !== 'skipped')
        .map((c) => `${c.name}: ${c.status} ${c.error}`),
    ).toEqual([]);
    expect(run.unknownRequests).toEqual([]);
    // The large cases are reviewed in several parts.
    const large = run.cases.filter((c) => c.name.includes('-large-'));
    expect(large.length).toBe(2);
    for (const c of large) expect(c.parts).toBeGreaterThan(1);
  });

  test('no score falls below the recorded baseline', () => {
    const baseline = JSON.parse(readFileSync(join(CORPUS, 'baseline.json'), 'utf8')) as Baseline;
    expect(regressions(run, baseline)).toEqual([]);
    expect(baselineOf(run).caught.length).toBeGreaterThanOrEqual(baseline.caught.length);
  });

  test('the regression check fails on a lost bug and on a lost anchor', () => {
    const baseline = baselineOf(run);
    const [first] = run.cases.filter((c) => c.bugs.some((b) => b.anchorExact));
    const worse = withBugs(run, (c) => c === first, { finding: null, matchedBy: null });
    const lost = regressions(worse, baseline);
    expect(lost.join('\n')).toMatch(new RegExp(`${first!.name}/.* is no longer caught`));
    const moved = withBugs(run, (c) => c === first, { anchorExact: false });
    expect(regressions(moved, baseline).join('\n')).toMatch(/no longer anchored on its lines/);
  });

  test('a run is saved as a Test Lab record and two records compare by caught bugs', async () => {
    const t = await openTestStore('sqlite');
    try {
      const a = await saveTestLabRun(t.store, run, { actor: 'test', commit: 'abc' });
      const missed = withBugs(run, (_c, i) => i === 0, { finding: null, matchedBy: null });
      const b = await saveTestLabRun(t.store, missed, { actor: 'test', commit: 'def' });
      expect(a).toMatchObject({ provider: 'replay', model: 'authored', commit: 'abc' });
      expect(a.promptVersion).toMatch(/^[0-9a-f]{12}$/);
      const list = await t.store.testLab.list();
      expect(list.map((r) => r.id)).toEqual(expect.arrayContaining([a.id, b.id]));
      expect(list[0]).not.toHaveProperty('cases');
      expect((await t.store.testLab.get(a.id))!.cases).toHaveLength(run.cases.length);
      const cmp = compareRecords((await t.store.testLab.get(a.id))!, (await t.store.testLab.get(b.id))!);
      const firstCaught = run.cases[0]!.bugs.filter((x) => x.finding !== null).map((x) => x.id);
      expect(cmp.onlyA.map((d) => d.bug)).toEqual(firstCaught);
      expect(cmp.onlyB).toEqual([]);
    } finally {
      await t.cleanup();
    }
  });
});
