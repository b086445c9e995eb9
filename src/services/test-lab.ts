import { z } from 'zod';
import type { HarnessRecord } from '../store/harness.js';
import { defineOperation, notFound, OperatorError, READ_OR_KEY, type ServiceContext } from './operation.js';

/**
 * Test Lab records, newest first (at most 100): corpus runs (`kind: "corpus"`, from `verdict testlab run`:
 * provider, model, prompt version, commit, judge and scores; the detail adds every case's result) and
 * harness records (`kind: "harness"`, one analysed run saved by `verdict harness`).
 */
export const testLabOperations = {
  list: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      const [corpus, harness] = await Promise.all([ctx.store.testLab.list(100), ctx.store.harness.list(100)]);
      const runs = [
        ...corpus.map((r) => ({ kind: 'corpus' as const, ...r })),
        ...harness.map((r) => ({ kind: 'harness' as const, ...r })),
      ]
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
        .slice(0, 100);
      return { runs };
    },
  }),
  get: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ id: z.string().min(1).max(200) }),
    async run(ctx, { id }) {
      const corpus = await ctx.store.testLab.get(id);
      if (corpus) return { run: { kind: 'corpus' as const, ...corpus } };
      const harness = await ctx.store.harness.get(id);
      if (!harness) throw notFound('Not found');
      return { run: { kind: 'harness' as const, ...harness } };
    },
  }),
};

/**
 * Saves an analysed run as a harness record (the CLI's `harness`; the Test Lab lists it): its verdict,
 * confidence, statuses, coverage head and completeness, and each finding's fingerprint, severity,
 * category, location and title. An unknown review key is 404 `not_found`; a run that is not analysed is
 * 409 `not_analyzed`. The record's actor is the caller.
 */
export async function saveHarnessRecord(
  ctx: ServiceContext,
  input: { reviewKey: string; name?: string | undefined },
): Promise<HarnessRecord> {
  const { store } = ctx;
  const run = await store.runs.getByKey(input.reviewKey);
  if (!run) throw notFound(`no run with review key ${input.reviewKey}`);
  if (!['analysed', 'degraded'].includes(run.analysisStatus)) {
    throw new OperatorError(
      409,
      'not_analyzed',
      `run ${run.reviewKey} is not analyzed (analysis ${run.analysisStatus})`,
    );
  }
  const findings = await store.findings.listForRun(run.id);
  const coverage = (run.result as { coverage?: { complete?: unknown; headSha?: unknown } } | null)?.coverage;
  return store.harness.save({
    id: ctx.newId('harness'),
    name: input.name ?? run.reviewKey,
    reviewKey: run.reviewKey,
    runId: run.id,
    repo: run.repo,
    prNumber: run.prNumber,
    actor: ctx.principal.actor,
    record: {
      verdict: run.verdict,
      confidence: run.confidence,
      analysisStatus: run.analysisStatus,
      publishStatus: run.publishStatus,
      headSha: run.headSha,
      coverage: coverage ? { complete: coverage.complete ?? null, headSha: coverage.headSha ?? null } : null,
      findings: findings.map((f) => ({
        fingerprint: f.fingerprint,
        severity: f.severity,
        category: f.category,
        path: f.path,
        line: f.line,
        title: f.title,
      })),
    },
  });
}
