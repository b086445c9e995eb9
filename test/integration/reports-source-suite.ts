import { DEFAULT_REPORT_LIMITS } from '../../src/reports/limits.js';
import { parseReportParams } from '../../src/reports/params.js';
import { generateReport } from '../../src/reports/report.js';
import { ReportError } from '../../src/reports/errors.js';
import { seedRun } from '../helpers/report-seed.js';
import { openTestStore, type TestDialect, type TestStore } from '../helpers/store.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 2);
const sha = (c: string) => c.repeat(40);

/** The report's source queries (dialect-specific JSON extraction) and status rules, on each dialect. */
export function reportSourceSuite(dialect: TestDialect): void {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  /** A run of acme/api#1 and its high findings (`fp-sec` a security one). */
  async function run(id: string, head: string, at: number, result: unknown, findings: string[]) {
    await seedRun(
      t.store.db.knex,
      { id, repo: 'acme/api', pr: 1, head, createdAt: at, result },
      findings.map((fp) => ({
        severity: 'high',
        category: fp === 'fp-sec' ? 'security' : 'correctness',
        fingerprint: fp,
        title: `Finding ${fp}`,
        path: 'src/a.ts',
      })),
    );
  }

  test('statuses from stored runs: open, addressed with evidence, not_reobserved; coverage; bounds', async () => {
    await t.store.pullRequests.upsert({ repo: 'acme/api', number: 1, title: 'Cache', author: 'mona' });
    await run(
      'r1',
      sha('a'),
      T0,
      { output: { priorFindingDispositions: [] }, coverage: { complete: false } },
      ['fp-open', 'fp-fixed', 'fp-gone', 'fp-sec'],
    );
    const claim = (fingerprint: string, evidence: boolean) => ({
      fingerprint,
      disposition: 'resolved',
      explanation: 'fixed',
      evidence: evidence ? [{ path: 'src/a.ts', quote: 'if (n < limit) return;', headSha: sha('b') }] : [],
    });
    await run(
      'r2',
      sha('b'),
      T0 + DAY,
      {
        output: { priorFindingDispositions: [claim('fp-fixed', true)] },
        coverage: { complete: true },
        priorFindings: {
          resolved: [{ fingerprint: 'fp-fixed', disposition: 'resolved', explanation: 'fixed' }],
        },
      },
      ['fp-open', 'fp-sec'],
    );
    const report = await generateReport(t.store, parseReportParams({}), {
      now: T0 + 2 * DAY,
      paginate: false,
    });
    const status = Object.fromEntries(report.findings.items.map((f) => [f.fingerprint, f.status]));
    expect(status).toEqual({
      'fp-open': 'open',
      'fp-sec': 'open',
      'fp-fixed': 'addressed',
      'fp-gone': 'not_reobserved',
    });
    expect(report.findings.items.find((f) => f.fingerprint === 'fp-sec')!.security).toBe(true);
    expect(report.findings.items.every((f) => f.line === null)).toBe(true);
    expect(report.coverage).toMatchObject({ complete: 1, incomplete: 0, unknown: 0 });
    await expect(
      generateReport(t.store, parseReportParams({}), {
        now: T0 + 2 * DAY,
        paginate: true,
        limits: { ...DEFAULT_REPORT_LIMITS, findings: 5 },
      }),
    ).rejects.toBeInstanceOf(ReportError);
  });
}
