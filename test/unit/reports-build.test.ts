import { buildReport } from '../../src/reports/build.js';
import { ReportError } from '../../src/reports/errors.js';
import { DEFAULT_REPORT_LIMITS } from '../../src/reports/limits.js';
import type { ReportSource, SourceFinding, SourceRun } from '../../src/store/report-source.js';
import { parseReportParams } from '../../src/reports/params.js';

const at = (day: string, h = 12) => Date.parse(`${day}T${String(h).padStart(2, '0')}:00:00Z`);

function run(id: string, createdAt: number, extra: Partial<SourceRun> = {}): SourceRun {
  return {
    id,
    repo: 'acme/api',
    prNumber: 1,
    headSha: id,
    status: 'completed',
    analysisStatus: 'analysed',
    verdict: 'needs-attention',
    confidence: 3,
    createdAt,
    coverageComplete: true,
    claims: [],
    ...extra,
  };
}

let nextId = 1;
function finding(
  runId: string,
  createdAt: number,
  fingerprint: string,
  extra: Partial<SourceFinding> = {},
): SourceFinding {
  return {
    id: nextId++,
    runId,
    repo: 'acme/api',
    prNumber: 1,
    severity: 'high',
    category: 'correctness',
    path: null,
    line: null,
    title: `Finding ${fingerprint}`,
    body: 'Body.',
    fingerprint,
    outsideDiff: false,
    createdAt,
    ...extra,
  };
}

function source(runs: SourceRun[], findings: SourceFinding[]): ReportSource {
  return {
    scope: { repo: null },
    counts: {
      runs: runs.length,
      heads: runs.length,
      configs: 0,
      ledgerRows: 0,
      traces: 0,
      findings: findings.length,
      findingsPerRun: 0,
      findingsPerPr: 0,
    },
    inputBytes: 0,
    prs: [
      { repo: 'acme/api', number: 1, title: 'T', author: 'mona', state: 'open', headSha: null, draft: false },
    ],
    runs,
    findings,
    comments: [],
    traces: [],
    repositories: [],
    lineComments: [],
  };
}

const build = (src: ReportSource, query: Record<string, string> = {}, limits = DEFAULT_REPORT_LIMITS) =>
  buildReport(src, parseReportParams(query), { now: at('2026-04-01'), limits, paginate: false });

/** The pure report builder: order of the source rows does not matter; bounds of the series. */
describe('buildReport', () => {
  test('the latest review is the latest by time, whatever order the rows came in', () => {
    const r1 = run('r1', at('2026-03-01'));
    const r2 = run('r2', at('2026-03-02'), { coverageComplete: false, verdict: 'clear' });
    const findings = [finding('r1', r1.createdAt, 'fp-a'), finding('r2', r2.createdAt, 'fp-b')];
    for (const order of [
      [r1, r2],
      [r2, r1],
    ]) {
      const report = build(source(order, findings));
      const status = Object.fromEntries(report.findings.items.map((f) => [f.fingerprint, f.status]));
      expect(status).toEqual({ 'fp-a': 'not_reobserved', 'fp-b': 'open' });
      expect(report.reviewedPrs.items[0]!.latestReview).toMatchObject({
        runId: 'r2',
        coverage: 'incomplete',
        verdict: 'clear',
      });
      expect(report.coverage).toMatchObject({ complete: 0, incomplete: 1 });
    }
  });

  test('a finding raised again is counted once, in the period it was first raised', () => {
    const r1 = run('r1', at('2026-03-01'));
    const r2 = run('r2', at('2026-03-05'));
    const src = source(
      [r1, r2],
      [
        finding('r1', r1.createdAt, 'fp'),
        finding('r2', r2.createdAt, 'fp', { severity: 'low', path: 'src/a.ts' }),
      ],
    );
    const all = build(src);
    expect(all.findings.items).toHaveLength(1);
    expect(all.findings.items[0]).toMatchObject({
      occurrences: 2,
      firstRunId: 'r1',
      lastRunId: 'r2',
      severity: 'P3',
      path: 'src/a.ts',
      firstSeenAt: new Date(r1.createdAt).toISOString(),
    });
    expect(build(src, { from: '2026-03-03', to: '2026-03-31' }).findings.total).toBe(0);
    expect(build(src, { from: '2026-03-01', to: '2026-03-01' }).findings.total).toBe(1);
  });

  test('the series bound: 413 report_too_large past it, with advice', () => {
    const src = source([run('r1', at('2026-03-01'))], []);
    const query = { from: '2026-01-01', to: '2026-12-31' };
    expect(build(src, query).series).toHaveLength(365);
    try {
      build(src, query, { ...DEFAULT_REPORT_LIMITS, seriesBuckets: 100 });
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(ReportError);
      expect(error).toMatchObject({ status: 413, error: 'report_too_large', code: 'report_too_large' });
      expect((error as Error).message).toContain('granularity=week or month');
    }
    expect(
      build(src, { ...query, granularity: 'week' }, { ...DEFAULT_REPORT_LIMITS, seriesBuckets: 100 }).series,
    ).toHaveLength(53);
  });

  test('an empty store gives an empty, well-formed report', () => {
    const report = build(source([], []));
    expect(report.series).toEqual([]);
    expect(report.period).toEqual({ from: null, to: null, bounded: false });
    expect(report.coverage).toMatchObject({
      reviewedPrs: 0,
      completeShare: null,
      completeShareOfKnown: null,
    });
    expect(report.summary.traces).toEqual({ total: 0, byStatus: {}, medianMs: null, p90Ms: null });
  });
});
