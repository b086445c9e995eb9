import { randomId } from '../clock.js';
import type { HarnessRecord } from '../store/harness.js';
import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';

/** An analysed run cannot be saved as a harness record. */
export class HarnessError extends Error {}

/**
 * Saves an analysed run as a harness record (the CLI's `harness`, listed by the Test Lab routes): its
 * verdict, confidence, statuses, coverage head and completeness, and each finding's fingerprint,
 * severity, category, location and title.
 */
export async function saveHarnessRecord(
  store: Store,
  run: RunRecord,
  opts: { name?: string; actor: string },
): Promise<HarnessRecord> {
  if (!['analysed', 'degraded'].includes(run.analysisStatus)) {
    throw new HarnessError(`run ${run.reviewKey} is not analyzed (analysis ${run.analysisStatus})`);
  }
  const findings = await store.findings.listForRun(run.id);
  const coverage = (run.result as { coverage?: { complete?: unknown; headSha?: unknown } } | null)?.coverage;
  return store.harness.save({
    id: randomId('harness'),
    name: opts.name ?? run.reviewKey,
    reviewKey: run.reviewKey,
    runId: run.id,
    repo: run.repo,
    prNumber: run.prNumber,
    actor: opts.actor,
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
