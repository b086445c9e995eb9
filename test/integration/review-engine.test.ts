import nock from 'nock';
import { runResultSchema } from '../../src/review/run-result.js';
import { findingFingerprint } from '../../src/review/fingerprint.js';
import { confirmingAnswer } from '../../src/review/verification.js';
import {
  API,
  COMPARE_AHEAD,
  HEAD,
  HEAD2,
  OPENAI,
  READ,
  REPO,
  completion,
  modelAnswer,
  github,
  pull,
  review,
  reviewHarness,
} from '../helpers/review-harness.js';
import { eventually } from '../helpers/webhooks.js';

/**
 * The review engine through the real server and its in-process review worker: GitHub and the model
 * providers are nock'd with bodies shaped like their real APIs.
 */
describe('the review engine', () => {
  const h = reviewHarness();
  const { start, setPolicy, reviewRun, spansOf } = h;
  test('a model answer with prose around the JSON is parsed; findings, coverage, verdict and trace are stored', async () => {
    const store = await start();
    await store.memory.createContext({
      id: 'mem-1',
      repo: REPO,
      paths: ['src/**'],
      title: 'Cache rules',
      body: 'No TTL.',
      createdBy: 'test',
    });
    const gh = github();
    let sent: any = null;
    const model = nock(OPENAI)
      .post('/v1/chat/completions', (body) => {
        sent = body;
        return true;
      })
      .matchHeader('authorization', 'Bearer sk-test')
      .reply(200, completion(`Here is my review:\n\n${JSON.stringify(review())}\n\nHope this helps!`));

    const run = await reviewRun();
    expect(run).toMatchObject({
      status: 'completed',
      analysisStatus: 'analysed',
      verdict: 'needs-attention',
    });
    expect(run.confidence).toBe(4);
    expect(gh.pendingMocks()).toEqual([]);
    expect(model.pendingMocks()).toEqual([]);

    // The prompt carried the diff, the memory context with its id, and asked for the JSON schema.
    const prompt = sent.messages.map((m: { content: string }) => m.content).join('\n');
    expect(prompt).toContain('export function evict(key)');
    expect(prompt).toContain('### Context "mem-1" (acme/web; src/**)');
    expect(sent.model).toBe('gpt-4o-mini');

    const findings = await store.findings.listForRun(run.id);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      severity: 'high',
      path: 'src/cache.ts',
      outsideDiff: false,
      stillOpen: false,
      fingerprint: findingFingerprint({
        path: 'src/cache.ts',
        category: 'concurrency',
        title: 'Eviction races with concurrent writes',
      }),
    });
    const result = run.result as any;
    // The stored analysis is exactly what the result schema describes (zod, src/review/run-result.ts).
    expect(runResultSchema.parse(result)).toEqual(result);
    expect(runResultSchema.safeParse({ ...result, coverage: undefined }).success).toBe(false);
    // The unsupplied contextId was removed; the supplied one kept.
    expect(result.output.findings[0].contextIds).toEqual(['mem-1']);
    expect(result.warnings.join(' ')).toMatch(/unsupported contextId/);
    expect(result.coverage).toMatchObject({
      headSha: HEAD,
      complete: false,
      analysed: 1,
      skipped: 1,
      failed: 0,
    });
    expect(result.output.missingValidations.join('\n')).toMatch(/assets\/logo\.png/);

    const { trace, spans } = await spansOf(run);
    expect(trace.status).toBe('ok');
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual([
      'gather',
      'model',
      'post-process',
      'publish',
      'review',
      'stage:anchor',
      'stage:budget',
      'stage:call',
      'stage:filter',
      'stage:gather',
      'stage:merge',
      'stage:parse',
      'stage:plan',
      'stage:prompt',
      'stage:recall',
      'stage:record',
      'stage:verify',
      'start-check',
      'verification',
    ]);
    // One span per stage of the pipeline, in the order the engine runs them, each with its counts.
    expect(spans.filter((s) => s.name.startsWith('stage:')).map((s) => s.name)).toEqual(
      [
        ...['gather', 'plan', 'prompt', 'budget', 'call', 'parse', 'verify'],
        ...['merge', 'filter', 'anchor', 'recall', 'record'],
      ].map((name) => `stage:${name}`),
    );
    // The candidate was verified (the fake model confirms it with score 90) in one call of its own,
    // traced like the others with its tokens and cost.
    expect(byName['stage:verify']!.attributes).toMatchObject({
      status: 'verified',
      candidates: 1,
      published: 1,
      withheld: 0,
      calls: 1,
      threshold: 70,
    });
    expect(byName.verification).toMatchObject({
      kind: 'model',
      provider: 'openai',
      inputTokens: 800,
      outputTokens: 60,
    });
    expect(byName.verification!.costUsd).toBeGreaterThan(0);
    expect(byName.verification!.attributes).toMatchObject({ candidates: 1, files: 1 });
    expect(byName['stage:gather']).toMatchObject({
      kind: 'stage',
      status: 'ok',
      parentSpanId: byName.review!.spanId,
    });
    expect(byName['stage:gather']!.attributes).toMatchObject({ files: 2, memoryContexts: 1 });
    expect(byName['stage:call']!.attributes).toMatchObject({ parts: 1, answers: 1, failedParts: 0 });
    expect(byName['stage:anchor']!.attributes).toMatchObject({ findings: 1 });
    expect(byName['stage:record']!.attributes).toMatchObject({ findings: 1, verdict: 'needs-attention' });
    expect(byName.publish).toMatchObject({ kind: 'publish', status: 'ok' });
    // Shadow publication: the check in progress, the review and the completed check are in the ledger;
    // nothing was sent (nock would have refused it).
    const ledger = await store.publications.listForPr(REPO, 7);
    expect(ledger.map((p) => [p.kind, p.mode, p.status])).toEqual([
      ['check_run', 'shadow', 'shadowed'],
      ['review', 'shadow', 'shadowed'],
      ['check_run', 'shadow', 'shadowed'],
    ]);
    expect((await store.runs.get(run.id))!.publishStatus).toBe('shadowed');
    expect(byName.model).toMatchObject({
      kind: 'model',
      provider: 'openai',
      inputTokens: 1200,
      outputTokens: 300,
    });
    // gpt-4o-mini at the built-in rate: a known, non-zero cost.
    expect(byName.model!.costUsd).toBeGreaterThan(0);
    expect(byName.gather!.parentSpanId).toBe(byName.review!.spanId);
    // Prompt and response bodies are not in the trace.
    expect(JSON.stringify(spans)).not.toContain('evict(key)');

    // The PR detail of the operator API shows the run's analysis.
    const res = await fetch(`${h.app.baseUrl}/operator/api/pr?repo=${REPO}&number=7`, { headers: READ });
    const detail = (await res.json()) as any;
    expect(detail.data.findings).toHaveLength(1);
    expect(detail.data.runs[0]).toMatchObject({ analysisStatus: 'analysed', verdict: 'needs-attention' });
  });

  test('invalid JSON twice is a semantic-analysis failure after one repair attempt', async () => {
    const store = await start();
    github();
    const bodies: any[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (b) => (bodies.push(b), true))
      .times(2)
      .reply(200, completion('{"overview": "oops", '));
    const run = await reviewRun();
    expect(run.status).toBe('failed');
    expect(run.analysisStatus).toBe('failed');
    expect(run.error).toMatch(/no usable review JSON payload/);
    // The repair attempt fed the validation error back after the model's own answer.
    expect(bodies).toHaveLength(2);
    const repair = bodies[1].messages.at(-1).content as string;
    expect(repair).toMatch(/could not be used/);
    expect(repair).toMatch(/never closed/);
    expect(bodies[1].messages.at(-2)).toMatchObject({ role: 'assistant', content: '{"overview": "oops", ' });
    expect(await store.findings.listForRun(run.id)).toEqual([]);
  });

  test('a repaired answer is used', async () => {
    await start();
    github();
    nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(200, completion('I think the change is fine.'))
      .post('/v1/chat/completions')
      .reply(200, completion('```json\n' + JSON.stringify(review({ findings: [] })) + '\n```'));
    const run = await reviewRun();
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
  });

  test('a finding without a path triggers the repair attempt; what stays unreadable is counted and said', async () => {
    await start();
    github();
    const noPath = {
      severity: 'high',
      category: 'security',
      title: 'Token leaks',
      body: 'x',
      contextIds: [],
    };
    const good = { ...noPath, path: 'src/cache.ts', title: 'Eviction races with writes' };
    let repair = '';
    nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(200, completion(JSON.stringify(review({ findings: [noPath, good, 'src/cache.ts: a string'] }))))
      // The repair answer places one of the two, and still has one without a path: it is used (fewer lost).
      .post('/v1/chat/completions', (b: any) => ((repair = b.messages.at(-1).content), true))
      .reply(
        200,
        completion(JSON.stringify(review({ findings: [{ ...noPath, path: 'src/cache.ts' }, good, noPath] }))),
      );
    const run = await reviewRun();
    expect(run.analysisStatus).toBe('analysed');
    expect(repair).toContain('2 finding(s) of your previous response could not be used:');
    expect(repair).toContain('- finding 0 has no `path`');
    expect(repair).toContain('- finding 2 is the string "src/cache.ts: a string", not an object');
    const result = run.result as any;
    expect(result.output.findings.map((f: any) => f.title)).toEqual([
      'Token leaks',
      'Eviction races with writes',
    ]);
    expect(result.unreadableFindings).toBe(1);
    expect(result.output.missingValidations).toContain(
      '1 finding from the model could not be read (no path or no title)',
    );
    const spans = (await spansOf(run)).spans;
    expect(spans.find((s) => s.name === 'post-process')!.attributes).toMatchObject({ unreadableFindings: 1 });
  });

  test('strictness medium reads the finding confidence: below 0.8 a medium finding is dropped', async () => {
    await start();
    await setPolicy({ strictness: 'medium' });
    github();
    const medium = (title: string, confidence?: number) => ({
      severity: 'medium',
      category: 'reliability',
      path: 'src/cache.ts',
      title,
      body: 'b',
      contextIds: [],
      ...(confidence === undefined ? {} : { confidence }),
    });
    modelAnswer({
      findings: [
        medium('unsure', 0.5),
        medium('sure', 0.9),
        medium('no confidence'),
        { ...medium('major', 0.1), severity: 'major' },
      ],
    });
    const run = await reviewRun();
    const result = run.result as any;
    // `major` is read as high: never dropped by strictness.
    expect(result.output.findings.map((f: any) => f.title)).toEqual(['sure', 'no confidence', 'major']);
    expect(result.strictness).toEqual({ level: 'medium', dropped: 1 });
  });

  test('with VERDICT_PUBLISH_ON_RUNNER_FAILURE=1 an unusable answer gives a degraded fallback result', async () => {
    await start({ VERDICT_PUBLISH_ON_RUNNER_FAILURE: '1' });
    github();
    nock(OPENAI).post('/v1/chat/completions').times(2).reply(200, completion('no json here'));
    const run = await reviewRun();
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'degraded', confidence: 1 });
    const result = run.result as any;
    expect(result.degraded).toBe(true);
    expect(result.coverage.failed).toBe(1);
    expect(result.output.missingValidations[0]).toMatch(/Semantic analysis failed/);
  });

  test('a model timeout fails the attempt with the milliseconds, and the job is retried', async () => {
    const store = await start({ VERDICT_RUNNER_TIMEOUT_MS: '1000' });
    github();
    nock(OPENAI)
      .post('/v1/chat/completions')
      .delay(3000)
      .reply(200, completion(JSON.stringify(review())));
    const run = await h.requestRun();
    h.app.verdict.reviewWorker!.kick();
    const failed = await eventually(async () => {
      const r = await store.runs.get(run.id);
      return r?.error && r.status !== 'running' ? r : null;
    }, 20_000);
    expect(failed.error).toContain('chat completion timeout after 1000 ms');
    // Retryable: the run waits as queued for its next attempt, the job is back in the queue.
    expect(failed.status).toBe('queued');
    // Back in the queue, waiting out its retry back-off. The worker releases the job just after it marked
    // the run, so wait for that second write.
    const job = await eventually(async () => {
      const j = await store.jobs.get(failed.jobId!);
      return j?.status === 'running' ? null : j;
    }, 5_000);
    expect(job).toMatchObject({ status: 'waiting', attempts: 1 });
    expect(job!.lastError).toContain('chat completion timeout after 1000 ms');
  });

  test('a paid model behind the free-only guard fails closed before any completion call', async () => {
    await start({
      VERDICT_RUNNER_PROVIDER: 'openrouter',
      VERDICT_RUNNER_MODEL: 'openai/gpt-4o',
      OPENROUTER_API_KEY: 'or-test',
      VERDICT_MODEL_PRICES: JSON.stringify({ 'openrouter/openai/gpt-4o': { input: 0, output: 0 } }),
    });
    github();
    const router = nock('https://openrouter.ai')
      .get('/api/v1/models')
      .reply(200, {
        data: [
          {
            id: 'openai/gpt-4o',
            name: 'OpenAI: GPT-4o',
            pricing: { prompt: '0.0000025', completion: '0.00001', request: '0', image: '0' },
          },
        ],
      });
    const completions = nock('https://openrouter.ai').post('/api/v1/chat/completions').reply(200, {});
    const run = await reviewRun();
    expect(router.pendingMocks()).toEqual([]);
    expect(completions.pendingMocks()).toHaveLength(1);
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/not free/);
    expect(run.error).toContain('0.0000025');
  });

  test('an admission refusal is stored on the run with its reason and shown by the API', async () => {
    await start();
    await setPolicy({ pausedAuthors: ['alice'] });
    github();
    const model = nock(OPENAI).post('/v1/chat/completions').reply(200, completion('{}'));
    const run = await reviewRun();
    expect(run).toMatchObject({ status: 'skipped', reason: 'author_paused', analysisStatus: 'refused' });
    expect(model.pendingMocks()).toHaveLength(1);
    const res = await fetch(`${h.app.baseUrl}/operator/api/pr?repo=${REPO}&number=7`, { headers: READ });
    const detail = (await res.json()) as any;
    expect(detail.data.runs[0]).toMatchObject({ status: 'skipped', reason: 'author_paused' });
  });

  describe('a refusal the author can act on completes a neutral check run saying why and how (NAMES.md)', () => {
    /** The check run GitHub is asked to create, answered as GitHub does (201 with the check run). */
    function checkRun(seen: (body: any) => void) {
      return nock(API)
        .post(`/repos/${REPO}/check-runs`, (body) => (seen(body), true))
        .reply(201, { id: 555, node_id: 'CR_555', status: 'completed', conclusion: 'neutral' });
    }

    test('repository_disabled: how to enable the repository', async () => {
      const store = await start({ VERDICT_PUBLISH_MODE: 'live' });
      await store.repositories.configure(REPO, { enabled: false }, { actor: 'test', reason: null });
      github();
      let body: any = null;
      const checks = checkRun((b) => (body = b));
      const model = nock(OPENAI).post('/v1/chat/completions').reply(200, completion('{}'));
      const run = await reviewRun();
      expect(run).toMatchObject({ status: 'skipped', reason: 'repository_disabled' });
      expect(checks.pendingMocks()).toEqual([]);
      expect(model.pendingMocks()).toHaveLength(1);
      expect(body).toMatchObject({
        name: 'Verdict / review',
        head_sha: HEAD,
        status: 'completed',
        conclusion: 'neutral',
        output: { title: 'Not reviewed: Verdict is not enabled for this repository' },
      });
      expect(body.output.summary).toBe(
        'Verdict did not review this pull request: acme/web is disabled in its operator configuration. ' +
          'To change that, an operator enables acme/web in the Verdict dashboard (Settings, Repositories) ' +
          'or with `PATCH /operator/api/repos/acme%2Fweb` `{"enabled": true}`.',
      );
      const ledger = await store.publications.listForPr(REPO, 7);
      expect(ledger.map((p) => [p.kind, p.status, p.receipt])).toEqual([['check_run', 'published', '555']]);
    });

    test('auto_review_disabled: a base branch that is not reviewed, and what to change', async () => {
      await start({ VERDICT_PUBLISH_MODE: 'live' });
      github(pull({ base: { ref: 'release/1.0', repo: { default_branch: 'main' } } }));
      let body: any = null;
      checkRun((b) => (body = b));
      const run = await reviewRun();
      expect(run).toMatchObject({ status: 'skipped', reason: 'auto_review_disabled' });
      expect(body).toMatchObject({ conclusion: 'neutral', output: { title: 'Not reviewed automatically' } });
      expect(body.output.summary).toContain('base branch "release/1.0" is not listed in branches.include');
      expect(body.output.summary).toContain('add it to `branches.include` in `.github/verdict.yml`');
      expect(body.output.summary).toContain('comment `@verdict review` to review this pull request once');
    });

    test("other refusals publish nothing, and the repository's default branch is reviewed", async () => {
      const store = await start({ VERDICT_PUBLISH_MODE: 'live' });
      await setPolicy({ pausedAuthors: ['alice'] });
      github();
      const paused = await reviewRun();
      expect(paused.reason).toBe('author_paused');
      // No check run was attempted for this refusal (nock would have refused it, and the ledger kept it).
      expect(await store.publications.listForPr(REPO, 7)).toEqual([]);
      expect(paused.publishError).toBeNull();
      await setPolicy({ pausedAuthors: [] });
      github(pull({ base: { ref: 'master', repo: { default_branch: 'master' } } }));
      const model = modelAnswer();
      nock(API).post(`/repos/${REPO}/check-runs`).reply(201, { id: 556 }).persist();
      nock(API).patch(`/repos/${REPO}/check-runs/556`).reply(200, { id: 556 }).persist();
      nock(API)
        .get(`/repos/${REPO}/pulls/7`)
        .reply(200, pull({ base: { ref: 'master' } }));
      nock(API).post(`/repos/${REPO}/pulls/7/reviews`).reply(200, { id: 9, node_id: 'PRR_9' });
      const reviewed = await reviewRun(HEAD, 'opened', 'master-branch');
      expect(reviewed).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
      expect(model.pendingMocks()).toEqual([]);
    });
  });

  test('a second push: prior findings are supplied, repeats are still open, dispositions need evidence', async () => {
    const store = await start();
    // First review at HEAD raises two findings.
    github();
    const second = {
      severity: 'medium',
      category: 'reliability',
      path: 'src/cache.ts',
      title: 'Cache never expires',
      body: 'No TTL.',
      contextIds: [],
    };
    modelAnswer({ findings: [review().findings[0], second] });
    const first = await reviewRun();
    expect(first.analysisStatus).toBe('analysed');
    const [fpRace, fpTtl] = (await store.findings.listForRun(first.id)).map((f) => f.fingerprint);

    // Second review at HEAD2: the race is raised again; the TTL finding is claimed resolved, with evidence
    // that exists at HEAD2; a third claim quotes code that is not there.
    const evidenceFile = 'export function evict(key) {\n  if (expired(key)) store.delete(key);\n}\n';
    github(pull({ head: { sha: HEAD2, ref: 'feature/cache' } }))
      .get(`/repos/${REPO}/compare/${HEAD}...${HEAD2}`)
      .query(true)
      .reply(200, COMPARE_AHEAD)
      .get(`/repos/${REPO}/contents/src%2Fcache.ts`)
      .query({ ref: HEAD2 })
      .reply(200, evidenceFile);
    let prompt = '';
    modelAnswer(
      {
        confidenceScore: 5,
        priorFindingDispositions: [
          {
            priorReviewKey: first.reviewKey,
            fingerprint: fpTtl,
            disposition: 'resolved',
            explanation: 'evict now checks expiry',
            evidence: [
              { headSha: HEAD2, path: 'src/cache.ts', quote: 'if (expired(key)) store.delete(key);' },
            ],
          },
          {
            priorReviewKey: first.reviewKey,
            fingerprint: fpRace,
            disposition: 'false_positive',
            explanation: 'there is a lock',
            evidence: [{ headSha: HEAD2, path: 'src/cache.ts', quote: 'lock.acquire(key);' }],
          },
        ],
      },
      (b) => (prompt = b.messages.at(-1).content),
    );
    const run = await reviewRun(HEAD2, 'synchronize');
    expect(run.analysisStatus).toBe('analysed');
    // The prompt listed the prior findings with fingerprints and what changed since the last head.
    expect(prompt).toContain(fpRace);
    expect(prompt).toContain(fpTtl);
    expect(prompt).toContain(`## Incremental review since ${HEAD.slice(0, 12)}`);
    expect(prompt).toContain('2 +  if (expired(key)) store.delete(key);');
    const findings = await store.findings.listForRun(run.id);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ fingerprint: fpRace, stillOpen: true });
    const result = run.result as any;
    expect(result.priorFindings.resolved).toEqual([
      {
        fingerprint: fpTtl,
        disposition: 'resolved',
        explanation: 'evict now checks expiry',
        title: 'Cache never expires',
        path: 'src/cache.ts',
      },
    ]);
    expect(result.priorFindings.rejected[0].fingerprint).toBe(fpRace);
    expect(result.output.missingValidations.join('\n')).toMatch(
      new RegExp(`Prior finding ${fpRace} stays open`),
    );
    // A rejected closure claim caps the confidence at 3.
    expect(run.confidence).toBe(3);
  });

  test('a pull request of 3,000 files is reviewed in chunks and every file is accounted for', async () => {
    await start({ VERDICT_REVIEW_CHUNK_TOKENS: '40000', VERDICT_REVIEW_MAX_CHUNKS: '4' });
    const files = Array.from({ length: 3000 }, (_, i) => ({
      filename: `src/module${i}/file${i}.ts`,
      status: 'modified',
      additions: 20,
      deletions: 2,
      changes: 22,
      patch: `@@ -0,0 +1,20 @@\n${Array.from({ length: 20 }, (_, l) => `+const value${l} = compute(${i}, ${l});`).join('\n')}`,
    }));
    const scope = nock(API)
      .post('/app/installations/77/access_tokens')
      .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' })
      .get(`/repos/${REPO}/pulls/7`)
      .reply(200, pull({ changed_files: 3000 }));
    // The PR says it changes 3,000 files: the 30 pages are read by number, several at a time.
    for (let page = 1; page <= 30; page++) {
      scope
        .get(`/repos/${REPO}/pulls/7/files`)
        .query((q) => Number(q.page) === page && q.per_page === '100')
        .reply(200, files.slice((page - 1) * 100, page * 100));
    }
    const prompts: string[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (b: any) => (prompts.push(b.messages.at(-1).content), true))
      .times(4)
      .reply(200, completion(JSON.stringify(review({ findings: [] }))));
    await setPolicy({ fileChangeLimit: 5000 });
    const run = await reviewRun(HEAD, 'opened');
    expect(scope.pendingMocks()).toEqual([]);
    expect(run.analysisStatus).toBe('analysed');
    expect(prompts).toHaveLength(4);
    expect(prompts[0]).toContain('## Part 1 of 4');
    const coverage = (run.result as any).coverage;
    expect(coverage.totalFiles).toBe(3000);
    expect(coverage.files).toHaveLength(3000);
    expect(coverage.analysed + coverage.skipped + coverage.failed).toBe(3000);
    expect(coverage.skipped).toBeGreaterThan(0);
    expect(coverage.complete).toBe(false);
    expect((run.result as any).output.missingValidations.join('\n')).toMatch(
      /not reviewed.*over the review budget of 4 model calls/s,
    );
  });

  test('anthropic: a forced tool call with the output schema, the system block cached, cache reads priced', async () => {
    await start({
      VERDICT_RUNNER_PROVIDER: 'anthropic',
      VERDICT_RUNNER_MODEL: 'claude-sonnet-4-20250514',
      ANTHROPIC_API_KEY: 'sk-ant-test',
    });
    github();
    let sent: any = null;
    const scope = nock('https://api.anthropic.com')
      .post('/v1/messages', (b) => ((sent = b), true))
      .matchHeader('anthropic-version', '2023-06-01')
      // @anthropic-ai/sdk 1.x sends the API key as a bearer token.
      .matchHeader('authorization', 'Bearer sk-ant-test')
      .reply(200, {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-20250514',
        content: [{ type: 'tool_use', id: 'toolu_01', name: 'review', input: review() }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: {
          input_tokens: 200,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 1800,
          output_tokens: 500,
        },
      })
      // The verification call: its answer forced through the tool named `verification` (NAMES.md).
      .post('/v1/messages', (b) => ((verification = b), b.tool_choice?.name === 'verification'))
      .reply(200, (_uri, body: any) => ({
        id: 'msg_02',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-20250514',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_02',
            name: 'verification',
            input: JSON.parse(confirmingAnswer(body.messages.at(-1).content, 95)),
          },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 900, output_tokens: 40 },
      }));
    let verification: any = null;
    const run = await reviewRun();
    expect(scope.pendingMocks()).toEqual([]);
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
    expect(sent.max_tokens).toBe(8192);
    // The same low, fixed temperature as the other providers.
    expect(sent.temperature).toBe(0.1);
    // The schema is the tool's input schema, and the tool is forced; the system block is cached.
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'review' });
    expect(sent.tools[0].name).toBe('review');
    expect(verification.tools[0].name).toBe('verification');
    expect(Object.keys(verification.tools[0].input_schema.properties)).toEqual(['results']);
    expect((run.result as any).verification).toMatchObject({ status: 'verified', published: 1 });
    expect(Object.keys(sent.tools[0].input_schema.properties)).toContain('findings');
    expect(sent.system).toEqual([
      expect.objectContaining({ type: 'text', cache_control: { type: 'ephemeral' } }),
    ]);
    expect(sent.system[0].text).toContain('fourteen fields');
    expect((run.result as any).output.findings[0].title).toBe('Eviction races with concurrent writes');
    const { spans } = await spansOf(run);
    const model = spans.find((s) => s.name === 'model')!;
    // Input counts every token, cached ones included.
    expect(model).toMatchObject({ provider: 'anthropic', inputTokens: 2000, outputTokens: 500 });
    expect(model.attributes).toMatchObject({ cachedInputTokens: 1800, structuredOutput: 'tool' });
    // 200 × $3 + 1800 × $0.30 (cache reads) + 500 × $15 per million tokens.
    expect(model.costUsd).toBeCloseTo(0.00864, 6);
  });

  test('the shadow model is run and stored as shadowReview, never as the run’s findings', async () => {
    const store = await start({ VERDICT_RUNNER_SHADOW_MODEL: 'gpt-4o' });
    github();
    const models: string[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (b: any) => (models.push(b.model), b.model === 'gpt-4o-mini'))
      .reply(200, completion(JSON.stringify(review({ findings: [] }))))
      .post('/v1/chat/completions', (b: any) => (models.push(b.model), b.model === 'gpt-4o'))
      .reply(200, completion(JSON.stringify(review())));
    const run = await reviewRun();
    expect(models.sort()).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(run.analysisStatus).toBe('analysed');
    expect(await store.findings.listForRun(run.id)).toEqual([]);
    expect(run.shadowReview).toMatchObject({ provider: 'openai', model: 'gpt-4o', status: 'analysed' });
    expect((run.shadowReview as any).output.findings).toHaveLength(1);
    const { spans } = await spansOf(run);
    expect(spans.filter((s) => s.name === 'shadow-model')).toHaveLength(1);
  });

  test('a failed chunk degrades coverage; the other chunks still give the review', async () => {
    const store = await start({ VERDICT_REVIEW_CHUNK_TOKENS: '1000', VERDICT_REVIEW_FILE_TOKENS: '600' });
    const big = (seed: string) =>
      `@@ -0,0 +1,60 @@\n${Array.from({ length: 60 }, (_, l) => `+const ${seed}${l} = compute("${seed}", ${l});`).join('\n')}`;
    const files = [
      { filename: 'src/a.ts', status: 'modified', additions: 60, deletions: 0, changes: 60, patch: big('a') },
      { filename: 'src/b.ts', status: 'modified', additions: 50, deletions: 0, changes: 50, patch: big('b') },
    ];
    github(pull(), files);
    nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(200, completion(JSON.stringify(review())))
      .post('/v1/chat/completions')
      .reply(503, { error: { message: 'overloaded', type: 'server_error' } });
    const run = await reviewRun();
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'degraded' });
    const result = run.result as any;
    expect(result.chunks).toMatchObject({ total: 2, failed: 1 });
    expect(result.coverage).toMatchObject({ complete: false, failed: 1 });
    const failed = result.coverage.files.find((f: any) => f.status === 'failed');
    expect(failed.reason).toMatch(/503/);
    expect(result.output.missingValidations.join('\n')).toMatch(
      /Part 2 \(1 file\(s\)\) could not be analysed/,
    );
    expect(await store.findings.listForRun(run.id)).toHaveLength(1);
  });

  test('the monthly budget: reached after known spend, unavailable when a call has no known cost', async () => {
    const store = await start();
    github();
    modelAnswer();
    const first = await reviewRun();
    expect(first.analysisStatus).toBe('analysed');
    await setPolicy({ monthlyModelBudgetUsd: 0.0001 });
    github();
    const model = nock(OPENAI).post('/v1/chat/completions').reply(200, completion('{}'));
    const second = await reviewRun(HEAD, 'manual_command', 'manual-1');
    expect(second).toMatchObject({ status: 'skipped', reason: 'monthly_model_budget_reached' });
    expect(model.pendingMocks()).toHaveLength(1);

    // A model call of the month whose cost is unknown makes the month's spend unknown.
    await setPolicy({ monthlyModelBudgetUsd: 100 });
    await store.traces.start({ id: 'trc-x', name: 'review' });
    await store.traces.addSpan({
      traceId: 'trc-x',
      spanId: 'spn-x',
      kind: 'model',
      name: 'model',
      status: 'ok',
      provider: 'codex',
      model: 'gpt-5-codex',
      startedAt: Date.now(),
    });
    github();
    const third = await reviewRun(HEAD, 'manual_command', 'manual-2');
    expect(third).toMatchObject({ status: 'skipped', reason: 'model_budget_usage_unavailable' });
    expect((third.result as any).admission.detail).toMatch(/no known cost/);
  });

  test('a trace left running by a killed worker is ended as abandoned when the run is taken over', async () => {
    const store = await start();
    const run = await h.requestRun();
    // The first attempt's trace, as a worker killed mid-run leaves it.
    await store.traces.start({
      id: 'trc_killed',
      runId: run.id,
      reviewKey: run.reviewKey,
      repo: REPO,
      prNumber: 7,
      name: 'review',
      attributes: { attempt: 1 },
      startedAt: Date.now() - 60_000,
    });
    github();
    modelAnswer();
    h.app.verdict.reviewWorker!.kick();
    await eventually(async () => {
      const r = await store.runs.get(run.id);
      return r && r.analysisStatus === 'analysed' && r.status === 'completed' ? r : null;
    }, 20_000);
    const old = (await store.traces.get('trc_killed'))!.trace;
    expect(old).toMatchObject({ status: 'error', attributes: { attempt: 1, outcome: 'abandoned' } });
    expect(old.endedAt).not.toBeNull();
    const traces = await store.traces.list({ runId: run.id, limit: 10 });
    expect(traces.filter((t) => t.status === 'running')).toHaveLength(0);
  });

  test('a moved head or a closed pull request is skipped; a missing pull request fails without retry', async () => {
    const store = await start();
    github(pull({ head: { sha: HEAD2, ref: 'feature/cache' } }));
    expect(await reviewRun()).toMatchObject({ status: 'skipped', reason: 'head_moved' });
    github(pull({ state: 'closed' }));
    expect(await reviewRun(HEAD, 'manual_command', 'manual-1')).toMatchObject({
      status: 'skipped',
      reason: 'pull_request_closed',
    });
    nock(API)
      .post('/app/installations/77/access_tokens')
      .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' })
      .get(`/repos/${REPO}/pulls/7`)
      .reply(404, { message: 'Not Found' });
    const missing = await reviewRun(HEAD, 'manual_command', 'manual-2');
    expect(missing).toMatchObject({ status: 'failed', analysisStatus: 'failed' });
    expect(missing.error).toMatch(/404/);
    const job = await eventually(async () => {
      const j = await store.jobs.get(missing.jobId!);
      return j?.status === 'dead' ? j : null;
    });
    expect(job.lastError).toMatch(/404/);
  });

  test('without App credentials a review fails at once, saying so, and is not retried', async () => {
    const store = await start({ APP_ID: '', PRIVATE_KEY: '' });
    const run = await reviewRun();
    expect(run).toMatchObject({ status: 'failed', analysisStatus: 'failed' });
    expect(run.error).toMatch(/no GitHub App credentials/);
    expect(await store.jobs.get(run.jobId!)).toMatchObject({ status: 'dead', attempts: 1 });
  });
});
