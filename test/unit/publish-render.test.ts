import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultReviewPolicy, type ReviewPolicy } from '../../src/policy/policy.schema.js';
import { escapeText } from '../../src/publish/markdown.js';
import {
  GITHUB_BODY_LIMIT,
  renderReviewBody,
  type RenderFinding,
  type RenderInput,
} from '../../src/publish/render.js';
import { withDescriptionSummary } from '../../src/publish/description.js';
import { defaultCompetitorComparison, type ReviewOutput } from '../../src/review/output.schema.js';
import { fullCoverage, reviewOutput } from '../helpers/review-output.js';

/**
 * Golden files in fixtures/reviews/*.md: the review body in its main shapes, readable as Markdown.
 * `UPDATE_GOLDEN=1 npm test -- test/unit/publish-render.test.ts` rewrites them after an intended change.
 */
const GOLDEN = join(process.cwd(), 'fixtures', 'reviews');

function golden(name: string, body: string) {
  const file = join(GOLDEN, `${name}.md`);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, body);
  if (!existsSync(file)) throw new Error(`missing golden file ${file}: run with UPDATE_GOLDEN=1 once`);
  expect(body).toBe(readFileSync(file, 'utf8'));
}

const coverage = fullCoverage({ totalFiles: 2, analysed: 2, files: [] });

function output(over: Partial<ReviewOutput> = {}): ReviewOutput {
  return reviewOutput({
    overview: 'Adds a read-through cache in front of the user service.',
    summary: 'Small and focused.',
    bulletHighlights: ['New `UserCache` with LRU eviction', 'Lookups go through the cache'],
    reasoning: 'The diff is small and covered by tests.',
    mergeVerdict: 'Safe to merge.',
    importantFiles: [{ path: 'src/cache.ts', overview: 'the cache itself' }],
    ...over,
  });
}

const blocker: RenderFinding = {
  severity: 'blocker',
  category: 'security',
  path: 'src/auth.ts',
  title: 'Token compared with ===',
  body: 'Use a constant-time comparison:\n\n```ts\ntimingSafeEqual(a, b)\n```',
  contextIds: [],
};
const high: RenderFinding = {
  severity: 'high',
  category: 'concurrency',
  path: 'src/cache.ts',
  title: 'Eviction races with writes',
  body: 'evict() can run between get and set.',
  contextIds: [],
  stillOpen: true,
};

function input(
  o: ReviewOutput,
  over: Partial<RenderInput> = {},
  policy: Partial<ReviewPolicy> = {},
): RenderInput {
  return {
    output: o,
    coverage,
    degraded: false,
    productName: 'Verdict',
    policy: { ...defaultReviewPolicy(), ...policy },
    changedPaths: new Set(['src/cache.ts', 'src/auth.ts']),
    findings: o.findings,
    botHandle: 'verdict',
    runId: 'run_test',
    ...over,
  };
}

describe('review body (golden files)', () => {
  test('CLEAR with no findings', () => {
    golden('clear-no-findings', renderReviewBody(input(output())));
  });

  test('BLOCK with a blocker, a still-open finding and an outside-diff finding', () => {
    const outside: RenderFinding = {
      severity: 'medium',
      category: 'api',
      path: 'src/routes.ts',
      title: 'Callers of getUser now get stale data',
      body: 'The route reads through the cache.',
      contextIds: [],
    };
    const o = output({
      verdict: 'needs-attention',
      confidenceScore: 4,
      mergeVerdict: 'Fix the token comparison first.',
      findings: [blocker, high, outside],
      missingValidations: ['2 changed file(s) not reviewed: assets/logo.png (binary)'],
      crossRepoImpact: ['acme/mobile calls this endpoint'],
      sequenceDiagram: 'Client -> API: GET /user\nAPI -> Cache: get(id)',
    });
    golden('block-with-findings', renderReviewBody(input(o, { findings: [blocker, high, outside] })));
  });

  test('an incremental review: line comments, a finding without a line, still open and resolved', () => {
    const inline: RenderFinding = {
      ...blocker,
      inline: true,
      line: 12,
      endLine: 14,
      fileUrl: 'https://github.com/acme/web/blob/' + 'b'.repeat(40) + '/src/auth.ts#L12-L14',
    };
    const unanchored: RenderFinding = {
      severity: 'medium',
      category: 'testing',
      path: 'src/cache.ts',
      title: 'No tests for the cache',
      body: 'Nothing exercises eviction.',
      contextIds: [],
    };
    const o = output({
      verdict: 'needs-attention',
      confidenceScore: 4,
      mergeVerdict: 'Fix the token comparison first.',
      findings: [blocker, high, unanchored],
    });
    const body = renderReviewBody(
      input(o, {
        findings: [inline, high, unanchored],
        reviewNote: 'Reviewed the 2 files changed since aaaaaaa',
        stillOpen: [
          {
            severity: 'high',
            title: 'Eviction races with writes',
            path: 'src/cache.ts',
            line: 30,
            threadUrl: 'https://github.com/acme/web/pull/7#discussion_r701',
          },
        ],
        resolved: [
          {
            title: 'Cache never expires',
            path: 'src/cache.ts',
            disposition: 'resolved',
            explanation: 'evict() checks expiry now',
            threadUrl: 'https://github.com/acme/web/pull/7#discussion_r700',
          },
        ],
      }),
    );
    golden('incremental-line-comments', body);
    // The line comment is listed once, not written out in the findings; the still-open one is listed once.
    expect(body.match(/Token compared with ===/g)).toHaveLength(1);
    expect(body.match(/Eviction races with writes/g)).toHaveLength(1);
    expect(body).toContain('### Findings (1)');
  });

  test('honest: the status and its cause, a contradicting model verdict said, severity order, links, lows folded', () => {
    const low = (i: number): RenderFinding => ({
      severity: 'low',
      category: 'style',
      path: 'src/cache.ts',
      title: `Low finding ${i}`,
      body: '',
      contextIds: [],
    });
    const lows = Array.from({ length: 11 }, (_, i) => low(i + 1));
    const medium: RenderFinding = {
      ...high,
      stillOpen: false,
      severity: 'medium',
      title: 'A medium one',
      line: 7,
    };
    const o = output({
      verdict: 'clear',
      mergeVerdict: 'Safe to merge.',
      findings: [...lows, medium, blocker],
    });
    const body = renderReviewBody(
      input(o, {
        fileLink: (path, line) => `https://github.com/acme/web/blob/abc/${path}${line ? `#L${line}` : ''}`,
      }),
    );
    golden('honest-contradiction-and-lows', body);
    expect(body).toContain('**Merge Status: 🔴 BLOCK** (1 blocker)');
    expect(body).toContain('this disagrees with the computed status');
    expect(body.indexOf('Token compared')).toBeLessThan(body.indexOf('A medium one'));
    expect(body).toContain('[`src/cache.ts`](https://github.com/acme/web/blob/abc/src/cache.ts#L7)');
    expect(body).toContain('<summary>11 low findings</summary>');
    expect(body).toContain('Nothing was executed: semantic review only.');
  });

  test('every summary section disabled', () => {
    const off = { enabled: false, collapsible: false, defaultOpen: true };
    const body = renderReviewBody(
      input(
        output({ findings: [high], sequenceDiagram: 'a -> b' }),
        { findings: [high] },
        {
          summary: { summary: off, confidence: off, files: off, diagram: off, outsideDiff: off },
        },
      ),
    );
    golden('sections-disabled', body);
    expect(body).not.toMatch(/### Summary|Analyst Confidence|Important Files|Sequence Diagram/);
    expect(body).toContain('**Merge Status:');
  });

  test('collapsible sections, competitor benchmark, prompt to fix, header and feature tips', () => {
    const open = { enabled: true, collapsible: true, defaultOpen: true };
    const closed = { enabled: true, collapsible: true, defaultOpen: false };
    const o = output({
      findings: [high],
      verdict: 'needs-attention',
      competitorComparison: {
        ...defaultCompetitorComparison(),
        available: true,
        winner: 'own',
        summary: 'We caught the race; the other reviewer did not.',
        confidence: 4,
        competitorMisses: ['the eviction race'],
      },
    });
    const body = renderReviewBody(
      input(
        o,
        { findings: [high] },
        {
          commentHeader: '> Reviewed by the platform team bot.',
          promptToFix: true,
          featureTips: true,
          summary: { ...defaultReviewPolicy().summary, summary: open, confidence: closed },
        },
      ),
    );
    golden('collapsible-competitor-prompt', body);
    expect(body).toContain('<details open>\n<summary><strong>Summary</strong></summary>');
    expect(body).toContain('<details>\n<summary><strong>Analyst Confidence: 5/5</strong></summary>');
  });

  test('model text cannot ping people, inject HTML or break the layout', () => {
    const evil: RenderFinding = {
      severity: 'high',
      category: 'x|y',
      path: 'src/cache.ts',
      title: 'Ping @octocat and @acme/admins <img src=x onerror=alert(1)>',
      body: 'Unclosed fence:\n```\n<details><summary>x</summary>',
      contextIds: [],
    };
    const body = renderReviewBody(
      input(output({ findings: [evil], overview: 'cc @everyone </details><!--' }), { findings: [evil] }),
    );
    golden('escaped-model-text', body);
    expect(body).not.toMatch(/@octocat|@acme|@everyone/);
    expect(body).not.toContain('<img');
    expect(body).not.toContain('<!--\n');
    expect(body.match(/^\s*```/gm)!.length % 2).toBe(0);
    expect(escapeText('mail me at a@b.com')).toBe('mail me at a@b.com');
  });

  test('a body over GitHub’s limit is shortened, keeping the merge status, and says so', () => {
    const many: RenderFinding[] = Array.from({ length: 400 }, (_, i) => ({
      severity: 'medium',
      category: 'maintainability',
      path: 'src/cache.ts',
      title: `Finding number ${i}`,
      body: 'A long explanation. '.repeat(60),
      contextIds: [],
    }));
    const body = renderReviewBody(
      input(output({ findings: many, verdict: 'needs-attention' }), { findings: many }),
    );
    expect(body.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(body).toContain('**Merge Status: 🟡 CAUTION**');
    expect(body).toMatch(/Shortened to fit GitHub's size limit/);
    golden('shortened', body);
  });
});

describe('PR description markers', () => {
  test('replaces only what is between the markers and leaves the author text untouched', () => {
    const before =
      'Intro.\n\n<!-- verdict:summary:start -->\nold\n<!-- verdict:summary:end -->\n\nAuthor footer.';
    expect(withDescriptionSummary(before, 'new')).toBe(
      'Intro.\n\n<!-- verdict:summary:start -->\nnew\n<!-- verdict:summary:end -->\n\nAuthor footer.',
    );
    expect(withDescriptionSummary('Just text.  ', 'new')).toBe(
      'Just text.\n\n<!-- verdict:summary:start -->\nnew\n<!-- verdict:summary:end -->',
    );
    expect(withDescriptionSummary(null, 'new')).toBe(
      '<!-- verdict:summary:start -->\nnew\n<!-- verdict:summary:end -->',
    );
  });
});
