import type { ChangedFile } from '../../src/review/context.js';
import type { Finding } from '../../src/review/output.schema.js';
import type { ModelRequest } from '../../src/review/providers/index.js';
import {
  batchCandidates,
  candidatesOf,
  citedCode,
  decide,
  parseVerification,
  verificationSettings,
  type Candidate,
} from '../../src/review/verification.js';
import { verifyStage, type VerifyInput } from '../../src/review/verify.stage.js';
import { reviewOutput } from '../helpers/review-output.js';
import { fakeProvider, modelEnv, runScope, type FakeAnswer } from '../helpers/stages.js';

/** Stage `verify` and its rules (NAMES.md "Verification of findings"), against a fake model provider. */

const finding = (path: string, title: string, over: Partial<Finding> = {}): Finding => ({
  severity: 'medium',
  category: 'bug',
  path,
  title,
  body: `${title}, explained.`,
  contextIds: [],
  ...over,
});

/** `src/cache.ts`: lines 10-12 of a 20-line function changed (the file is read at the head). */
const SOURCE = [
  'export class Cache {',
  '  private store = new Map<string, number>();',
  '',
  '  get(key: string) {',
  '    return this.store.get(key);',
  '  }',
  '',
  '  set(key: string, value: number) {',
  '    if (value < 0) throw new Error("negative");',
  '    this.store.set(key, value);',
  '    this.evict();',
  '    return value;',
  '  }',
  '',
  '  evict() {',
  '    if (this.store.size > 100) this.store.clear();',
  '  }',
  '}',
].join('\n');
const CACHE: ChangedFile = {
  filename: 'src/cache.ts',
  status: 'modified',
  additions: 1,
  deletions: 0,
  changes: 1,
  patch: '@@ -10,2 +10,3 @@\n     this.store.set(key, value);\n+    this.evict();\n     return value;',
};
const ADDED: ChangedFile = {
  filename: 'src/new.ts',
  status: 'added',
  additions: 2,
  deletions: 0,
  changes: 2,
  patch: '@@ -0,0 +1,2 @@\n+export const a = 1;\n+export const b = a / 0;',
};

/** The results a fake verifier gives, by candidate title; unnamed candidates are confirmed at 90. */
function byTitle(map: Record<string, [string, number]> = {}) {
  return (req: ModelRequest): FakeAnswer => {
    const candidates = candidatesOf(req.messages.at(-1)!.content) ?? [];
    return JSON.stringify({
      results: candidates.map((c) => {
        const [verdict, score] = map[c.title] ?? ['confirmed', 90];
        return { id: c.id, verdict, score, reason: `because of ${c.title}` };
      }),
    });
  };
}

function input(
  findings: Finding[][],
  answer: (req: ModelRequest, n: number) => FakeAnswer = byTitle(),
  over: Partial<VerifyInput> = {},
) {
  const model = fakeProvider(answer);
  const env = modelEnv();
  const reads: string[] = [];
  const base: VerifyInput = {
    run: runScope(),
    pr: { title: 'Evict after every write' },
    parsed: { outputs: findings.map((f, chunk) => ({ chunk, output: reviewOutput({ findings: f }) })) },
    gathered: {
      changed: [CACHE, ADDED],
      fileAtHead: async (path) => {
        reads.push(path);
        return path === 'src/cache.ts' ? SOURCE : null;
      },
    },
    providers: { primary: model },
    settings: { enabled: true, threshold: 70, reason: null },
    config: { timeoutMs: 5_000, concurrency: 2 },
    env,
  };
  return { i: { ...base, ...over }, model, env, reads };
}

describe('stage verify', () => {
  test('confirmed candidates stay in their parts; refuted and low-scored ones are withheld with the reason', async () => {
    const { i, model, env } = input(
      [
        [
          finding('src/cache.ts', 'Evicts on every write', { line: 11 }),
          finding('src/cache.ts', 'Style nit'),
        ],
        [finding('src/new.ts', 'Division by zero', { line: 2, severity: 'high' })],
      ],
      byTitle({ 'Style nit': ['uncertain', 30], 'Division by zero': ['refuted', 80] }),
    );
    const out = await verifyStage.run(i);
    expect(out.outputs.map((o) => o.output.findings.map((f) => f.title))).toEqual([
      ['Evicts on every write'],
      [],
    ]);
    expect(out.withheld.map((w) => [w.finding.title, w.chunk, w.verdict, w.score, w.reason])).toEqual([
      ['Style nit', 0, 'uncertain', 30, 'because of Style nit'],
      ['Division by zero', 1, 'refuted', 80, 'because of Division by zero'],
    ]);
    expect(out.report).toMatchObject({
      status: 'verified',
      candidates: 3,
      published: 1,
      withheld: 2,
      unverified: 0,
      calls: 1,
      failedCalls: 0,
    });
    // Each candidate's line in the report only where its anchor holds on the diff.
    expect(out.report.results.map((r) => [r.title, r.line, r.outcome])).toEqual([
      ['Evicts on every write', 11, 'published'],
      ['Style nit', null, 'withheld'],
      ['Division by zero', 2, 'withheld'],
    ]);
    // One call, named `verification`, with its schema; traced as a `verification` model span.
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]).toMatchObject({ schemaName: 'verification' });
    expect(Object.keys((model.requests[0]!.jsonSchema as any).properties)).toEqual(['results']);
    expect(env.spans.map((s) => [s.name, s.kind, s.inputTokens, s.costUsd])).toEqual([
      ['verification', 'model', 100, 0.001],
    ]);
    expect(verifyStage.counts(out, i)).toMatchObject({ status: 'verified', withheld: 2, calls: 1 });
  });

  test('the message shows the code the candidates cite and ends with the candidates block', async () => {
    const { i, model, reads } = input([[finding('src/cache.ts', 'Evicts on every write', { line: 11 })]]);
    await verifyStage.run(i);
    const message = model.requests[0]!.messages[0]!.content;
    // The numbered hunk and the enclosing method at the head (only its lines the diff does not show).
    expect(message).toContain('11 +    this.evict();');
    expect(message).toContain('__enclosing code at the head (context, not change)__');
    expect(message).toContain('8    set(key: string, value: number) {');
    expect(reads).toEqual(['src/cache.ts']);
    const block = /\n```json\n([\s\S]*)\n```$/.exec(message)!;
    expect(JSON.parse(block[1]!)).toEqual({
      candidates: [
        {
          id: 'c1',
          path: 'src/cache.ts',
          line: 11,
          endLine: 11,
          severity: 'medium',
          title: 'Evicts on every write',
          body: 'Evicts on every write, explained.',
        },
      ],
    });
  });

  test('a blocker is withheld only when refuted', async () => {
    const { i } = input(
      [
        [
          finding('src/new.ts', 'Low-scored blocker', { severity: 'blocker' }),
          finding('src/new.ts', 'Refuted blocker', { severity: 'blocker' }),
        ],
      ],
      byTitle({ 'Low-scored blocker': ['uncertain', 5], 'Refuted blocker': ['refuted', 99] }),
    );
    const out = await verifyStage.run(i);
    expect(out.outputs[0]!.output.findings.map((f) => f.title)).toEqual(['Low-scored blocker']);
    expect(out.withheld.map((w) => w.finding.title)).toEqual(['Refuted blocker']);
    expect(decide('blocker', { verdict: 'uncertain', score: 0 }, 70)).toBe('published');
    expect(decide('blocker', { verdict: 'refuted', score: 100 }, 70)).toBe('withheld');
    expect(decide('high', { verdict: 'confirmed', score: 69 }, 70)).toBe('withheld');
    expect(decide('low', { verdict: 'uncertain', score: 70 }, 70)).toBe('published');
  });

  test('a failed call, an unusable answer and a cut answer publish their candidates unverified', async () => {
    for (const answer of [
      new Error('HTTP 503'),
      'Looks right to me.',
      { text: '{"results": [', truncated: true },
    ] as FakeAnswer[]) {
      const { i, env } = input([[finding('src/new.ts', 'A'), finding('src/new.ts', 'B')]], () => answer);
      const out = await verifyStage.run(i);
      expect(out.outputs[0]!.output.findings.map((f) => f.title)).toEqual(['A', 'B']);
      expect(out.withheld).toEqual([]);
      expect(out.report).toMatchObject({ status: 'failed', unverified: 2, published: 0, failedCalls: 1 });
      expect(out.report.errors).toHaveLength(1);
      expect(out.report.results.every((r) => r.outcome === 'unverified')).toBe(true);
      expect(env.spans).toHaveLength(1);
    }
  });

  test('batches of eight, a file together; one failed batch of two makes the run partial', async () => {
    const many = [
      ...Array.from({ length: 9 }, (_, n) => finding('src/new.ts', `new ${n}`)),
      ...Array.from({ length: 3 }, (_, n) => finding('src/cache.ts', `cache ${n}`)),
    ];
    const { i, model } = input([many], (req, n) => (n === 1 ? new Error('boom') : byTitle()(req)));
    i.config.concurrency = 1;
    const out = await verifyStage.run(i);
    expect(model.requests.map((r) => (candidatesOf(r.messages[0]!.content) ?? []).length)).toEqual([8, 4]);
    // Sorted by path: the three of src/cache.ts first.
    expect(
      (candidatesOf(model.requests[0]!.messages[0]!.content) ?? []).slice(0, 3).map((c) => c.path),
    ).toEqual(['src/cache.ts', 'src/cache.ts', 'src/cache.ts']);
    expect(out.report).toMatchObject({
      status: 'partial',
      calls: 2,
      failedCalls: 1,
      unverified: 8,
      published: 4,
    });
    expect(out.outputs[0]!.output.findings).toHaveLength(12);
  });

  test('off, or nothing to verify: no call, the candidates as they are', async () => {
    const off = input([[finding('src/new.ts', 'A')]], byTitle(), {
      settings: { enabled: false, threshold: 70, reason: 'VERDICT_VERIFICATION=0' },
    });
    const out = await verifyStage.run(off.i);
    expect(off.model.requests).toHaveLength(0);
    expect(out.outputs).toBe(off.i.parsed.outputs);
    expect(out.report).toMatchObject({ status: 'off', reason: 'VERDICT_VERIFICATION=0', candidates: 1 });
    const none = input([[]]);
    expect((await verifyStage.run(none.i)).report.status).toBe('none');
    expect(none.model.requests).toHaveLength(0);
  });

  test('the verifier model answers when there is one', async () => {
    const { i, model } = input([[finding('src/new.ts', 'A')]]);
    const verifier = fakeProvider(byTitle(), { model: 'gpt-4o' });
    const out = await verifyStage.run({ ...i, providers: { primary: model, verifier } });
    expect(model.requests).toHaveLength(0);
    expect(verifier.requests).toHaveLength(1);
    expect(out.report).toMatchObject({ model: 'gpt-4o', published: 1 });
  });
});

describe('verification rules', () => {
  test('on by default for the HTTP providers, off for codex; either switch turns it off; the file sets the threshold', () => {
    const env = { enabled: null, threshold: 70 };
    expect(verificationSettings(env, undefined, 'openai')).toEqual({
      enabled: true,
      threshold: 70,
      reason: null,
    });
    expect(verificationSettings(env, undefined, 'anthropic').enabled).toBe(true);
    expect(verificationSettings(env, undefined, 'openrouter').enabled).toBe(true);
    expect(verificationSettings(env, undefined, 'codex')).toMatchObject({ enabled: false });
    expect(verificationSettings(env, true, 'codex').enabled).toBe(true);
    expect(verificationSettings({ enabled: true, threshold: 70 }, undefined, 'codex').enabled).toBe(true);
    expect(verificationSettings({ enabled: false, threshold: 70 }, true, 'openai')).toMatchObject({
      enabled: false,
      reason: 'VERDICT_VERIFICATION=0',
    });
    expect(verificationSettings(env, false, 'openai')).toMatchObject({ enabled: false });
    expect(verificationSettings(env, { enabled: false }, 'openai').enabled).toBe(false);
    expect(
      verificationSettings({ enabled: null, threshold: 60 }, { threshold: 85 }, 'openai').threshold,
    ).toBe(85);
    expect(verificationSettings({ enabled: null, threshold: 60 }, {}, 'openai').threshold).toBe(60);
  });

  test('an answer is read leniently per result; without a results list it is unusable', () => {
    const ids = new Set(['c1', 'c2', 'c3']);
    const parsed = parseVerification(
      'Here you go:\n```json\n{"results": [{"id": "c1", "verdict": "Refuted", "score": "12", "reason": "no"},' +
        '{"id": "c1", "verdict": "confirmed", "score": 99, "reason": "dup"},' +
        '{"id": "c9", "verdict": "confirmed", "score": 99, "reason": "unknown id"},' +
        '{"id": "c2", "verdict": "maybe", "score": 50, "reason": "bad verdict"},' +
        '{"id": "c3", "verdict": "confirmed", "score": 88.6}]}\n```',
      ids,
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect([...parsed.results.values()]).toEqual([
      { id: 'c1', verdict: 'refuted', score: 12, reason: 'no' },
      { id: 'c3', verdict: 'confirmed', score: 89, reason: '' },
    ]);
    expect(parsed.ignored).toBe(3);
    expect(parseVerification('{"verdicts": []}', ids)).toEqual({
      ok: false,
      error: 'the answer has no `results` list',
    });
    expect(parseVerification('no json', ids).ok).toBe(false);
  });

  test('batches keep a file together, sorted by path then line', () => {
    const c = (id: string, path: string, line?: number): Candidate => ({
      id,
      chunk: 0,
      output: 0,
      index: 0,
      finding: finding(path, id, { line }),
    });
    const batches = batchCandidates(
      [c('a', 'b.ts', 9), c('b', 'a.ts'), c('c', 'b.ts', 2), c('d', 'a.ts', 1)],
      3,
    );
    expect(batches.map((b) => b.map((x) => x.id))).toEqual([['b', 'd', 'c'], ['a']]);
  });

  test('the cited code: a line outside the hunks is shown from the head; an added file is not read', async () => {
    const reads: string[] = [];
    const read = async (path: string) => (reads.push(path), SOURCE);
    const outside = await citedCode(
      { path: 'src/cache.ts', patch: CACHE.patch!, status: 'modified' },
      [finding('src/cache.ts', 'x', { line: 16 })],
      read,
    );
    expect(outside).toContain('__lines 10-18 at the head (not in the diff)__');
    expect(outside).toContain('16      if (this.store.size > 100) this.store.clear();');
    // The hunk (lines 10-12) is within six lines of line 16: it is shown too.
    expect(outside).toContain('11 +    this.evict();');
    const added = await citedCode(
      { path: 'src/new.ts', patch: ADDED.patch!, status: 'added' },
      [finding('src/new.ts', 'y', { line: 2 })],
      read,
    );
    expect(added).toContain('2 +export const b = a / 0;');
    expect(reads).toEqual(['src/cache.ts']);
  });
});
