import { buildReviewInput, type ReviewChunk } from '../../src/review/context.js';
import { callStage, type CallInput } from '../../src/review/call.stage.js';
import type { PassResult } from '../../src/review/pass.js';
import type { Finding } from '../../src/review/output.schema.js';
import type { PromptContext } from '../../src/review/prompt.js';
import { agreeAcrossSamples } from '../../src/review/samples.js';
import { reviewOutput } from '../helpers/review-output.js';
import { HEAD, changedFile, fakeProvider, modelEnv } from '../helpers/stages.js';

/** Agreement across samples (`review.samples`, src/review/samples.ts) and the call stage's passes. */

const A = changedFile('src/a.ts', 30);
const B = changedFile('src/b.ts', 30);

const finding = (title: string, body: string, over: Partial<Finding> = {}): Finding => ({
  severity: 'high',
  category: 'bug',
  path: 'src/a.ts',
  title,
  body,
  contextIds: [],
  ...over,
});

const RACE = finding('Eviction races with concurrent writes', 'evict() runs between get and set.', {
  line: 10,
});
const RACE_AGAIN = finding(
  'Race between evict and concurrent set',
  'evict can run between get and set, losing the write.',
  { line: 12 },
);
const AWAIT = finding('Missing await on save', 'save() returns a promise that is never awaited.', {
  line: 11,
});

/** A pass with one part's answer, or a failed part. */
function pass(findings: Finding[] | Error, chunk = 0): PassResult {
  if (findings instanceof Error) {
    return { outputs: [], failed: new Map([[chunk, findings.message]]), retryable: true, splits: 0 };
  }
  return {
    outputs: [
      {
        chunk,
        output: reviewOutput({ overview: `pass of ${findings.length}`, findings }),
        warnings: [],
        unreadable: 0,
      },
    ],
    failed: new Map(),
    retryable: false,
    splits: 0,
  };
}

describe('agreement across samples', () => {
  test('kept when it recurs in at least half of the passes (rounded up), as the earliest pass wrote it', () => {
    const { pass: agreed, report } = agreeAcrossSamples(
      [pass([RACE, AWAIT]), pass([RACE_AGAIN]), pass([])],
      [A, B],
    );
    expect(agreed.outputs).toHaveLength(1);
    expect(agreed.outputs[0]!.output.findings).toEqual([RACE]);
    // The rest of the part's output is the first pass's.
    expect(agreed.outputs[0]!.output.overview).toBe('pass of 2');
    expect(report).toEqual({
      count: 3,
      required: 2,
      candidates: 2,
      kept: 1,
      dropped: 1,
      agreement: [{ path: 'src/a.ts', title: RACE.title, samples: 2 }],
    });
  });

  test('matched by path, lines within 3 after anchoring, and alike text', () => {
    const agree = (other: Finding) =>
      agreeAcrossSamples([pass([RACE]), pass([other]), pass([])], [A, B]).report.kept;
    expect(agree(RACE_AGAIN)).toBe(1); // 2 lines apart, alike
    expect(agree({ ...RACE_AGAIN, line: 13 })).toBe(1); // 3 apart
    expect(agree({ ...RACE_AGAIN, line: 14 })).toBe(0); // 4 apart
    expect(agree({ ...RACE_AGAIN, line: 14, endLine: 16 })).toBe(0);
    expect(agree({ ...RACE_AGAIN, line: 5, endLine: 7 })).toBe(1); // a range ending 3 before
    expect(agree({ ...RACE_AGAIN, path: 'src/b.ts' })).toBe(0); // another file
    expect(agree({ ...AWAIT, line: 10 })).toBe(0); // the same line, another issue
    // No line, or a line the diff does not hold (anchors are checked first): the text decides.
    expect(agree({ ...RACE_AGAIN, line: null })).toBe(1);
    expect(agree({ ...RACE_AGAIN, line: 500 })).toBe(1);
  });

  test('a pass contributes one finding to a group; two alike findings of one pass do not agree with each other', () => {
    const { report } = agreeAcrossSamples([pass([RACE, RACE_AGAIN]), pass([]), pass([])], [A]);
    expect(report).toMatchObject({ candidates: 2, kept: 0 });
  });

  test('a part one pass could not review needs half of the passes that did', () => {
    const { pass: agreed, report } = agreeAcrossSamples(
      [pass(new Error('timeout')), pass([RACE]), pass([])],
      [A],
    );
    // Two passes answered: one of them is enough.
    expect(report.kept).toBe(1);
    expect(agreed.failed.size).toBe(0);
    expect(agreed.outputs[0]!.output.overview).toBe('pass of 1');
    const none = agreeAcrossSamples([pass(new Error('timeout')), pass(new Error('429'))], [A]);
    expect(none.pass.outputs).toEqual([]);
    expect(none.pass.failed).toEqual(new Map([[0, 'timeout']]));
    expect(none.pass.retryable).toBe(true);
  });

  test('each part keeps its own findings, in part order', () => {
    const b = finding('Division by zero', 'n may be 0.', { path: 'src/b.ts', line: 3 });
    const passes = [0, 1].map(() => {
      const p = pass([RACE]);
      p.outputs.push(pass([b], 1).outputs[0]!);
      return p;
    });
    const { pass: agreed } = agreeAcrossSamples(passes, [A, B]);
    expect(agreed.outputs.map((o) => [o.chunk, o.output.findings.map((f) => f.title)])).toEqual([
      [0, [RACE.title]],
      [1, ['Division by zero']],
    ]);
  });
});

describe('stage call with samples', () => {
  const CONTEXT: PromptContext = {
    repo: 'acme/web',
    number: 7,
    title: 'T',
    body: '',
    author: null,
    baseRef: 'main',
    headRef: 'f',
    headSha: HEAD,
    labels: [],
    customInstructions: '',
    memory: [],
    prior: [],
    incremental: null,
    fullReviewNote: null,
    allPaths: ['src/a.ts'],
    competitors: [],
  };
  const chunks: ReviewChunk[] = buildReviewInput([A]).chunks;

  test('N passes of every part through one pool; the findings most of them raised', async () => {
    const answers = [[RACE, AWAIT], [RACE_AGAIN], [RACE]];
    const model = fakeProvider((_req, n) => JSON.stringify(reviewOutput({ findings: answers[n - 1]! })));
    const env = modelEnv();
    const input: CallInput = {
      providers: { primary: model, shadow: null },
      prompt: { system: 'You are Verdict.' },
      budgeted: { context: CONTEXT, input: { chunks } },
      config: { timeoutMs: 5_000, shadowTimeoutMs: 2_000, concurrency: 1 },
      env,
      samples: 3,
      gathered: { changed: [A] },
    };
    const called = await callStage.run(input);
    expect(model.requests).toHaveLength(3);
    // The same request each time: independent passes of the same prompt.
    expect(new Set(model.requests.map((r) => r.messages[0]!.content)).size).toBe(1);
    expect(called.primary.outputs.map((o) => o.output.findings.map((f) => f.title))).toEqual([[RACE.title]]);
    expect(called.samples).toMatchObject({ count: 3, required: 2, kept: 1, dropped: 1 });
    expect(called.samples!.agreement).toEqual([{ path: 'src/a.ts', title: RACE.title, samples: 3 }]);
    expect(env.spans.map((s) => s.attributes?.sample)).toEqual([1, 2, 3]);
    expect(callStage.counts(called, input)).toMatchObject({ samples: 3, samplesKept: 1, samplesDropped: 1 });
  });

  test('one sample (the default): one pass, no agreement, no sample attribute', async () => {
    const model = fakeProvider(() => JSON.stringify(reviewOutput({ findings: [AWAIT] })));
    const env = modelEnv();
    const called = await callStage.run({
      providers: { primary: model, shadow: null },
      prompt: { system: 'You are Verdict.' },
      budgeted: { context: CONTEXT, input: { chunks } },
      config: { timeoutMs: 5_000, shadowTimeoutMs: 2_000, concurrency: 2 },
      env,
    });
    expect(model.requests).toHaveLength(1);
    expect(called.samples).toBeUndefined();
    expect(called.primary.outputs[0]!.output.findings).toHaveLength(1);
    expect(env.spans[0]!.attributes).not.toHaveProperty('sample');
  });
});
