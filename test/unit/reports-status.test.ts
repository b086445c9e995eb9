import type { ResolutionClaim } from '../../src/store/report-source.js';
import { findingStatus, type StatusRun } from '../../src/reports/status.js';

const FP = 'fp-1';
const evidence = [{ path: 'src/a.ts', headSha: 'b'.repeat(40), quote: 'if (n < limit) return;' }];
const claim = (fingerprint: string, withEvidence: boolean, disposition = 'resolved'): ResolutionClaim => ({
  fingerprint,
  disposition,
  explanation: 'closed',
  evidence: withEvidence ? evidence : [],
});
const run = (id: string, at: number, claims: ResolutionClaim[] | null = [], analysed = true): StatusRun => ({
  id,
  createdAt: at,
  analysed,
  claims,
});
const raised = (...ids: string[]) => new Set(ids);

/** Report finding status (operator-api 2.7, 3): addressed only with a resolution claim plus evidence. */
describe('finding status', () => {
  test('open: the latest analysed review raises it (a later failed run does not count)', () => {
    expect(findingStatus(FP, [run('r1', 1)], raised('r1'))).toMatchObject({ status: 'open' });
    expect(findingStatus(FP, [run('r1', 1), run('r2', 2)], raised('r1', 'r2')).status).toBe('open');
    expect(findingStatus(FP, [run('r1', 1), run('r2', 2, null, false)], raised('r1')).status).toBe('open');
  });

  test('a finding that disappears from a later review is not_reobserved, never addressed', () => {
    const v = findingStatus(FP, [run('r1', 1), run('r2', 2)], raised('r1'));
    expect(v).toEqual({ status: 'not_reobserved', reason: 'absent_from_later_review', resolution: null });
  });

  test('addressed: a later review recorded an accepted closure claim with evidence', () => {
    const v = findingStatus(FP, [run('r1', 1), run('r2', 2, [claim(FP, true)])], raised('r1'));
    expect(v).toEqual({
      status: 'addressed',
      reason: 'closure_claim_with_evidence',
      resolution: { runId: 'r2', at: 2, disposition: 'resolved', explanation: 'closed', evidence },
    });
    // Any accepted closure kind counts; the kind is kept.
    const fp = findingStatus(
      FP,
      [run('r1', 1), run('r2', 2, [claim(FP, true, 'false_positive')])],
      raised('r1'),
    );
    expect(fp.resolution?.disposition).toBe('false_positive');
    // The claim may come in any later review, not only the next one.
    expect(
      findingStatus(FP, [run('r1', 1), run('r2', 2), run('r3', 3, [claim(FP, true)])], raised('r1')).status,
    ).toBe('addressed');
  });

  test('a claim without evidence, for another fingerprint, or before the last raise does not address', () => {
    expect(findingStatus(FP, [run('r1', 1), run('r2', 2, [claim(FP, false)])], raised('r1')).status).toBe(
      'not_reobserved',
    );
    expect(
      findingStatus(FP, [run('r1', 1), run('r2', 2, [claim('fp-other', true)])], raised('r1')).status,
    ).toBe('not_reobserved');
    // Closed in r2, raised again in r3: open again.
    const runs = [run('r1', 1), run('r2', 2, [claim(FP, true)]), run('r3', 3)];
    expect(findingStatus(FP, runs, raised('r1', 'r3')).status).toBe('open');
    // Closed in r2, raised again in r3, gone in r4 without a claim: not_reobserved.
    expect(findingStatus(FP, [...runs, run('r4', 4)], raised('r1', 'r3')).status).toBe('not_reobserved');
    // A claim from a run that was not analysed is no record.
    expect(
      findingStatus(FP, [run('r1', 1), run('r2', 2), run('r3', 3, [claim(FP, true)], false)], raised('r1'))
        .status,
    ).toBe('not_reobserved');
  });

  test('unknown: no fingerprint, or the raising run is not an analysed review', () => {
    expect(findingStatus('  ', [run('r1', 1)], raised('r1'))).toMatchObject({
      status: 'unknown',
      reason: 'no_fingerprint',
    });
    expect(findingStatus(FP, [run('r1', 1, null, false)], raised('r1'))).toMatchObject({
      status: 'unknown',
      reason: 'raising_run_not_analysed',
    });
    expect(findingStatus(FP, [], raised('missing')).status).toBe('unknown');
  });
});
