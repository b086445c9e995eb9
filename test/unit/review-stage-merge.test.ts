import { buildReviewInput, type ChangedFile } from '../../src/review/context.js';
import { mergeStage, type MergeInput } from '../../src/review/merge.stage.js';
import type { Finding } from '../../src/review/output.schema.js';
import type { PriorFinding } from '../../src/review/run-result.js';
import { joinValidation } from '../../src/review/validate.js';
import type { ValidationReport } from '../../src/validation/report.js';
import { reviewOutput } from '../helpers/review-output.js';
import { HEAD, changedFile, fakeProvider, modelEnv, runScope } from '../helpers/stages.js';

/** Stage `merge`: the parts combined (synthesis or deterministic merge), the coverage, the missing validations. */

const finding = (path: string, title: string, severity: Finding['severity'] = 'medium'): Finding => ({
  severity,
  category: 'bug',
  path,
  title,
  body: '',
  contextIds: [],
});

const FILES: ChangedFile[] = [changedFile('src/a.ts', 40), changedFile('src/b.ts', 40)];
/** Two parts: src/a.ts, then src/b.ts. */
const TWO = buildReviewInput(FILES, { chunkTokens: 600, fileTokens: 600, maxChunks: 12 });
const ONE = buildReviewInput(FILES);

const synthesis = (duplicates: number[][] = []) =>
  JSON.stringify({
    overview: 'Both parts read.',
    summary: 'One bug, seen twice.',
    verdict: 'needs-attention',
    confidenceScore: 3,
    bulletHighlights: ['the bug'],
    reasoning: 'Parts agree.',
    mergeVerdict: 'Fix the bug first.',
    duplicates,
  });

function input(over: Partial<MergeInput> = {}, answer = () => synthesis()) {
  const model = fakeProvider(answer);
  const env = modelEnv();
  const base: MergeInput = {
    run: runScope(),
    pr: { title: 'T', changedFiles: 2 },
    parsed: { outputs: [{ chunk: 0, output: reviewOutput() }], failed: new Map(), missing: [] },
    budgeted: { input: ONE },
    gathered: { changed: FILES, prior: [], competitors: [] },
    plan: { carried: undefined },
    validation: null,
    providers: { primary: model },
    config: { timeoutMs: 5_000 },
    env,
  };
  return { i: { ...base, ...over }, model, env };
}

describe('stage merge', () => {
  test('one part: its output as it is, no synthesis call, complete coverage', async () => {
    const output = reviewOutput({ findings: [finding('src/a.ts', 'x')] });
    const { i, model } = input({
      parsed: { outputs: [{ chunk: 0, output }], failed: new Map(), missing: [] },
    });
    const out = await mergeStage.run(i);
    expect(model.requests).toHaveLength(0);
    expect(out.output).toEqual(output);
    expect(out.synthesis).toBeNull();
    expect(out.coverage).toMatchObject({ headSha: HEAD, complete: true, analysed: 2 });
    expect(out.coverage.partsCombinedBy).toBeUndefined();
    expect(out.warnings).toEqual([]);
  });

  test('several parts: one synthesis call writes the conclusions and merges the duplicates it names', async () => {
    const { i, model, env } = input(
      {
        budgeted: { input: TWO },
        parsed: {
          outputs: [
            { chunk: 0, output: reviewOutput({ findings: [finding('src/a.ts', 'Race', 'medium')] }) },
            { chunk: 1, output: reviewOutput({ findings: [finding('src/b.ts', 'Same race', 'high')] }) },
          ],
          failed: new Map(),
          missing: [],
        },
      },
      () => synthesis([[1, 2]]),
    );
    const out = await mergeStage.run(i);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.messages[0]!.content).toContain('Same race');
    expect(env.spans.map((s) => [s.kind, s.name, s.attributes?.parts])).toEqual([['model', 'synthesis', 2]]);
    expect(out.output).toMatchObject({
      overview: 'Both parts read.',
      verdict: 'needs-attention',
      confidenceScore: 3,
    });
    // The group is kept as its most severe finding.
    expect(out.output.findings.map((f) => f.title)).toEqual(['Same race']);
    expect(out.synthesis).toEqual({ status: 'synthesised', merged: 1, error: null });
    expect(out.coverage.partsCombinedBy).toBe('synthesis');
    expect(mergeStage.counts(out, i)).toMatchObject({
      parts: 2,
      findings: 1,
      combinedBy: 'synthesis',
      mergedDuplicates: 1,
    });
  });

  test('a failed synthesis: the deterministic merge, and a missing validation says so', async () => {
    const { i } = input(
      {
        budgeted: { input: TWO },
        parsed: {
          outputs: [
            { chunk: 0, output: reviewOutput({ overview: 'first', findings: [finding('src/a.ts', 'a')] }) },
            { chunk: 1, output: reviewOutput({ overview: 'second', findings: [finding('src/b.ts', 'b')] }) },
          ],
          failed: new Map(),
          missing: [],
        },
      },
      () => 'no JSON here',
    );
    const out = await mergeStage.run(i);
    expect(out.output.overview).toBe('first');
    expect(out.output.findings.map((f) => f.title)).toEqual(['a', 'b']);
    expect(out.synthesis).toMatchObject({ status: 'failed', merged: 0 });
    expect(out.coverage.partsCombinedBy).toBe('deterministic merge');
    expect(out.missing).toEqual([
      expect.stringMatching(
        /^The 2 parts could not be combined by the model \(.+\): the overview is part 1's/,
      ),
    ]);
  });

  test('a disposition counts only from the part that holds its file; a comparison needs a competitor', async () => {
    const prior: PriorFinding[] = [
      {
        priorReviewKey: 'k',
        fingerprint: 'fp-b',
        severity: 'high',
        category: 'bug',
        path: 'src/b.ts',
        line: 1,
        title: 'old',
        headSha: 'a'.repeat(40),
      },
    ];
    const disposition = {
      priorReviewKey: 'k',
      fingerprint: 'fp-b',
      disposition: 'resolved' as const,
      explanation: 'fixed',
      evidence: [{ path: 'src/b.ts', headSha: HEAD, quote: 'const v0 = 0;' }],
    };
    const available = { ...reviewOutput().competitorComparison, available: true };
    const { i } = input({
      budgeted: { input: TWO },
      gathered: { changed: FILES, prior, competitors: [] },
      parsed: {
        outputs: [
          // Part 1 holds src/a.ts only: its claim about src/b.ts is dropped; part 2's holds.
          {
            chunk: 0,
            output: reviewOutput({
              priorFindingDispositions: [disposition],
              competitorComparison: available,
            }),
          },
          { chunk: 1, output: reviewOutput({ priorFindingDispositions: [disposition] }) },
        ],
        failed: new Map(),
        missing: [],
      },
    });
    const out = await mergeStage.run(i);
    expect(out.output.priorFindingDispositions).toEqual([disposition]);
    expect(out.output.competitorComparison.available).toBe(false);
    expect(out.warnings).toEqual([
      'part 1: dropped the disposition of fp-b: that part does not hold src/b.ts or quotes another file',
      'replaced `competitorComparison`: no competitor review was supplied',
    ]);
  });

  test('no usable part: the fallback output; the missing validations in the order the body lists them', async () => {
    const report: ValidationReport = {
      status: 'not_run',
      executor: null,
      evidence: 'no sandbox',
      commands: [],
      notRun: ['npm test: no sandbox binding available'],
      notes: [],
      shadow: null,
      durationMs: 3,
    };
    const { i } = input({
      pr: { title: 'T', changedFiles: 3_001 },
      budgeted: { input: { ...ONE, missingValidations: ['1 changed file(s) not reviewed: x'] } },
      parsed: {
        outputs: [],
        failed: new Map([[0, 'boom']]),
        missing: ['Part 1 (2 file(s)) could not be analysed: boom'],
      },
      validation: joinValidation({ report, outcome: null }, false),
    });
    const out = await mergeStage.run(i);
    expect(out.output.overview).toMatch(/could not analyse this pull request/);
    expect(out.output.confidenceScore).toBe(1);
    expect(out.coverage.validation).toEqual({
      status: 'not_run',
      executor: null,
      ran: 0,
      passed: 0,
      failed: 0,
      notRun: 1,
    });
    expect(out.coverage.truncatedByGitHub).toBe(true);
    expect(out.missing).toEqual([
      'Semantic analysis failed: boom',
      '1 changed file(s) not reviewed: x',
      'npm test: no sandbox binding available',
      'GitHub lists at most 3000 files of a pull request: 2999 changed file(s) were not seen.',
      'Part 1 (2 file(s)) could not be analysed: boom',
    ]);
  });
});

describe('the validation joined to the analysis', () => {
  const command = {
    check: 'test',
    command: 'npm test',
    exitCode: 1,
    signal: null,
    timedOut: false,
    durationMs: 10,
    passed: false,
    outputTail: 'FAIL',
    outputBytes: 4,
    introduced: true,
    baseNote: null,
  };
  const report: ValidationReport = {
    status: 'failed',
    executor: 'bubblewrap',
    evidence: 'FAILED',
    commands: [command, { ...command, command: 'npm run lint', passed: true, exitCode: 0 }],
    notRun: [],
    notes: [],
    shadow: null,
    durationMs: 20,
  };

  test('its counts in the coverage; results that came after the model call are noted, the report unchanged', () => {
    const late = joinValidation({ report, outcome: null }, false);
    expect(late.coverage).toEqual({
      status: 'failed',
      executor: 'bubblewrap',
      ran: 2,
      passed: 1,
      failed: 1,
      notRun: 0,
    });
    expect(late.report.notes).toEqual([
      'the results arrived after the model call: they are reported here, but the model did not see them',
    ]);
    expect(report.notes).toEqual([]);
    expect(joinValidation({ report, outcome: null }, true).report.notes).toEqual([]);
    // Nothing ran: nothing to say about when it arrived.
    expect(
      joinValidation({ report: { ...report, commands: [] }, outcome: null }, false).report.notes,
    ).toEqual([]);
  });
});
