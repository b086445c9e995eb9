import { requestReview } from '../../src/review/request.js';
import type { Store } from '../../src/store/index.js';

const sha = (n: number) => n.toString(16).padStart(40, '0');

/**
 * A store with something to show on every dashboard view: repositories, pull requests, runs in several
 * states (one analysed and published, with findings, a ledger and a trace of spans with tokens and cost),
 * a failure reason, a Test Lab corpus run with its cases, and two memory clusters with feedback. Returns
 * the review key of the traced run.
 */
export async function seedDashboard(
  store: Store,
): Promise<{ tracedKey: string; tracedRepo: string; tracedNumber: number }> {
  const now = Date.now();
  await store.repositories.upsertInstalled('acme/api', 1);
  await store.repositories.upsertInstalled('acme/web', 1);
  for (let i = 1; i <= 30; i++) {
    await store.pullRequests.upsert({
      repo: i % 2 ? 'acme/api' : 'acme/web',
      number: i,
      title: i === 7 ? 'Cache the flux capacitor readings' : `Change number ${i}`,
      author: i % 3 ? 'doc' : 'marty',
      headSha: sha(i),
      baseRef: 'main',
    });
  }

  // PR 7: analysed, published, with findings, a ledger and a trace.
  const review = await requestReview(store, {
    owner: 'acme',
    repo: 'api',
    number: 7,
    headSha: sha(7),
    installationId: 1,
    trigger: 'opened',
  });
  const run = review.run;
  await store.runs.update(run.id, {
    status: 'completed',
    analysisStatus: 'analysed',
    publishStatus: 'published',
  });
  await store.runs.recordAnalysis(
    { runId: run.id, reviewKey: run.reviewKey, repo: 'acme/api', prNumber: 7, headSha: sha(7) },
    {
      analysisStatus: 'analysed',
      verdict: 'needs-attention',
      confidence: 4,
      result: {
        summary: 'Two problems',
        validation: {
          status: 'failed',
          executor: 'bubblewrap',
          evidence: 'FAILED bubblewrap: npm run test (exit 1)',
          commands: [{ command: 'npm run test', passed: false, introduced: true }],
          notRun: [],
        },
      },
    },
    [
      {
        severity: 'P1',
        category: 'bug',
        path: 'src/cache.ts',
        line: 12,
        endLine: 14,
        lineText: 'return cache.get(key) ?? load(key);',
        title: 'Stale read after invalidation',
        body: 'The cache is read before the invalidation completes.',
        fingerprint: 'f-stale',
        outsideDiff: false,
      },
      {
        severity: 'P3',
        category: 'style',
        path: 'src/flux.ts',
        line: null,
        title: 'Unused import',
        body: 'readFile is imported but never used.',
        fingerprint: 'f-import',
        outsideDiff: false,
      },
    ],
    store.findings,
  );
  await store.publications.record({
    runId: run.id,
    repo: 'acme/api',
    prNumber: 7,
    kind: 'review',
    mode: 'live',
    status: 'published',
    receipt: '1234567',
    body: 'review body',
    error: null,
  });
  await store.publications.record({
    runId: run.id,
    repo: 'acme/api',
    prNumber: 7,
    kind: 'check_run',
    mode: 'live',
    status: 'published',
    receipt: '7654321',
    body: null,
    error: null,
  });
  const t0 = now - 60_000;
  await store.traces.start({
    id: 'trace-7',
    runId: run.id,
    reviewKey: run.reviewKey,
    repo: 'acme/api',
    prNumber: 7,
    name: 'review',
    startedAt: t0,
  });
  const spans = [
    { spanId: 'root', parentSpanId: null, kind: 'stage', name: 'review', start: 0, end: 42_000 },
    { spanId: 'gather', parentSpanId: 'root', kind: 'stage', name: 'gather', start: 200, end: 3_000 },
    {
      spanId: 'm1',
      parentSpanId: 'root',
      kind: 'model',
      name: 'chunk 1',
      start: 3_100,
      end: 21_000,
      tokens: [12_000, 900],
      cost: 0.0421,
    },
    {
      spanId: 'm2',
      parentSpanId: 'root',
      kind: 'model',
      name: 'chunk 2',
      start: 3_200,
      end: 30_000,
      tokens: [9_500, 1_200],
      cost: 0.0388,
    },
    {
      spanId: 'synth',
      parentSpanId: 'root',
      kind: 'model',
      name: 'synthesis',
      start: 30_100,
      end: 39_000,
      tokens: [4_000, 700],
      cost: 0.0156,
    },
    { spanId: 'publish', parentSpanId: 'root', kind: 'stage', name: 'publish', start: 39_100, end: 42_000 },
  ] as const;
  for (const s of spans) {
    await store.traces.addSpan({
      traceId: 'trace-7',
      spanId: s.spanId,
      parentSpanId: s.parentSpanId,
      kind: s.kind,
      name: s.name,
      status: 'ok',
      provider: s.kind === 'model' ? 'openrouter' : null,
      model: s.kind === 'model' ? 'review-model' : null,
      inputTokens: 'tokens' in s ? s.tokens[0] : null,
      outputTokens: 'tokens' in s ? s.tokens[1] : null,
      costUsd: 'cost' in s ? s.cost : null,
      startedAt: t0 + s.start,
      endedAt: t0 + s.end,
    });
  }
  await store.traces.finish('trace-7', 'ok');

  // PR 9: a failed run (a failure reason); PR 12: queued.
  const failed = await requestReview(store, {
    owner: 'acme',
    repo: 'api',
    number: 9,
    headSha: sha(9),
    installationId: 1,
    trigger: 'opened',
  });
  await store.runs.update(failed.run.id, {
    status: 'failed',
    reason: 'provider_timeout',
    error: 'the model did not answer in 600 s',
  });
  await requestReview(store, {
    owner: 'acme',
    repo: 'web',
    number: 12,
    headSha: sha(12),
    installationId: 1,
    trigger: 'synchronize',
  });

  await store.testLab.save({
    id: 'lab-1',
    name: 'replay corpus',
    provider: 'replay',
    model: 'recorded',
    promptVersion: 'v3',
    commit: 'abcdef1234567890',
    judge: null,
    scores: {
      cases: 2,
      recall: 0.5,
      precision: 1,
      falseFindingsPerCleanCase: 0,
      severityAgreement: 1,
      anchorAccuracy: 1,
      costUsd: 0.12,
    },
    cases: [
      {
        name: 'off-by-one',
        language: 'ts',
        kind: 'bug',
        clean: false,
        status: 'analysed',
        error: null,
        findings: [
          { severity: 'P1', title: 'Loop overruns the array', path: 'src/a.ts', line: 3, caught: 'bug-1' },
        ],
        bugs: [{ id: 'bug-1', finding: 0 }],
        falseFindings: 0,
        tokens: { input: 5000, output: 400 },
        costUsd: 0.06,
        wallMs: 8000,
      },
      {
        name: 'clean refactor',
        language: 'py',
        kind: 'clean',
        clean: true,
        status: 'analysed',
        error: null,
        findings: [],
        bugs: [],
        falseFindings: 0,
        tokens: { input: 4000, output: 200 },
        costUsd: 0.06,
        wallMs: 6000,
      },
    ],
    actor: 'cli:test',
  });

  // Feedback on the traced run's line comments: four posted, one addressed, one dismissed (👎), one 👍.
  await store.reviewThreads.recordMany(
    [701, 702, 703, 704].map((id) => ({
      repo: 'acme/api',
      prNumber: 7,
      fingerprint: `fp_${id}`,
      runId: run.id,
      reviewId: '5555',
      commentId: String(id),
      commentNodeId: null,
      path: 'src/flux.ts',
      line: 3,
      url: null,
    })),
  );
  const event = (key: string, commentId: string, kind: 'up' | 'down' | 'addressed', counts: object) =>
    store.feedback.record({
      key,
      repo: 'acme/api',
      prNumber: 7,
      commentId,
      fingerprint: `fp_${commentId}`,
      kind,
      counts,
      actor: 'github:doc',
      cluster: null,
    });
  await event('reaction:1', '701', 'up', { up: 1 });
  await event('reaction:2', '702', 'down', { down: 1, dismissed: 1 });
  await event('addressed:703', '703', 'addressed', { addressed: 1 });

  // Two clusters of acme/api with feedback. Verdict counts the size and the feedback itself (no route
  // writes them), so the seed sets those columns directly: reviewers dismissed "Null checks on lookups"
  // twice and never gave it a 👍 (withheld by the feedback rule); "Naming nits" got 👍 (posted).
  const clusters = [
    {
      label: 'Null checks on lookups',
      exemplar: { title: 'user may be undefined', body: 'find() returns undefined when no user matches.' },
      counts: { size: 4, feedback_up: 0, feedback_down: 1, feedback_dismissed: 2, feedback_addressed: 1 },
    },
    {
      label: 'Naming nits',
      exemplar: { title: 'Rename tmp', body: 'tmp says nothing about what it holds.', category: 'style' },
      counts: { size: 6, feedback_up: 3, feedback_down: 2, feedback_dismissed: 1, feedback_addressed: 0 },
    },
  ];
  for (const c of clusters) {
    const cluster = await store.memory.createCluster({
      repo: 'acme/api',
      label: c.label,
      exemplar: c.exemplar,
      actor: 'seed',
    });
    await store.db.knex('memory_clusters').where({ id: cluster.id }).update(c.counts);
  }
  return { tracedKey: run.reviewKey, tracedRepo: 'acme/api', tracedNumber: 7 };
}
