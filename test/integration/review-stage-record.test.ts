import pino from 'pino';
import { anchorStage } from '../../src/review/anchor.stage.js';
import { checkFindingAnchors } from '../../src/review/anchors.js';
import { buildReviewInput } from '../../src/review/context.js';
import type { Called } from '../../src/review/call.stage.js';
import { findingFingerprint } from '../../src/review/fingerprint.js';
import type { Finding } from '../../src/review/output.schema.js';
import type { MemoryItem, ReviewMemory } from '../../src/review/memory.js';
import type { PromptContext } from '../../src/review/prompt.js';
import {
  recordFailedAnalysis,
  recordRefusal,
  recordStage,
  type RecordInput,
} from '../../src/review/record.stage.js';
import { runResultSchema, type PriorFinding } from '../../src/review/run-result.js';
import type { VerificationReportRecord } from '../../src/review/run-result.js';
import type { Store } from '../../src/store/index.js';
import { fullCoverage, reviewOutput } from '../helpers/review-output.js';
import { HEAD, changedFile, runScope } from '../helpers/stages.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

/** Stage `record`: findings, coverage and result stored in one transaction, while the lease holds. */
const REPO = 'acme/web';

const finding = (path: string, title: string, over: Partial<Finding> = {}): Finding => ({
  severity: 'high',
  category: 'bug',
  path,
  title,
  body: 'b',
  contextIds: [],
  ...over,
});

const PRIOR: PriorFinding[] = ['fp-fixed', 'fp-open'].map((fingerprint) => ({
  priorReviewKey: 'earlier',
  fingerprint,
  severity: 'high',
  category: 'bug',
  path: 'src/a.ts',
  line: 1,
  title: `was ${fingerprint}`,
  headSha: 'a'.repeat(40),
}));

const item = (kind: 'context' | 'knowledge', id: string): MemoryItem => ({
  kind,
  id,
  scope: 's',
  title: 't',
  body: 'b',
  clipped: id === 'knowledge:src',
});
const issue = (number: number) => ({ number, state: 'open', title: 't', body: 'b', clipped: false });
/** What the gather stage selected: the budget stage then left out `mem-2` and issue #9 for the window. */
const MEMORY: ReviewMemory = {
  items: [item('context', 'mem-1'), item('knowledge', 'knowledge:src'), item('context', 'mem-2')],
  issues: [issue(8), issue(9)],
  leftOut: { contexts: 1, knowledge: 0, linkedIssues: 2 },
  skippedIssues: [{ number: 3, reason: 'pull request' }],
};
const CONTEXT = {
  instructions: [{ path: 'AGENTS.md', appliesTo: 'every file', text: 't' }],
  memory: MEMORY.items.slice(0, 2),
  linkedIssues: MEMORY.issues.slice(0, 1),
} as Pick<PromptContext, 'instructions' | 'memory' | 'linkedIssues'>;

const verificationOff: VerificationReportRecord = {
  status: 'off',
  reason: 'VERDICT_VERIFICATION=0',
  provider: 'openai',
  model: 'gpt-4o-mini',
  threshold: 70,
  candidates: 0,
  published: 0,
  withheld: 0,
  unverified: 0,
  calls: 0,
  failedCalls: 0,
  errors: [],
  results: [],
};

describe('stage record', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(() => t.cleanup());

  async function newRun(store: Store, head = HEAD) {
    const { run } = await store.runs.createOrGet({
      reviewKey: `${REPO}#7@${head}`,
      repo: REPO,
      prNumber: 7,
      headSha: head,
      trigger: 'opened',
      installationId: 77,
    });
    return runScope({ runId: run.id, reviewKey: run.reviewKey, headSha: head });
  }

  async function input(
    store: Store,
    findings: Finding[],
    over: Partial<RecordInput> = {},
  ): Promise<RecordInput> {
    const changed = [changedFile('src/a.ts')];
    const output = reviewOutput({
      verdict: 'needs-attention',
      confidenceScore: 4,
      findings,
      priorFindingDispositions: [],
    });
    const called: Called = {
      primary: {
        outputs: [{ chunk: 0, output, warnings: [], unreadable: 0 }],
        failed: new Map(),
        retryable: false,
        splits: 0,
      },
      shadow: { provider: 'openai', model: 'gpt-4o', status: 'analysed', output, errors: [] },
    };
    const accepted = [
      {
        priorReviewKey: 'earlier',
        fingerprint: 'fp-fixed',
        disposition: 'resolved' as const,
        explanation: 'gone',
        evidence: [],
      },
    ];
    const anchored = await anchorStage.run({ filtered: { output }, validation: null, gathered: { changed } });
    return {
      store,
      run: await newRun(store),
      assertLease: async () => undefined,
      evidence: null,
      log: pino({ level: 'silent' }),
      providers: { primary: { name: 'openai', model: 'gpt-4o-mini' } },
      notes: ['a filter needs labels: deferred'],
      pr: { baseRef: 'main' },
      policy: { strictness: 'low' },
      gathered: {
        changed,
        prior: PRIOR,
        instructions: { files: [], notes: ['tree too large'] },
        memory: MEMORY,
      },
      plan: {
        review: { kind: 'full', reason: 'first review of this pull request', sinceSha: null },
        notes: ['x.ts could not be read'],
      },
      budgeted: { context: CONTEXT as PromptContext, input: buildReviewInput(changed) },
      called,
      parsed: { unreadable: 0, warnings: ['removed trailing commas from the JSON'], removedContextIds: 2 },
      verified: { withheld: [], report: verificationOff },
      merged: {
        coverage: fullCoverage({ headSha: HEAD }),
        synthesis: null,
        warnings: ['replaced `competitorComparison`'],
      },
      filtered: {
        output: { ...output, priorFindingDispositions: accepted },
        dropped: [finding('src/a.ts', 'dropped', { severity: 'low' })],
        dispositions: { accepted, rejected: [], missingValidations: [], confidenceCap: null },
      },
      anchored,
      recalled: { suppressed: [], recall: { continued: [], suppressed: [] }, dismissed: new Set() },
      validation: null,
      ...over,
    };
  }

  test('findings fingerprinted and marked still open or outside the diff; the result stored with the run', async () => {
    const { store } = t;
    // An earlier run of the PR recorded "Known race".
    const earlier = await newRun(store, 'a'.repeat(40));
    const known = finding('src/a.ts', 'Known race');
    await store.runs.recordAnalysis(
      { ...earlier, runId: earlier.runId },
      { analysisStatus: 'analysed', verdict: null, confidence: null, result: {} },
      [{ ...known, line: null, fingerprint: findingFingerprint(known), outsideDiff: false }],
      store.findings,
    );
    const i = await input(store, [
      finding('src/a.ts', 'Off by one', { line: 2 }),
      known,
      finding('docs/x.md', 'Outside'),
    ]);
    const out = await recordStage.run(i);
    expect(out.degraded).toBe(false);
    expect(out.findings.map((f) => [f.title, f.line, f.lineText, f.stillOpen, f.outsideDiff])).toEqual([
      ['Off by one', 2, 'const v1 = 1;', false, false],
      ['Known race', null, null, true, false],
      ['Outside', null, null, false, true],
    ]);
    const stored = (await store.runs.get(i.run.runId))!;
    expect(stored).toMatchObject({
      analysisStatus: 'analysed',
      verdict: 'needs-attention',
      confidence: 4,
      error: null,
    });
    expect(stored.result).toEqual(out.result);
    expect(runResultSchema.parse(stored.result)).toEqual(out.result);
    expect(stored.shadowReview).toMatchObject({ model: 'gpt-4o', status: 'analysed' });
    expect((await store.findings.listForRun(i.run.runId)).map((f) => f.title)).toEqual([
      'Off by one',
      'Known race',
      'Outside',
    ]);
    expect(out.result).toMatchObject({
      headSha: HEAD,
      provider: 'openai',
      model: 'gpt-4o-mini',
      admission: { notes: ['a filter needs labels: deferred'] },
      strictness: { level: 'low', dropped: 1 },
      chunks: { total: 1, failed: 0, errors: [], splits: 0 },
      instructions: { files: ['AGENTS.md'] },
      // What the model was given (after the window), what was left out in all, and the ids removed.
      memory: {
        contexts: ['mem-1'],
        knowledge: ['src'],
        linkedIssues: [8],
        leftOut: { contexts: 2, knowledge: 0, linkedIssues: 3 },
        clipped: 1,
        skippedIssues: [{ number: 3, reason: 'pull request' }],
        removedIds: 2,
      },
      review: { kind: 'full', files: 1 },
      baseRef: 'main',
      anchors: { kept: 1, removed: 0 },
    });
    expect(out.result.warnings).toEqual([
      'repository instructions: tree too large',
      'surrounding code: x.ts could not be read',
      'removed trailing commas from the JSON',
      'replaced `competitorComparison`',
    ]);
    // The disposed-of prior finding is resolved; the other stays open for the next review.
    expect(out.result.priorFindings).toMatchObject({
      supplied: 2,
      resolved: [{ fingerprint: 'fp-fixed', title: 'was fp-fixed', path: 'src/a.ts' }],
      carriedOpen: [{ fingerprint: 'fp-open' }],
    });
    expect(recordStage.counts(out, i)).toEqual({
      findings: 3,
      withheld: 0,
      suppressed: 0,
      stillOpen: 1,
      verdict: 'needs-attention',
      coverageComplete: true,
      degraded: false,
    });
  });

  test('findings memory withheld are stored as suppressed with why; a prior finding dismissed on the PR is not carried open', async () => {
    const { store } = t;
    const i = await input(store, [finding('src/a.ts', 'Off by one', { line: 2 })]);
    const like = finding('src/a.ts', 'Eviction races', { line: 2 });
    const [checked] = checkFindingAnchors([like], i.gathered.changed).findings;
    const suppression = {
      reason: 'dismissed' as const,
      like: { fingerprint: 'fp-open', title: 'Races', body: 'b', path: 'src/a.ts' },
      score: 1,
    };
    const report = {
      fingerprint: findingFingerprint(like),
      severity: like.severity,
      title: like.title,
      path: like.path,
      line: 2,
      reason: 'dismissed' as const,
      clusterId: null,
      like: 'Races',
    };
    const out = await recordStage.run({
      ...i,
      recalled: {
        suppressed: [
          {
            finding: checked!,
            suppression,
            reason: 'like a finding dismissed on this pull request: "Races"',
          },
        ],
        recall: { continued: [], suppressed: [report] },
        dismissed: new Set(['fp-open']),
      },
    });
    expect(out.findings.map((f) => [f.title, f.status ?? 'published', f.statusReason ?? null])).toEqual([
      ['Off by one', 'published', null],
      ['Eviction races', 'suppressed', 'like a finding dismissed on this pull request: "Races"'],
    ]);
    expect(out.result.output.findings.map((f) => f.title)).toEqual(['Off by one']);
    expect(out.result.priorFindings.carriedOpen).toEqual([]);
    expect(out.result.recall).toEqual({ continued: [], suppressed: [report] });
    expect(recordStage.counts(out, i)).toMatchObject({ findings: 1, suppressed: 1, withheld: 0 });
    const all = await store.findings.listForRun(i.run.runId, { include: 'all' });
    expect(all.map((f) => [f.title, f.status])).toEqual([
      ['Off by one', 'published'],
      ['Eviction races', 'suppressed'],
    ]);
    expect((await store.findings.listForRun(i.run.runId)).map((f) => f.title)).toEqual(['Off by one']);
  });

  test('findings withheld after verification are stored as withheld with the reason, and the report kept', async () => {
    const { store } = t;
    const i = await input(store, [finding('src/a.ts', 'Kept', { line: 2 })], {
      verified: {
        withheld: [
          {
            finding: finding('src/a.ts', 'Refuted one', { line: 3 }),
            chunk: 0,
            verdict: 'refuted',
            score: 15,
            reason: 'The value is checked on line 1.',
          },
        ],
        report: {
          ...verificationOff,
          status: 'verified',
          reason: null,
          candidates: 2,
          published: 1,
          withheld: 1,
        },
      },
    });
    const out = await recordStage.run(i);
    expect((await store.findings.listForRun(i.run.runId)).map((f) => f.title)).toEqual(['Kept']);
    const all = await store.findings.listForRun(i.run.runId, { include: 'all' });
    expect(all.map((f) => [f.title, f.status, f.statusReason, f.line])).toEqual([
      ['Kept', 'published', null, 2],
      ['Refuted one', 'withheld', 'refuted (score 15): The value is checked on line 1.', 3],
    ]);
    expect(out.result.verification).toMatchObject({ status: 'verified', withheld: 1 });
    expect(out.result.output.findings.map((f) => f.title)).toEqual(['Kept']);
    expect(recordStage.counts(out, i)).toMatchObject({ findings: 1, withheld: 1 });
    // A withheld finding is no prior finding of the next review: only the published are listed for the PR.
    expect((await store.findings.listForPr(REPO, 7)).map((f) => f.title)).toEqual(['Kept']);
  });

  test('a failed part degrades the analysis; without the lease nothing is recorded', async () => {
    const { store } = t;
    const degraded = await input(store, []);
    degraded.called.primary.failed.set(1, 'timeout');
    expect((await recordStage.run(degraded)).degraded).toBe(true);
    expect((await store.runs.get(degraded.run.runId))!.analysisStatus).toBe('degraded');

    const lost = await input(store, [finding('src/a.ts', 'x')], {
      assertLease: async () => {
        throw new Error('the job lease was lost');
      },
    });
    lost.run = await newRun(store, 'd'.repeat(40));
    await expect(recordStage.run(lost)).rejects.toThrow('the job lease was lost');
    expect((await store.runs.get(lost.run.runId))!.analysisStatus).toBe('pending');
    expect(await store.findings.listForRun(lost.run.runId)).toEqual([]);
  });

  test('a refusal and a failed analysis are records of their own', async () => {
    const { store } = t;
    const target = { store, run: await newRun(store), assertLease: async () => undefined };
    await recordRefusal(target, 'author_paused', 'marty is paused');
    expect((await store.runs.get(target.run.runId))!).toMatchObject({
      analysisStatus: 'refused',
      result: { headSha: HEAD, admission: { reason: 'author_paused', detail: 'marty is paused' } },
    });
    const called: Called = {
      primary: { outputs: [], failed: new Map([[0, 'boom']]), retryable: true, splits: 0 },
      shadow: undefined,
    };
    await recordFailedAnalysis(
      target,
      called,
      buildReviewInput([changedFile('src/a.ts')]),
      'semantic analysis failed: boom',
    );
    expect((await store.runs.get(target.run.runId))!).toMatchObject({
      analysisStatus: 'failed',
      error: 'semantic analysis failed: boom',
      shadowReview: null,
      result: {
        headSha: HEAD,
        chunks: { total: 1, failed: 1, errors: [{ chunk: 0, error: 'boom' }] },
        degraded: false,
      },
    });
  });
});
