import { anchorStage, type AnchorInput } from '../../src/review/anchor.stage.js';
import type { Finding } from '../../src/review/output.schema.js';
import type { ValidationReport } from '../../src/validation/report.js';
import { changedFile } from '../helpers/stages.js';

/** Stage `anchor`: line anchors checked against the diff; a failing check the PR introduced joins the findings. */

const finding = (over: Partial<Finding>): Finding => ({
  severity: 'medium',
  category: 'bug',
  path: 'src/a.ts',
  title: 't',
  body: '',
  contextIds: [],
  ...over,
});

const CHANGED = [changedFile('src/a.ts', 3)];

function input(findings: Finding[], validation: AnchorInput['validation'] = null): AnchorInput {
  return { filtered: { output: { findings } }, validation, gathered: { changed: CHANGED } };
}

describe('stage anchor', () => {
  test('an anchor on new-side lines holds, with their text; one outside the diff is removed and the finding stays', async () => {
    const i = input([
      finding({ title: 'held', line: 2, endLine: 3, suggestion: 'const v1 = 2;\nconst v2 = 3;' }),
      finding({ title: 'outside', line: 40, suggestion: 'x' }),
      finding({ title: 'elsewhere', path: 'src/other.ts', line: 1 }),
      finding({ title: 'unanchored' }),
    ]);
    const out = await anchorStage.run(i);
    expect(out.findings.map((f) => [f.title, f.line, f.endLine, f.suggestion])).toEqual([
      ['held', 2, 3, 'const v1 = 2;\nconst v2 = 3;'],
      ['outside', null, null, null],
      ['elsewhere', null, null, null],
      ['unanchored', null, null, null],
    ]);
    // The output's findings carry no line text; the report's do (the record stores it).
    expect(out.findings[0]).not.toHaveProperty('lineText');
    expect(out.report.findings[0]!.lineText).toBe('const v1 = 1;\nconst v2 = 2;');
    expect(out.report.removed.map((r) => r.reason)).toEqual([
      expect.any(String),
      'src/other.ts is not a changed file of this pull request',
    ]);
    expect(anchorStage.counts(out, i)).toEqual({
      findings: 4,
      fromValidation: 0,
      anchorsKept: 1,
      anchorsRemoved: 2,
      suggestionsDropped: 1,
    });
  });

  test('a failing check the pull request introduced is a finding of its own; a passing one is not', async () => {
    const failed = {
      check: 'test',
      command: 'npm test',
      exitCode: 1,
      signal: null,
      timedOut: false,
      durationMs: 10,
      passed: false,
      outputTail: 'FAIL src/a.ts',
      outputBytes: 13,
      introduced: true,
      baseNote: null,
    };
    const report: ValidationReport = {
      status: 'failed',
      executor: 'bubblewrap',
      evidence: 'FAILED',
      commands: [failed, { ...failed, command: 'npm run lint', passed: true, exitCode: 0 }],
      notRun: [],
      notes: [],
      shadow: null,
      durationMs: 10,
    };
    const out = await anchorStage.run(input([finding({ title: 'model' })], { report }));
    expect(out.findings.map((f) => [f.title, f.severity, f.category])).toEqual([
      ['model', 'medium', 'bug'],
      ['`npm test` fails at this head', 'high', 'validation'],
    ]);
    expect(out.fromValidation.map((f) => f.validationCommand)).toEqual(['npm test']);
    expect(out.findings[1]).not.toHaveProperty('validationCommand');
  });
});
