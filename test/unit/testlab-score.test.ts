import type { TestLabCase } from '../../src/testlab/case.js';
import {
  median,
  overallScores,
  reviewPromptTokens,
  scoreCase,
  type CaseResult,
  type ScoredFinding,
} from '../../src/testlab/score.js';
import { verificationLine } from '../../src/testlab/record.js';

const bugCase = (bugs: TestLabCase['bugs']): TestLabCase => ({
  name: 'x',
  dir: '/x',
  meta: { title: 't', body: '', language: 'go', base: 'main', head: 'feature', kind: 'fix' },
  bugs,
  clean: bugs.length === 0,
  files: [],
  answers: new Map(),
  authored: [],
  answerProblems: [],
});
const bug = {
  id: 'sql',
  path: 'src/db.ts',
  lines: [40, 42] as [number, number],
  category: 'injection' as const,
  severity: 'high' as const,
  keywords: ['sql', 'injection', 'parameter'],
  description: 'interpolated',
};
const finding = (over: Partial<ScoredFinding>): ScoredFinding => ({
  severity: 'high',
  category: 'security',
  path: 'src/db.ts',
  line: null,
  endLine: null,
  title: 'A problem',
  body: 'Something is wrong.',
  ...over,
});

describe('Test Lab scoring rules', () => {
  test('an anchored finding on the bug path that agrees with it matches within ±3 lines, not beyond', async () => {
    const c = bugCase([bug]);
    const about = { title: 'SQL injection' };
    expect((await scoreCase(c, [finding({ ...about, line: 45, endLine: 45 })])).bugs[0]!.matchedBy).toBe(
      'anchor',
    );
    expect((await scoreCase(c, [finding({ ...about, line: 37 })])).bugs[0]!.matchedBy).toBe('anchor');
    expect((await scoreCase(c, [finding({ ...about, line: 46 })])).bugs[0]!.finding).toBeNull();
    expect(
      (await scoreCase(c, [finding({ ...about, line: 41, path: 'src/other.ts' })])).bugs[0]!.finding,
    ).toBeNull();
  });

  test('within the lines, a finding must share a keyword or the category with the bug to catch it', async () => {
    const c = bugCase([bug]);
    // Inside the planted lines, but no word of the bug and another category: a nit, not a catch.
    const nit = await scoreCase(c, [finding({ line: 41, category: 'style', title: 'Rename the variable' })]);
    expect(nit.bugs[0]!.finding).toBeNull();
    expect(nit.falseFindings).toBe(1);
    // One common word ("parameter") is not enough; two of the bug's keywords are, whatever the category.
    const word = finding({ line: 41, category: 'style', title: 'Pass the value as a parameter' });
    expect((await scoreCase(c, [word])).bugs[0]!.finding).toBeNull();
    const words = finding({ line: 41, category: 'style', title: 'Bind the SQL parameter' });
    expect((await scoreCase(c, [words])).bugs[0]!.matchedBy).toBe('anchor');
    // The bug's category is enough, however the model writes it.
    for (const category of ['injection', 'Injection', 'security/injection', 'sql_injection']) {
      const same = finding({ line: 41, category, title: 'Unsafe query' });
      expect((await scoreCase(c, [same])).bugs[0]!.matchedBy).toBe('anchor');
    }
    // A category that merely contains the letters is not the category.
    const other = finding({ line: 41, category: 'injections-list', title: 'Unsafe query' });
    expect((await scoreCase(c, [other])).bugs[0]!.finding).toBeNull();
  });

  test('an unanchored finding matches by two keywords; an anchored one far away never by keywords', async () => {
    const c = bugCase([bug]);
    const words = { title: 'SQL injection', body: 'Use a bound parameter.' };
    expect((await scoreCase(c, [finding(words)])).bugs[0]!.matchedBy).toBe('keywords');
    expect((await scoreCase(c, [finding({ title: 'SQL is slow' })])).bugs[0]!.finding).toBeNull();
    expect((await scoreCase(c, [finding({ ...words, line: 90 })])).bugs[0]!.finding).toBeNull();
  });

  test('severity agreement and exact anchors are judged on the catching finding', async () => {
    const c = bugCase([bug]);
    const about = { title: 'SQL injection' };
    const near = (await scoreCase(c, [finding({ ...about, line: 44, severity: 'medium' })])).bugs[0]!;
    expect(near).toMatchObject({ severityAgrees: false, anchorExact: false });
    const exact = (await scoreCase(c, [finding({ ...about, line: 41, endLine: 42 })])).bugs[0]!;
    expect(exact).toMatchObject({ severityAgrees: true, anchorExact: true });
  });

  test('of several findings near the lines, the one about the bug catches it; the others stay false', async () => {
    const c = bugCase([bug]);
    const score = await scoreCase(c, [
      finding({ line: 40, severity: 'medium', title: 'Naming' }),
      finding({ line: 41, title: 'SQL injection', body: 'bind a parameter' }),
    ]);
    expect(score.bugs[0]!.finding).toBe(1);
    expect(score.matches).toEqual([null, 'sql']);
    expect(score.falseFindings).toBe(1);
  });

  test('on a clean case, findings of medium or above are false findings; low ones are not', async () => {
    const score = await scoreCase(bugCase([]), [
      finding({ severity: 'medium' }),
      finding({ severity: 'blocker' }),
      finding({ severity: 'low' }),
    ]);
    expect(score.falseFindings).toBe(2);
  });

  test('a judge decides only what the rules left unmatched, and its matches are marked', async () => {
    const c = bugCase([bug, { ...bug, id: 'other', lines: [100, 101] }]);
    const asked: string[] = [];
    const score = await scoreCase(
      c,
      [finding({ line: 41, category: 'injection' }), finding({ line: 7, title: 'Something else' })],
      async (_c, b, open) => {
        asked.push(`${b.id}:${open.length}`);
        return 0;
      },
    );
    expect(asked).toEqual(['other:1']);
    expect(score.bugs.map((b) => b.matchedBy)).toEqual(['anchor', 'judge']);
  });

  test('overall scores: recall, precision, false findings per clean case', () => {
    const result = (over: Partial<CaseResult>): CaseResult => ({
      name: 'c',
      language: 'go',
      kind: 'fix',
      clean: false,
      status: 'analysed',
      error: null,
      findings: [],
      bugs: [],
      falseFindings: 0,
      tokens: { input: 10, output: 5 },
      costUsd: 0.5,
      wallMs: 100,
      promptTokens: 1000,
      messageTokens: 400,
      parts: 1,
      ...over,
    });
    const caughtBug = {
      id: 'a',
      path: 'p',
      lines: [1, 1] as [number, number],
      category: 'logic',
      severity: 'high',
    };
    const scores = overallScores([
      result({
        bugs: [
          { ...caughtBug, finding: 0, matchedBy: 'anchor', severityAgrees: true, anchorExact: true },
          { ...caughtBug, id: 'b', finding: null, matchedBy: null, severityAgrees: null, anchorExact: null },
        ],
        findings: [{ ...finding({}), caught: 'a' }],
      }),
      result({ clean: true, falseFindings: 3, findings: [], costUsd: null, promptTokens: 3000 }),
    ]);
    expect(scores).toMatchObject({
      cases: 2,
      bugs: 2,
      caught: 1,
      recall: 0.5,
      precision: 0.25,
      falseFindingsPerCleanCase: 3,
      severityAgreement: 1,
      anchorAccuracy: 1,
      costUsd: null,
      tokens: { input: 20, output: 10 },
      medianPromptTokens: 2000,
      medianMessageTokens: 400,
    });
  });

  test('recall and precision with and without verification: the withheld findings scored too', () => {
    const base = {
      name: 'c',
      language: 'go',
      kind: 'fix',
      status: 'analysed',
      error: null,
      tokens: { input: 0, output: 0 },
      costUsd: 0,
      wallMs: 0,
      promptTokens: 0,
      parts: 1,
    };
    const bug = {
      id: 'a',
      path: 'p',
      lines: [1, 1] as [number, number],
      category: 'logic',
      severity: 'high',
    };
    const scores = overallScores([
      // Verification withheld the finding that caught the bug (a wrong refutation) and a false one.
      {
        ...base,
        clean: false,
        findings: [],
        bugs: [{ ...bug, finding: null, matchedBy: null, severityAgrees: null, anchorExact: null }],
        falseFindings: 0,
        verification: { status: 'verified', candidates: 2, withheld: 2, unverified: 0, calls: 1 },
        withoutVerification: { caught: 1, truePositives: 1, falseFindings: 1 },
      },
      // A clean case: verification withheld its two false findings.
      {
        ...base,
        clean: true,
        findings: [],
        bugs: [],
        falseFindings: 0,
        verification: { status: 'verified', candidates: 2, withheld: 2, unverified: 0, calls: 1 },
        withoutVerification: { caught: 0, truePositives: 0, falseFindings: 2 },
      },
    ]);
    expect(scores).toMatchObject({ recall: 0, precision: null, falseFindingsPerCleanCase: 0 });
    expect(scores.withoutVerification).toEqual({
      caught: 1,
      recall: 1,
      precision: 0.25,
      falseFindingsPerCleanCase: 2,
    });
    expect(scores.verification).toEqual({ candidates: 4, withheld: 4, unverified: 0, calls: 2 });
    expect(verificationLine(scores)).toBe(
      'with verification: recall 0%, precision - · without: recall 100%, precision 25% · 4 candidates, 4 withheld, 0 unverified, 2 calls',
    );
  });

  test('the median review prompt of the cases, and what counts as review prompt tokens', () => {
    expect(median([])).toBeNull();
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 10])).toBe(4);
    const spans = [
      { name: 'model', attributes: { promptTokens: 1200, messageTokens: 400 } },
      { name: 'model', attributes: { promptTokens: 300, messageTokens: 100, attempt: 2 } },
      { name: 'synthesis', attributes: { promptTokens: 900 } },
      { name: 'verification', attributes: { promptTokens: 700 } },
      { name: 'stage:call', attributes: {} },
    ];
    expect(reviewPromptTokens(spans)).toBe(1500);
    expect(reviewPromptTokens(spans, 'messageTokens')).toBe(500);
  });
});
