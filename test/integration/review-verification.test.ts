import nock from 'nock';
import {
  OPENAI,
  REPO,
  completion,
  github,
  isVerification,
  modelAnswer,
  review,
  reviewHarness,
  type Verifier,
} from '../helpers/review-harness.js';

/**
 * Verification of the findings end to end (NAMES.md "Verification of findings"): the review's candidates
 * are checked by a call whose structured output is named `verification`, through the real server and its
 * review worker, OpenAI nock'd with bodies shaped like the Chat Completions API; publication in shadow
 * mode, so the review body is read from the ledger.
 */

const finding = (title: string, severity: string, over: Record<string, unknown> = {}) => ({
  severity,
  category: 'correctness',
  path: 'src/cache.ts',
  title,
  body: `${title}: what is wrong and how to fix it.`,
  contextIds: [],
  line: 2,
  ...over,
});

/** Answers by candidate title: `[verdict, score, reason]`; candidates not named are confirmed at 90. */
function verdicts(by: Record<string, [string, number, string]>): Verifier {
  return (candidates) => ({
    results: candidates.map((c) => {
      const [verdict, score, reason] = by[c.title] ?? ['confirmed', 90, 'The code shows it.'];
      return { id: c.id, verdict, score, reason };
    }),
  });
}

describe('verification of the findings', () => {
  const h = reviewHarness();
  const { start, reviewRun, spansOf } = h;

  async function reviewBody(store: Awaited<ReturnType<typeof start>>) {
    return (await store.publications.listForPr(REPO, 7)).find((p) => p.kind === 'review')!.body!;
  }

  test('a refuted finding is withheld: stored as withheld with the reason, listed in a collapsed section, never posted', async () => {
    const store = await start();
    github();
    let part: any = null;
    modelAnswer(
      {
        findings: [
          finding('Eviction races with concurrent writes', 'high'),
          finding('Store is never cleared on logout', 'high', { line: 3 }),
        ],
      },
      (b) => (part = b),
    );
    h.verifyWith(
      verdicts({
        'Store is never cleared on logout': ['refuted', 10, 'logout() calls store.clear() on line 12.'],
      }),
    );
    const run = await reviewRun();
    expect(run.analysisStatus).toBe('analysed');
    // On the wire: the review part's structured output is `review`, the verification call's `verification`.
    expect(part.response_format.json_schema.name).toBe('review');
    expect(h.verifications).toHaveLength(1);
    const call = h.verifications[0];
    expect(call.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'verification', strict: true },
    });
    expect(Object.keys(call.response_format.json_schema.schema.properties)).toEqual(['results']);
    // The user message shows the code the candidates cite (the numbered hunk), then ends with the
    // fenced JSON block of the candidates.
    const message: string = call.messages.at(-1).content;
    expect(message).toContain('### src/cache.ts');
    expect(message).toContain('1 +export function evict(key) {');
    const block = /```json\n([\s\S]*)\n```$/.exec(message);
    expect(block).not.toBeNull();
    const { candidates } = JSON.parse(block![1]!);
    expect(candidates.map((c: any) => Object.keys(c))).toEqual([
      ['id', 'path', 'line', 'endLine', 'severity', 'title', 'body'],
      ['id', 'path', 'line', 'endLine', 'severity', 'title', 'body'],
    ]);
    expect(candidates[1]).toMatchObject({ path: 'src/cache.ts', line: 3, endLine: 3, severity: 'high' });

    // Stored: the confirmed one published, the refuted one withheld with the verifier's reason.
    expect((await store.findings.listForRun(run.id)).map((f) => f.title)).toEqual([
      'Eviction races with concurrent writes',
    ]);
    const all = await store.findings.listForRun(run.id, { include: 'all' });
    expect(all.map((f) => [f.title, f.status, f.statusReason])).toEqual([
      ['Eviction races with concurrent writes', 'published', null],
      [
        'Store is never cleared on logout',
        'withheld',
        'refuted (score 10): logout() calls store.clear() on line 12.',
      ],
    ]);
    const result = run.result as any;
    expect(result.output.findings.map((f: any) => f.title)).toEqual([
      'Eviction races with concurrent writes',
    ]);
    expect(result.verification).toMatchObject({
      status: 'verified',
      candidates: 2,
      published: 1,
      withheld: 1,
      unverified: 0,
      calls: 1,
      threshold: 70,
    });

    // The body lists it, collapsed, with the reason; only the published one is a line comment.
    const body = await reviewBody(store);
    expect(body).toContain(
      [
        '<details>',
        '<summary>Withheld after verification (1)</summary>',
        '',
        '- **HIGH** Store is never cleared on logout — `src/cache.ts:3`: refuted (score 10): logout() calls store.clear() on line 12.',
        '',
        '</details>',
      ].join('\n'),
    );
    expect(body).toContain('### Line comments (1)');
    const review = (await store.publications.listForPr(REPO, 7)).find((p) => p.kind === 'review')!;
    expect(JSON.stringify(review.request)).not.toContain('never cleared');

    // The stage and its call are traced, the call with its tokens and cost.
    const { spans } = await spansOf(run);
    expect(spans.find((s) => s.name === 'stage:verify')!.attributes).toMatchObject({
      candidates: 2,
      published: 1,
      withheld: 1,
    });
    const span = spans.find((s) => s.name === 'verification')!;
    expect(span).toMatchObject({ kind: 'model', inputTokens: 800, outputTokens: 60 });
    expect(span.costUsd).toBeGreaterThan(0);
  });

  test('a score under the threshold withholds; a blocker is withheld only when refuted; the threshold comes from .github/verdict.yml', async () => {
    const store = await start();
    await store.repositories.setStandaloneConfig(REPO, { review: { verification: { threshold: 80 } } });
    github();
    modelAnswer({
      findings: [
        finding('Unclear retry count', 'medium'),
        finding('Cache key ignores the tenant', 'high'),
        finding('Deletes every key on a miss', 'blocker', { line: 3 }),
        finding('Writes outside the lock', 'blocker', { line: 1 }),
      ],
    });
    h.verifyWith(
      verdicts({
        'Unclear retry count': ['uncertain', 40, 'The retry count is not shown.'],
        // 75 passes the default threshold of 70, not the repository's 80.
        'Cache key ignores the tenant': ['confirmed', 75, 'The key is the user id alone.'],
        'Deletes every key on a miss': ['uncertain', 20, 'Cannot tell from the hunk.'],
        'Writes outside the lock': ['refuted', 95, 'There is no lock in this code.'],
      }),
    );
    const run = await reviewRun();
    const result = run.result as any;
    expect(result.verification).toMatchObject({ threshold: 80, published: 1, withheld: 3 });
    // The blocker with a low score is published; the refuted blocker is not.
    expect(result.output.findings.map((f: any) => f.title)).toEqual(['Deletes every key on a miss']);
    const all = await store.findings.listForRun(run.id, { include: 'all' });
    expect(all.filter((f) => f.status === 'withheld').map((f) => f.title)).toEqual([
      'Unclear retry count',
      'Cache key ignores the tenant',
      'Writes outside the lock',
    ]);
    const body = await reviewBody(store);
    expect(body).toContain('<summary>Withheld after verification (3)</summary>');
    expect(body).toContain('uncertain (score 40): The retry count is not shown.');
    expect(body).toContain('refuted (score 95): There is no lock in this code.');
  });

  test('a failed verification call publishes its candidates unverified, and the body says so', async () => {
    const store = await start();
    github();
    modelAnswer();
    h.verifyWith(() => ({ status: 500, body: { error: { message: 'upstream overloaded' } } }));
    const run = await reviewRun();
    expect(run.analysisStatus).toBe('analysed');
    expect((await store.findings.listForRun(run.id)).map((f) => f.title)).toEqual([
      'Eviction races with concurrent writes',
    ]);
    const result = run.result as any;
    expect(result.verification).toMatchObject({
      status: 'failed',
      published: 0,
      withheld: 0,
      unverified: 1,
      failedCalls: 1,
    });
    expect(result.verification.errors[0]).toMatch(
      /^the verification call failed: openai chat completion failed with status 500/,
    );
    const body = await reviewBody(store);
    expect(body).toMatch(
      /_1 finding was posted unverified: the verification call failed: openai chat completion failed with status 500/,
    );
    expect(body).not.toContain('Withheld after verification');
    const { spans } = await spansOf(run);
    expect(spans.find((s) => s.name === 'verification')).toMatchObject({ kind: 'model', status: 'error' });
  });

  test('an unusable verification answer publishes unverified too', async () => {
    const store = await start();
    github();
    modelAnswer();
    h.verifyWith(() => 'I think these are fine.');
    const run = await reviewRun();
    expect(await store.findings.listForRun(run.id)).toHaveLength(1);
    expect((run.result as any).verification).toMatchObject({ status: 'failed', unverified: 1 });
    expect(await reviewBody(store)).toContain(
      '_1 finding was posted unverified: the verification answer could not be used: The response contains no JSON object._',
    );
  });

  test('VERDICT_VERIFICATION=0 and review.verification: false turn the stage off', async () => {
    let store = await start({ VERDICT_VERIFICATION: '0' });
    github();
    modelAnswer();
    let run = await reviewRun();
    expect(h.verifications).toHaveLength(0);
    expect((run.result as any).verification).toMatchObject({
      status: 'off',
      reason: 'VERDICT_VERIFICATION=0',
    });
    expect(await store.findings.listForRun(run.id)).toHaveLength(1);
    let stage = (await spansOf(run)).spans.find((s) => s.name === 'stage:verify')!;
    expect(stage.attributes).toMatchObject({ status: 'off', calls: 0 });
    await h.app.stop();

    store = await start();
    await store.repositories.setStandaloneConfig(REPO, { review: { verification: false } });
    github();
    modelAnswer();
    run = await reviewRun();
    expect(h.verifications).toHaveLength(0);
    expect((run.result as any).verification).toMatchObject({
      status: 'off',
      reason: 'review.verification is false',
    });
    stage = (await spansOf(run)).spans.find((s) => s.name === 'stage:verify')!;
    expect(stage.attributes).toMatchObject({ status: 'off' });
  });

  test('VERDICT_VERIFIER_MODEL: the verification calls go to another model of the same provider', async () => {
    await start({ VERDICT_VERIFIER_MODEL: 'gpt-4o' });
    github();
    modelAnswer();
    const run = await reviewRun();
    expect(h.verifications.map((b) => b.model)).toEqual(['gpt-4o']);
    expect((run.result as any).verification).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o',
      published: 1,
    });
    const span = (await spansOf(run)).spans.find((s) => s.name === 'verification')!;
    expect(span.model).toBe('gpt-4o');
  });

  test('a verification answer that leaves a candidate out publishes that one unverified', async () => {
    const store = await start();
    github();
    modelAnswer({ findings: [finding('A', 'medium'), finding('B', 'medium', { line: 3 })] });
    h.verifyWith((candidates) => ({
      results: [{ id: candidates[0]!.id, verdict: 'confirmed', score: 88, reason: 'Shown.' }],
    }));
    const run = await reviewRun();
    expect((await store.findings.listForRun(run.id)).map((f) => f.title)).toEqual(['A', 'B']);
    expect((run.result as any).verification).toMatchObject({
      status: 'verified',
      published: 1,
      unverified: 1,
    });
    expect((run.result as any).verification.results[1]).toMatchObject({
      title: 'B',
      outcome: 'unverified',
      reason: 'the verification answer left this candidate out',
    });
  });

  test('the verification call is the only other call: nothing is verified when there is no candidate', async () => {
    await start();
    github();
    const seen: any[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (b) => !isVerification(b) && (seen.push(b), true))
      .reply(200, completion(JSON.stringify(review({ findings: [] }))));
    const run = await reviewRun();
    expect(seen).toHaveLength(1);
    expect(h.verifications).toHaveLength(0);
    expect((run.result as any).verification).toMatchObject({ status: 'none', candidates: 0, calls: 0 });
  });
});
