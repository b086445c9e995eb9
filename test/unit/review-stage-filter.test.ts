import { filterStage, type FilterInput } from '../../src/review/filter.stage.js';
import type { Disposition, Finding } from '../../src/review/output.schema.js';
import type { PriorFinding } from '../../src/review/run-result.js';
import { reviewOutput } from '../helpers/review-output.js';
import { HEAD, runScope } from '../helpers/stages.js';

/** Stage `filter`: dispositions held only with evidence from the head, the confidence cap, strictness. */

const finding = (title: string, severity: Finding['severity'], confidence?: number): Finding => ({
  severity,
  category: 'bug',
  path: 'src/a.ts',
  title,
  body: '',
  contextIds: [],
  ...(confidence !== undefined ? { confidence } : {}),
});

const PRIOR: PriorFinding[] = ['fp-1', 'fp-2'].map((fingerprint) => ({
  priorReviewKey: 'k',
  fingerprint,
  severity: 'high',
  category: 'bug',
  path: 'src/a.ts',
  line: 1,
  title: fingerprint,
  headSha: 'a'.repeat(40),
}));

const resolved = (fingerprint: string, quote: string): Disposition => ({
  priorReviewKey: 'k',
  fingerprint,
  disposition: 'resolved',
  explanation: 'fixed',
  evidence: [{ path: 'src/a.ts', headSha: HEAD, quote }],
});

function input(over: Partial<FilterInput> = {}): FilterInput & { reads: string[] } {
  const reads: string[] = [];
  return {
    run: runScope(),
    merged: { output: reviewOutput(), missing: [] },
    gathered: {
      prior: PRIOR,
      fileAtHead: async (path) => {
        reads.push(path);
        return path === 'src/a.ts' ? 'export function evict(key) {\n  cache.delete(key);\n}\n' : null;
      },
    },
    policy: { strictness: 'low' },
    reads,
    ...over,
  };
}

describe('stage filter', () => {
  test('a disposition with a quote found at the head holds; one without leaves the concern open and caps confidence', async () => {
    const i = input({
      merged: {
        output: reviewOutput({
          confidenceScore: 5,
          priorFindingDispositions: [
            resolved('fp-1', 'cache.delete(key);'),
            resolved('fp-2', 'cache.clear(everything);'),
          ],
        }),
        missing: ['earlier line', 'earlier line'],
      },
    });
    const out = await filterStage.run(i);
    expect(out.output.priorFindingDispositions.map((d) => d.fingerprint)).toEqual(['fp-1']);
    expect(out.dispositions.rejected.map((r) => r.disposition.fingerprint)).toEqual(['fp-2']);
    expect(out.output.confidenceScore).toBe(3);
    // The merge's lines first, de-duplicated, then the open concern.
    expect(out.output.missingValidations).toEqual([
      'earlier line',
      expect.stringMatching(
        /^Prior finding fp-2 stays open: its "resolved" claim was not accepted because no evidence holds/,
      ),
    ]);
    // The file at the head was read through the run's reader, once.
    expect(i.reads).toEqual(['src/a.ts']);
    expect(filterStage.counts(out, i)).toEqual({
      strictness: 'low',
      kept: 0,
      droppedByStrictness: 0,
      dispositionsAccepted: 1,
      dispositionsRejected: 1,
      confidenceCapped: true,
    });
  });

  test("the policy's strictness: high keeps blockers and high findings; medium drops low-confidence medium ones", async () => {
    const findings = [
      finding('Crash on empty input', 'blocker'),
      finding('Wrong total', 'high'),
      finding('Maybe slow', 'medium', 0.5),
      finding('Sure slow', 'medium', 0.9),
      finding('Naming', 'low'),
    ];
    const merged = { output: reviewOutput({ findings }), missing: [] };
    const high = await filterStage.run(input({ merged, policy: { strictness: 'high' } }));
    expect(high.output.findings.map((f) => f.title)).toEqual(['Crash on empty input', 'Wrong total']);
    expect(high.dropped).toHaveLength(3);
    const medium = await filterStage.run(input({ merged, policy: { strictness: 'medium' } }));
    expect(medium.dropped.map((f) => f.title)).toEqual(['Maybe slow']);
    const low = await filterStage.run(input({ merged }));
    expect(low.output.findings).toEqual(findings);
    expect(low.output.confidenceScore).toBe(5);
  });
});
