import { defaultReviewPolicy, type ReviewPolicy } from '../../src/policy/policy.schema.js';
import {
  autoApproval,
  checkConclusion,
  mergeStatus,
  riskOf,
  type PublishableAnalysis,
} from '../../src/publish/status.js';
import type { ReviewOutput } from '../../src/review/output.schema.js';
import { fullCoverage as coverage, reviewOutput } from '../helpers/review-output.js';

const HEAD = 'a'.repeat(40);

function analysis(
  over: Partial<ReviewOutput> = {},
  extra: Partial<PublishableAnalysis> = {},
): PublishableAnalysis {
  return { output: reviewOutput(over), coverage: coverage(), degraded: false, ...extra };
}

const finding = (severity: 'blocker' | 'high' | 'medium' | 'low', title = 'Off by one') => ({
  severity,
  category: 'correctness',
  path: 'src/a.ts',
  title,
  body: 'b',
  contextIds: [],
});

describe('merge status', () => {
  test.each([
    ['no findings, clear, complete coverage', analysis(), 'CLEAR'],
    ['a blocker', analysis({ findings: [finding('blocker')] }), 'BLOCK'],
    ['a high finding', analysis({ findings: [finding('high')] }), 'BLOCK'],
    ['a medium finding', analysis({ findings: [finding('medium')] }), 'CAUTION'],
    ['only a low finding', analysis({ findings: [finding('low')] }), 'CLEAR'],
    ['verdict needs-attention', analysis({ verdict: 'needs-attention' }), 'CAUTION'],
    ['a missing validation', analysis({ missingValidations: ['tests not run'] }), 'CAUTION'],
    ['incomplete coverage', analysis({}, { coverage: coverage({ complete: false, skipped: 1 }) }), 'CAUTION'],
    ['no coverage', analysis({}, { coverage: null }), 'CAUTION'],
    ['a degraded analysis', analysis({}, { degraded: true }), 'CAUTION'],
  ])('%s → %s', (_name, a, expected) => {
    expect(mergeStatus(a)).toBe(expected);
  });

  test('risk', () => {
    expect(riskOf(analysis())).toBe('low');
    expect(riskOf(analysis({ findings: [finding('low')] }))).toBe('medium');
    expect(riskOf(analysis({ findings: [finding('high')] }))).toBe('high');
    expect(riskOf(analysis({ findings: [finding('blocker')] }))).toBe('critical');
  });
});

describe('check conclusion (review-engine 3.1)', () => {
  const c = (a: PublishableAnalysis, requiredConfidence = 0, headSha = HEAD) =>
    checkConclusion(a, { requiredConfidence, headSha });
  test.each([
    ['clear, complete, pinned', analysis(), 0, HEAD, 'success'],
    ['confidence below the required one', analysis({ confidenceScore: 3 }), 4, HEAD, 'failure'],
    ['confidence equal to the required one', analysis({ confidenceScore: 4 }), 4, HEAD, 'success'],
    ['low confidence without a requirement', analysis({ confidenceScore: 1 }), 0, HEAD, 'success'],
    ['adequate confidence, missing coverage', analysis({}, { coverage: null }), 3, HEAD, 'neutral'],
    [
      'adequate confidence, incomplete coverage',
      analysis({}, { coverage: coverage({ complete: false }) }),
      3,
      HEAD,
      'neutral',
    ],
    ['adequate confidence, unpinned coverage', analysis(), 3, 'b'.repeat(40), 'neutral'],
    ['non-clear merge status', analysis({ findings: [finding('high')] }), 0, HEAD, 'neutral'],
  ])('%s → %s', (_name, a, required, head, expected) => {
    expect(c(a, required, head)).toBe(expected);
  });
});

describe('auto approval (review-engine 3.2): every condition, each failing alone', () => {
  const policy = (over: Partial<ReviewPolicy> = {}): ReviewPolicy => {
    const base = defaultReviewPolicy();
    return { ...base, autoApprove: { ...base.autoApprove, enabled: true }, ...over };
  };
  const facts = {
    labels: ['safe'],
    author: 'alice',
    repository: 'acme/web',
    targetBranch: 'main',
    sourceBranch: 'f',
    paths: ['src/a.ts'],
    title: 't',
    body: 'b',
    draft: false,
    filesChanged: 1,
  };
  const pr = { draft: false, headSha: HEAD, facts };

  test('all conditions hold: approve', () => {
    expect(autoApproval(analysis(), pr, policy())).toEqual({ approve: true });
  });

  const base = defaultReviewPolicy();
  const cases: Array<[string, PublishableAnalysis, typeof pr, ReviewPolicy, RegExp]> = [
    ['auto approval off', analysis(), pr, base, /autoApprove.enabled/],
    ['confidence 4', analysis({ confidenceScore: 4 }), pr, policy(), /confidence is 4/],
    [
      'incomplete coverage',
      analysis({}, { coverage: coverage({ complete: false }) }),
      pr,
      policy(),
      /incomplete/,
    ],
    ['a skipped file', analysis({}, { coverage: coverage({ skipped: 1 }) }), pr, policy(), /incomplete/],
    ['a failed worker', analysis({}, { coverage: coverage({ failed: 1 }) }), pr, policy(), /incomplete/],
    [
      'a missing validation',
      analysis({ missingValidations: ['x'] }),
      pr,
      policy(),
      /validations are missing/,
    ],
    ['a low finding', analysis({ findings: [finding('low')] }), pr, policy({}), /above nit\/info/],
    ['a draft', analysis(), { ...pr, draft: true }, policy(), /draft/],
    ['head moved', analysis(), { ...pr, headSha: 'b'.repeat(40) }, policy(), /head moved/],
    [
      'summary.confidence disabled',
      analysis(),
      pr,
      policy({
        summary: { ...base.summary, confidence: { enabled: false, collapsible: false, defaultOpen: true } },
      }),
      /summary.confidence/,
    ],
    [
      'autoApprove.filters not matched',
      analysis(),
      pr,
      policy({
        autoApprove: {
          ...base.autoApprove,
          enabled: true,
          filters: [{ conditions: [{ field: 'label', operator: 'is', values: ['trivial'] }] }],
        },
      }),
      /autoApprove.filters/,
    ],
    [
      'review filters not matched',
      analysis(),
      pr,
      policy({ filters: [{ conditions: [{ field: 'author', operator: 'is', values: ['bob'] }] }] }),
      /review filters/,
    ],
    ['a degraded analysis', analysis({}, { degraded: true }), pr, policy(), /degraded/],
  ];
  test.each(cases)('%s refuses approval', (_name, a, p, pol, reason) => {
    const decision = autoApproval(a, p, pol);
    expect(decision.approve).toBe(false);
    expect((decision as { reasons: string[] }).reasons.join('; ')).toMatch(reason);
  });

  test('risk above maxRisk refuses; a higher maxRisk alone does not approve findings', () => {
    const medium = analysis({ verdict: 'needs-attention' });
    expect((autoApproval(medium, pr, policy()) as { reasons: string[] }).reasons.join(';')).toMatch(
      /risk medium is above autoApprove.maxRisk low/,
    );
    const p = policy({ autoApprove: { ...base.autoApprove, enabled: true, maxRisk: 'medium' } });
    expect((autoApproval(medium, pr, p) as { reasons?: string[] }).reasons ?? []).not.toContainEqual(
      expect.stringMatching(/risk/),
    );
  });
});
