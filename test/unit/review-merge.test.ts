import { buildReviewInput, type ChangedFile } from '../../src/review/context.js';
import { fallbackOutput, mergeOutputs, semanticCoverage } from '../../src/review/merge.js';
import { reviewOutputSchema, type ReviewOutput } from '../../src/review/output.schema.js';
import { reviewOutput } from '../helpers/review-output.js';

function output(over: Partial<ReviewOutput> = {}): ReviewOutput {
  return reviewOutput({
    overview: 'Adds a cache.',
    summary: 'Looks fine.',
    confidenceScore: 4,
    bulletHighlights: ['cache added'],
    reasoning: 'Small change.',
    mergeVerdict: 'Safe to merge.',
    importantFiles: [{ path: 'src/a.ts', overview: 'cache' }],
    ...over,
  });
}

const finding = (title: string, path = 'src/a.ts') => ({
  severity: 'high' as const,
  category: 'correctness',
  path,
  title,
  body: 'body',
  contextIds: [],
});

describe('merging chunk outputs', () => {
  it('returns a single output unchanged', () => {
    const one = output();
    expect(mergeOutputs([one])).toBe(one);
  });

  it('needs-attention when any part says so, lowest confidence, findings de-duplicated by fingerprint', () => {
    const merged = mergeOutputs([
      output({ findings: [finding('Null dereference in get')] }),
      output({
        verdict: 'needs-attention',
        confidenceScore: 2,
        mergeVerdict: 'Fix the race first.',
        // Same path, category and title up to case and spacing: the same fingerprint.
        findings: [finding('null  dereference in GET'), finding('Race on write', 'src/b.ts')],
        bulletHighlights: ['cache added', 'race'],
        sequenceDiagram: 'a -> b',
      }),
    ]);
    expect(merged.verdict).toBe('needs-attention');
    expect(merged.confidenceScore).toBe(2);
    expect(merged.mergeVerdict).toBe('Fix the race first.');
    expect(merged.findings.map((f) => f.title)).toEqual(['Null dereference in get', 'Race on write']);
    expect(merged.bulletHighlights).toEqual(['cache added', 'race']);
    expect(merged.summary).toMatch(/^Part 1 of 2: Looks fine\.\n\nPart 2 of 2: Looks fine\.$/);
    expect(merged.sequenceDiagram).toBe('a -> b');
    expect(merged.importantFiles).toHaveLength(1);
    expect(reviewOutputSchema.safeParse(merged).success).toBe(true);
  });

  it('the fallback output is a valid review that claims nothing and says why', () => {
    const out = fallbackOutput('the model timed out');
    expect(reviewOutputSchema.safeParse(out).success).toBe(true);
    expect(out.confidenceScore).toBe(1);
    expect(out.findings).toEqual([]);
    expect(out.missingValidations[0]).toContain('the model timed out');
  });
});

describe('semantic coverage', () => {
  /** `src/<name>.ts`, modified: one added line holding its name. */
  const modified = (name: string): ChangedFile => ({
    filename: `src/${name}.ts`,
    status: 'modified',
    additions: 1,
    deletions: 0,
    changes: 1,
    patch: `@@ -0,0 +1 @@\n+${name}`,
  });
  const files: ChangedFile[] = [
    modified('a'),
    modified('b'),
    { filename: 'logo.png', status: 'added', additions: 0, deletions: 0, changes: 0, patch: null },
  ];

  it('marks analysed, skipped and failed files at the head it was computed on', () => {
    const input = buildReviewInput(files, { chunkTokens: 20, fileTokens: 20, maxChunks: 5 });
    expect(input.chunks.length).toBe(2);
    const cov = semanticCoverage('abc', files, input, new Map([[1, 'timeout']]), 3);
    expect(cov).toMatchObject({ headSha: 'abc', complete: false, analysed: 1, failed: 1, skipped: 1 });
    expect(cov.files.find((f) => f.path === 'logo.png')).toMatchObject({ status: 'skipped' });
    expect(cov.files.find((f) => f.status === 'failed')?.reason).toBe('timeout');
  });

  it('is complete only when every file was analysed in full and GitHub listed them all', () => {
    const two = files.slice(0, 2);
    const input = buildReviewInput(two);
    expect(semanticCoverage('abc', two, input, new Map(), 2).complete).toBe(true);
    const truncated = semanticCoverage('abc', two, input, new Map(), 3001);
    expect(truncated).toMatchObject({ complete: false, truncatedByGitHub: true, totalFiles: 3001 });
  });
});
