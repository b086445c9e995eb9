import {
  filterConditionSchema,
  filterRuleListSchema,
  globProblem,
  type FilterRule,
} from '../../src/policy/filters.schema.js';
import { validatePolicyDocument } from '../../src/policy/merge.js';
import {
  DEFAULT_REVIEW_POLICY,
  defaultReviewPolicy,
  POLICY_MAX_BODY_BYTES,
  reviewPolicySchema,
} from '../../src/policy/policy.schema.js';

/** The path of the first problem, or 'ok'. */
function pathOf(doc: unknown): string {
  const result = validatePolicyDocument(doc);
  return result.ok ? 'ok' : result.path;
}

function oneCondition(condition: Record<string, unknown>): { filters: unknown[] } {
  return { filters: [{ conditions: [condition] }] };
}

/** A document whose one filter rule has one condition with these string values. */
function one(field: string, operator: string, ...values: string[]): { filters: unknown[] } {
  return oneCondition({ field, operator, values });
}

const CONDITION_0 = 'settings.filters.0.conditions.0';
const VALUES = `${CONDITION_0}.values`;
const VALUES_0 = `${VALUES}.0`;

describe('review policy document: defaults (operator-api 2.9)', () => {
  test('parse({}) gives the whole default document', () => {
    expect(reviewPolicySchema.parse({})).toEqual({
      autoEnableNewRepos: false,
      autoReviewNewCommits: true,
      reviewDrafts: false,
      fileChangeLimit: 500,
      filters: [],
      customInstructions: '',
      strictness: 'low',
      commentHeader: '',
      updatePrDescription: false,
      promptToFix: false,
      featureTips: false,
      summary: {
        summary: { enabled: true, collapsible: false, defaultOpen: true },
        confidence: { enabled: true, collapsible: false, defaultOpen: true },
        files: { enabled: true, collapsible: false, defaultOpen: true },
        diagram: { enabled: true, collapsible: false, defaultOpen: true },
        outsideDiff: { enabled: true, collapsible: true, defaultOpen: false },
      },
      statusChecks: { enabled: true, requiredConfidence: 0, postStatusComments: false },
      autoApprove: { enabled: false, maxRisk: 'low', instructions: '', filters: [] },
      execution: { mode: 'always', filters: [] },
      memoryRuleCreation: 'ADMINS_ONLY',
      pausedAuthors: [],
      monthlyModelBudgetUsd: null,
    });
  });

  test('DEFAULT_REVIEW_POLICY is the parsed default, frozen; defaultReviewPolicy() is a fresh copy', () => {
    expect(DEFAULT_REVIEW_POLICY).toEqual(reviewPolicySchema.parse({}));
    expect(Object.isFrozen(DEFAULT_REVIEW_POLICY)).toBe(true);
    expect(Object.isFrozen(DEFAULT_REVIEW_POLICY.summary.outsideDiff)).toBe(true);
    expect(Object.isFrozen(DEFAULT_REVIEW_POLICY.filters)).toBe(true);
    const copy = defaultReviewPolicy();
    copy.filters.push({ conditions: [{ field: 'draft', operator: 'is', values: [] }] });
    copy.summary.files.enabled = false;
    expect(defaultReviewPolicy().filters).toEqual([]);
    expect(defaultReviewPolicy().summary.files.enabled).toBe(true);
    expect(DEFAULT_REVIEW_POLICY.filters).toEqual([]);
  });

  test('a partial nested object keeps the defaults of its siblings', () => {
    const policy = reviewPolicySchema.parse({
      summary: { outsideDiff: { defaultOpen: true } },
      statusChecks: { requiredConfidence: 3 },
    });
    expect(policy.summary.outsideDiff).toEqual({ enabled: true, collapsible: true, defaultOpen: true });
    expect(policy.summary.summary).toEqual({ enabled: true, collapsible: false, defaultOpen: true });
    expect(policy.statusChecks).toEqual({ enabled: true, requiredConfidence: 3, postStatusComments: false });
  });

  test('a full valid document round-trips unchanged', () => {
    const doc = {
      ...defaultReviewPolicy(),
      autoEnableNewRepos: true,
      fileChangeLimit: 100000,
      strictness: 'high',
      customInstructions: 'Be kind.\n\tUse tabs\r\n',
      commentHeader: 'Reviewed by Verdict',
      autoApprove: {
        enabled: true,
        maxRisk: 'critical',
        instructions: 'only docs',
        filters: [{ conditions: [{ field: 'path', operator: 'is', values: ['docs/**'] }] }],
      },
      execution: {
        mode: 'filters',
        filters: [{ conditions: [{ field: 'draft', operator: 'is_not', values: [] }] }],
      },
      memoryRuleCreation: 'EVERYONE',
      pausedAuthors: ['octocat', 'dependabot[bot]'],
      monthlyModelBudgetUsd: 12.5,
    };
    expect(validatePolicyDocument(doc)).toEqual({ ok: true, policy: doc });
  });

  test('the PATCH body limit is 256 KiB', () => {
    expect(POLICY_MAX_BODY_BYTES).toBe(262144);
  });
});

describe('review policy document: validation names the dotted path', () => {
  test.each<[string, unknown, string]>([
    ['unknown top-level key', { autoReview: true }, 'settings.autoReview'],
    ['unknown key in summary', { summary: { header: {} } }, 'settings.summary.header'],
    ['unknown key in a section', { summary: { files: { open: true } } }, 'settings.summary.files.open'],
    ['unknown key in statusChecks', { statusChecks: { name: 'x' } }, 'settings.statusChecks.name'],
    ['unknown key in autoApprove', { autoApprove: { risk: 'low' } }, 'settings.autoApprove.risk'],
    ['unknown key in execution', { execution: { provider: 'e2b' } }, 'settings.execution.provider'],
    ['revision is not part of the document', { revision: 3 }, 'settings.revision'],
    ['string boolean', { autoEnableNewRepos: 'true' }, 'settings.autoEnableNewRepos'],
    ['number boolean', { reviewDrafts: 1 }, 'settings.reviewDrafts'],
    ['null boolean', { featureTips: null }, 'settings.featureTips'],
    ['nested string boolean', { statusChecks: { enabled: 'false' } }, 'settings.statusChecks.enabled'],
    [
      'section boolean',
      { summary: { diagram: { collapsible: 'yes' } } },
      'settings.summary.diagram.collapsible',
    ],
    ['fileChangeLimit 0', { fileChangeLimit: 0 }, 'settings.fileChangeLimit'],
    ['fileChangeLimit 100001', { fileChangeLimit: 100001 }, 'settings.fileChangeLimit'],
    ['fileChangeLimit fraction', { fileChangeLimit: 10.5 }, 'settings.fileChangeLimit'],
    ['fileChangeLimit string', { fileChangeLimit: '500' }, 'settings.fileChangeLimit'],
    ['fileChangeLimit unsafe integer', { fileChangeLimit: 2 ** 60 }, 'settings.fileChangeLimit'],
    [
      'requiredConfidence 6',
      { statusChecks: { requiredConfidence: 6 } },
      'settings.statusChecks.requiredConfidence',
    ],
    [
      'requiredConfidence -1',
      { statusChecks: { requiredConfidence: -1 } },
      'settings.statusChecks.requiredConfidence',
    ],
    [
      'requiredConfidence 2.5',
      { statusChecks: { requiredConfidence: 2.5 } },
      'settings.statusChecks.requiredConfidence',
    ],
    ['strictness', { strictness: 'extreme' }, 'settings.strictness'],
    ['maxRisk', { autoApprove: { maxRisk: 'none' } }, 'settings.autoApprove.maxRisk'],
    ['execution.mode', { execution: { mode: 'sometimes' } }, 'settings.execution.mode'],
    ['memoryRuleCreation', { memoryRuleCreation: 'admins_only' }, 'settings.memoryRuleCreation'],
    ['budget negative', { monthlyModelBudgetUsd: -1 }, 'settings.monthlyModelBudgetUsd'],
    ['budget over 1e9', { monthlyModelBudgetUsd: 1e9 + 1 }, 'settings.monthlyModelBudgetUsd'],
    ['budget string', { monthlyModelBudgetUsd: '10' }, 'settings.monthlyModelBudgetUsd'],
    ['budget NaN', { monthlyModelBudgetUsd: NaN }, 'settings.monthlyModelBudgetUsd'],
    ['budget Infinity', { monthlyModelBudgetUsd: Infinity }, 'settings.monthlyModelBudgetUsd'],
    ['customInstructions too long', { customInstructions: 'x'.repeat(20001) }, 'settings.customInstructions'],
    ['customInstructions not a string', { customInstructions: 5 }, 'settings.customInstructions'],
    [
      'autoApprove.instructions too long',
      { autoApprove: { instructions: 'x'.repeat(20001) } },
      'settings.autoApprove.instructions',
    ],
    ['commentHeader too long', { commentHeader: 'x'.repeat(501) }, 'settings.commentHeader'],
    [
      'pausedAuthors over 500',
      { pausedAuthors: Array.from({ length: 501 }, (_, i) => `u${i}`) },
      'settings.pausedAuthors',
    ],
    ['pausedAuthors not a list', { pausedAuthors: 'octocat' }, 'settings.pausedAuthors'],
    ['pausedAuthors empty entry', { pausedAuthors: ['a', '  '] }, 'settings.pausedAuthors.1'],
    ['pausedAuthors non-string entry', { pausedAuthors: [7] }, 'settings.pausedAuthors.0'],
    ['summary not an object', { summary: true }, 'settings.summary'],
    ['document not an object', 'policy', 'settings'],
    ['document is a list', [], 'settings'],
  ])('%s', (_name, doc, path) => {
    expect(pathOf(doc)).toBe(path);
  });

  test('the message starts with "Unknown or invalid field: <path>"', () => {
    const result = validatePolicyDocument({ statusChecks: { requiredConfidence: 9 } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.path).toBe('settings.statusChecks.requiredConfidence');
    expect(
      result.message.startsWith('Unknown or invalid field: settings.statusChecks.requiredConfidence'),
    ).toBe(true);
  });

  test('an unknown key is named itself, not its parent', () => {
    const result = validatePolicyDocument({ statusChecks: { enabled: true, color: 'red' } });
    expect(result).toEqual({
      ok: false,
      path: 'settings.statusChecks.color',
      message: 'Unknown or invalid field: settings.statusChecks.color: unknown field',
    });
  });

  test('limits are inclusive at their edges', () => {
    expect(pathOf({ fileChangeLimit: 1 })).toBe('ok');
    expect(pathOf({ fileChangeLimit: 100000 })).toBe('ok');
    expect(pathOf({ statusChecks: { requiredConfidence: 5 } })).toBe('ok');
    expect(pathOf({ monthlyModelBudgetUsd: 0 })).toBe('ok');
    expect(pathOf({ monthlyModelBudgetUsd: 1e9 })).toBe('ok');
    expect(pathOf({ monthlyModelBudgetUsd: null })).toBe('ok');
    expect(pathOf({ customInstructions: 'x'.repeat(20000) })).toBe('ok');
    expect(pathOf({ autoApprove: { instructions: 'x'.repeat(20000) } })).toBe('ok');
    expect(pathOf({ commentHeader: 'x'.repeat(500) })).toBe('ok');
    expect(pathOf({ pausedAuthors: Array.from({ length: 500 }, (_, i) => `u${i}`) })).toBe('ok');
  });

  test('pausedAuthors are lowercased and deduplicated', () => {
    const policy = reviewPolicySchema.parse({ pausedAuthors: ['OctoCat', 'octocat', ' Hubot ', 'hubot'] });
    expect(policy.pausedAuthors).toEqual(['octocat', 'hubot']);
  });
});

describe('control characters are rejected in every string', () => {
  const control = ['\u0000', '\u0001', '\u0008', '\u000b', '\u000c', '\u001f', '\u007f'];

  test.each(control.map((c) => [JSON.stringify(c), c]))('%s', (_name, c) => {
    expect(pathOf({ customInstructions: `a${c}b` })).toBe('settings.customInstructions');
    expect(pathOf({ commentHeader: `a${c}` })).toBe('settings.commentHeader');
    expect(pathOf({ autoApprove: { instructions: c } })).toBe('settings.autoApprove.instructions');
    expect(pathOf({ pausedAuthors: ['ok', `bad${c}`] })).toBe('settings.pausedAuthors.1');
    expect(pathOf(one('label', 'is', `bug${c}`))).toBe(VALUES_0);
    expect(pathOf(one('title', 'contains', `${c}`))).toBe(VALUES_0);
    expect(
      pathOf({
        autoApprove: {
          filters: [{ conditions: [{ field: 'author', operator: 'is', values: ['x', `y${c}`] }] }],
        },
      }),
    ).toBe('settings.autoApprove.filters.0.conditions.0.values.1');
    expect(
      pathOf({
        execution: {
          filters: [{ conditions: [{ field: 'keyword', operator: 'contains', values: [`k${c}`] }] }],
        },
      }),
    ).toBe('settings.execution.filters.0.conditions.0.values.0');
  });

  test('tab, newline and carriage return are allowed', () => {
    expect(pathOf({ customInstructions: 'a\tb\nc\r\n', commentHeader: 'h\n' })).toBe('ok');
    expect(pathOf(one('keyword', 'contains', 'a\tb'))).toBe('ok');
  });

  test('an unknown key with control characters is named printably', () => {
    const result = validatePolicyDocument({ 'a\u0000b': 1 });
    expect(result).toMatchObject({ ok: false, path: 'settings.a\\u0000b' });
  });
});

describe('filter rules (operator-api 2.10)', () => {
  test('every field with each of its operators is accepted', () => {
    const rules: unknown[] = [
      { conditions: [{ field: 'label', operator: 'is', values: ['bug', 'needs review'] }] },
      { conditions: [{ field: 'label', operator: 'is_not', values: ['wip'] }] },
      { conditions: [{ field: 'author', operator: 'is', values: ['octocat', 'dependabot[bot]'] }] },
      {
        conditions: [{ field: 'repository', operator: 'is_not', values: ['acme/web', 'my-org/repo.name_2'] }],
      },
      { conditions: [{ field: 'targetBranch', operator: 'is', values: ['main', 'release/*'] }] },
      { conditions: [{ field: 'sourceBranch', operator: 'is_not', values: ['dependabot/**'] }] },
      {
        conditions: [{ field: 'path', operator: 'is', values: ['**', 'src/**/*.ts', 'a b/c@d?.md', '-x_y'] }],
      },
      { conditions: [{ field: 'title', operator: 'contains', values: ['[skip]'] }] },
      { conditions: [{ field: 'keyword', operator: 'not_contains', values: ['do not review'] }] },
      { conditions: [{ field: 'draft', operator: 'is' }] },
      { conditions: [{ field: 'draft', operator: 'is_not', values: [] }] },
      { conditions: [{ field: 'filesChanged', operator: 'at_most', values: ['0'] }] },
      { conditions: [{ field: 'filesChanged', operator: 'more_than', values: ['100000'] }] },
    ];
    const parsed = filterRuleListSchema.safeParse(rules);
    expect(parsed.success).toBe(true);
    // A draft condition without values parses with an empty list.
    expect((parsed.data as FilterRule[])[9]).toEqual({
      conditions: [{ field: 'draft', operator: 'is', values: [] }],
    });
  });

  test.each<[string, unknown, string]>([
    [
      'unknown key in a rule',
      { filters: [{ conditions: [{ field: 'draft', operator: 'is' }], name: 'x' }] },
      'settings.filters.0.name',
    ],
    [
      'unknown key in a condition',
      oneCondition({ field: 'label', operator: 'is', values: ['a'], negate: true }),
      `${CONDITION_0}.negate`,
    ],
    ['rule not an object', { filters: ['label:bug'] }, 'settings.filters.0'],
    ['filters not a list', { filters: {} }, 'settings.filters'],
    ['rule without conditions', { filters: [{}] }, 'settings.filters.0.conditions'],
    ['rule with no condition', { filters: [{ conditions: [] }] }, 'settings.filters.0.conditions'],
    [
      'rule with 21 conditions',
      { filters: [{ conditions: Array.from({ length: 21 }, () => ({ field: 'draft', operator: 'is' })) }] },
      'settings.filters.0.conditions',
    ],
    [
      '51 rules',
      { filters: Array.from({ length: 51 }, () => ({ conditions: [{ field: 'draft', operator: 'is' }] })) },
      'settings.filters',
    ],
    ['51 values', one('label', 'is', ...Array.from({ length: 51 }, (_, i) => `l${i}`)), VALUES],
    ['no values', oneCondition({ field: 'label', operator: 'is', values: [] }), VALUES],
    ['values missing', oneCondition({ field: 'author', operator: 'is' }), VALUES],
    ['empty value', one('label', 'is', ''), VALUES_0],
    ['501-char value', one('title', 'contains', 'x'.repeat(501)), VALUES_0],
    ['non-string value', oneCondition({ field: 'label', operator: 'is', values: [5] }), VALUES_0],
    ['unknown field', one('milestone', 'is', 'v1'), `${CONDITION_0}.field`],
    ['missing field', oneCondition({ operator: 'is', values: ['v1'] }), `${CONDITION_0}.field`],
    ['contains on label', one('label', 'contains', 'a'), `${CONDITION_0}.operator`],
    ['is on title', one('title', 'is', 'a'), `${CONDITION_0}.operator`],
    ['at_most on path', one('path', 'at_most', '1'), `${CONDITION_0}.operator`],
    ['is on filesChanged', one('filesChanged', 'is', '1'), `${CONDITION_0}.operator`],
    ['contains on draft', oneCondition({ field: 'draft', operator: 'contains' }), `${CONDITION_0}.operator`],
    ['missing operator', oneCondition({ field: 'draft' }), `${CONDITION_0}.operator`],
    ['draft with a value', one('draft', 'is', 'true'), VALUES],
    ['draft with null values', oneCondition({ field: 'draft', operator: 'is', values: null }), VALUES],
    ['filesChanged two values', one('filesChanged', 'at_most', '1', '2'), VALUES],
    [
      'filesChanged no value',
      oneCondition({ field: 'filesChanged', operator: 'at_most', values: [] }),
      VALUES,
    ],
    [
      'filesChanged number',
      oneCondition({ field: 'filesChanged', operator: 'at_most', values: [10] }),
      VALUES_0,
    ],
    ['filesChanged 100001', one('filesChanged', 'more_than', '100001'), VALUES_0],
    ['filesChanged negative', one('filesChanged', 'more_than', '-1'), VALUES_0],
    ['filesChanged fraction', one('filesChanged', 'more_than', '1.5'), VALUES_0],
    ['filesChanged exponent', one('filesChanged', 'more_than', '1e3'), VALUES_0],
    ['filesChanged huge', one('filesChanged', 'more_than', '9'.repeat(30)), VALUES_0],
    ['repository without owner', one('repository', 'is', 'web'), VALUES_0],
    ['repository with 3 parts', one('repository', 'is', 'a/b/c'), VALUES_0],
    ['repository with a space', one('repository', 'is', 'acme/my repo'), VALUES_0],
    ['repository ..', one('repository', 'is', 'acme/..'), VALUES_0],
    [
      'second value of a later rule',
      {
        filters: [
          { conditions: [{ field: 'draft', operator: 'is' }] },
          {
            conditions: [
              { field: 'draft', operator: 'is' },
              { field: 'path', operator: 'is', values: ['ok', 'a//b'] },
            ],
          },
        ],
      },
      'settings.filters.1.conditions.1.values.1',
    ],
    [
      'autoApprove.filters use the same grammar',
      {
        autoApprove: { filters: [{ conditions: [{ field: 'label', operator: 'contains', values: ['a'] }] }] },
      },
      'settings.autoApprove.filters.0.conditions.0.operator',
    ],
    [
      'execution.filters use the same grammar',
      {
        execution: {
          filters: [{ conditions: [{ field: 'sourceBranch', operator: 'is', values: ['../x'] }] }],
        },
      },
      'settings.execution.filters.0.conditions.0.values.0',
    ],
  ])('%s', (_name, doc, path) => {
    expect(pathOf(doc)).toBe(path);
  });

  test('limits are inclusive at their edges', () => {
    const rule = (conditions: unknown[]) => ({ conditions });
    const draft = { field: 'draft', operator: 'is' };
    expect(pathOf({ filters: Array.from({ length: 50 }, () => rule([draft])) })).toBe('ok');
    expect(pathOf({ filters: [rule(Array.from({ length: 20 }, () => draft))] })).toBe('ok');
    expect(pathOf(one('label', 'is', ...Array.from({ length: 50 }, (_, i) => `l${i}`)))).toBe('ok');
    expect(pathOf(one('label', 'is', 'x'.repeat(500)))).toBe('ok');
    expect(pathOf(one('label', 'is', 'x'))).toBe('ok');
  });
});

describe('safe globs', () => {
  test.each([
    'main',
    'release/*',
    'feature/**',
    '**',
    '**/*.md',
    'src/**/test/*.ts',
    'a b/c@d',
    'v1.2.3',
    '-_.@?*',
    'file?.txt',
    '.github/workflows/*.yml',
    '..hidden',
    'a/.../b',
  ])('accepts %j', (glob) => {
    expect(globProblem(glob)).toBeNull();
    expect(filterConditionSchema.safeParse({ field: 'path', operator: 'is', values: [glob] }).success).toBe(
      true,
    );
  });

  test.each([
    ['a//b', 'empty segment'],
    ['/a', 'empty segment'],
    ['a/', 'empty segment'],
    ['/', 'empty segment'],
    ['./a', "'.' or '..'"],
    ['a/./b', "'.' or '..'"],
    ['../a', "'.' or '..'"],
    ['a/..', "'.' or '..'"],
    ['a**', "'**'"],
    ['**b', "'**'"],
    ['a/**b', "'**'"],
    ['a**/b', "'**'"],
    ['***', "'**'"],
    ['a/***/b', "'**'"],
    ['a\\b', 'may only contain'],
    ['a[bc]', 'may only contain'],
    ['{a,b}', 'may only contain'],
    ['a+b', 'may only contain'],
    ['a:b', 'may only contain'],
    ['~/x', 'may only contain'],
    ['a\tb', 'may only contain'],
    ['é', 'may only contain'],
  ])('rejects %j (%s)', (glob, reason) => {
    expect(globProblem(glob)).toContain(reason);
    for (const field of ['targetBranch', 'sourceBranch', 'path']) {
      expect(pathOf(oneCondition({ field, operator: 'is_not', values: [glob] }))).toBe(VALUES_0);
    }
  });

  test('labels, authors and titles are not globs', () => {
    expect(pathOf(oneCondition({ field: 'label', operator: 'is', values: ['a//b [x] é'] }))).toBe('ok');
    expect(pathOf(one('title', 'contains', '../'))).toBe('ok');
  });
});
