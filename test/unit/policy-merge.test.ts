import {
  mergeDeep,
  mergePolicy,
  sanitizeStoredPolicy,
  type PolicyValidation,
} from '../../src/policy/merge.js';
import { defaultReviewPolicy, type ReviewPolicy } from '../../src/policy/policy.schema.js';

function merged(stored: unknown, patch: unknown): ReviewPolicy {
  const result = mergePolicy(stored, patch);
  if (!result.ok) throw new Error(`expected ok, got ${result.message}`);
  return result.policy;
}

function failure(result: PolicyValidation): { path: string; message: string } {
  if (result.ok) throw new Error('expected a failure');
  return { path: result.path, message: result.message };
}

const labelRule = (label: string) => ({
  conditions: [{ field: 'label' as const, operator: 'is' as const, values: [label] }],
});

describe('mergePolicy: missing -> stored -> default', () => {
  test('nothing stored and an empty patch gives the defaults', () => {
    expect(merged(null, {})).toEqual(defaultReviewPolicy());
    expect(merged(undefined, {})).toEqual(defaultReviewPolicy());
  });

  test('a key missing from the patch keeps the stored value; missing from both takes the default', () => {
    const stored = { reviewDrafts: true, strictness: 'high', statusChecks: { requiredConfidence: 4 } };
    const policy = merged(stored, { fileChangeLimit: 42, statusChecks: { postStatusComments: true } });
    expect(policy.reviewDrafts).toBe(true);
    expect(policy.strictness).toBe('high');
    expect(policy.fileChangeLimit).toBe(42);
    expect(policy.statusChecks).toEqual({ enabled: true, requiredConfidence: 4, postStatusComments: true });
    expect(policy.autoReviewNewCommits).toBe(true);
    expect(policy.summary.outsideDiff).toEqual({ enabled: true, collapsible: true, defaultOpen: false });
  });

  test('nested objects merge at every level', () => {
    const stored = {
      summary: { files: { enabled: false, collapsible: true }, outsideDiff: { defaultOpen: true } },
    };
    const policy = merged(stored, { summary: { files: { defaultOpen: false } } });
    expect(policy.summary.files).toEqual({ enabled: false, collapsible: true, defaultOpen: false });
    expect(policy.summary.outsideDiff).toEqual({ enabled: true, collapsible: true, defaultOpen: true });
    expect(policy.summary.diagram).toEqual({ enabled: true, collapsible: false, defaultOpen: true });
  });

  test('the patch value wins over the stored one, false and 0 included', () => {
    const stored = {
      ...defaultReviewPolicy(),
      autoReviewNewCommits: true,
      statusChecks: { requiredConfidence: 3 },
    };
    const policy = merged(stored, { autoReviewNewCommits: false, statusChecks: { requiredConfidence: 0 } });
    expect(policy.autoReviewNewCommits).toBe(false);
    expect(policy.statusChecks.requiredConfidence).toBe(0);
  });

  test('null clears the budget; a missing budget keeps the stored one', () => {
    expect(merged({ monthlyModelBudgetUsd: 25 }, {}).monthlyModelBudgetUsd).toBe(25);
    expect(
      merged({ monthlyModelBudgetUsd: 25 }, { monthlyModelBudgetUsd: null }).monthlyModelBudgetUsd,
    ).toBeNull();
    expect(merged(null, { monthlyModelBudgetUsd: 0.5 }).monthlyModelBudgetUsd).toBe(0.5);
  });

  test('arrays are replaced whole, not concatenated or merged by index', () => {
    const stored = {
      filters: [labelRule('a'), labelRule('b')],
      autoApprove: { enabled: true, filters: [labelRule('docs')] },
      execution: { mode: 'filters', filters: [labelRule('x')] },
      pausedAuthors: ['alice', 'bob'],
    };
    const policy = merged(stored, {
      filters: [labelRule('c')],
      autoApprove: { filters: [] },
      execution: { filters: [labelRule('y'), labelRule('z')] },
      pausedAuthors: ['carol'],
    });
    expect(policy.filters).toEqual([labelRule('c')]);
    expect(policy.autoApprove).toEqual({ enabled: true, maxRisk: 'low', instructions: '', filters: [] });
    expect(policy.execution).toEqual({ mode: 'filters', filters: [labelRule('y'), labelRule('z')] });
    expect(policy.pausedAuthors).toEqual(['carol']);
  });

  test('arrays missing from the patch keep the stored ones', () => {
    const policy = merged({ filters: [labelRule('a')], pausedAuthors: ['alice'] }, { reviewDrafts: true });
    expect(policy.filters).toEqual([labelRule('a')]);
    expect(policy.pausedAuthors).toEqual(['alice']);
  });

  test('pausedAuthors are lowercased and deduplicated', () => {
    expect(merged(null, { pausedAuthors: ['Alice', 'ALICE', 'bob', 'Bob', 'alice '] }).pausedAuthors).toEqual(
      ['alice', 'bob'],
    );
  });

  test('the result shares nothing with its inputs', () => {
    const patch = { filters: [labelRule('a')], pausedAuthors: ['x'] };
    const policy = merged(null, patch);
    policy.filters.push(labelRule('b'));
    policy.pausedAuthors.push('y');
    expect(patch.filters).toHaveLength(1);
    expect(patch.pausedAuthors).toEqual(['x']);
  });

  test('a saved JSON string is read as the document', () => {
    expect(merged(JSON.stringify({ reviewDrafts: true }), {}).reviewDrafts).toBe(true);
  });
});

describe('mergePolicy: the patch is validated strictly', () => {
  test.each<[string, unknown, string]>([
    ['unknown top-level field', { colour: 'red' }, 'settings.colour'],
    [
      'unknown nested field',
      { statusChecks: { requiredConfidense: 3 } },
      'settings.statusChecks.requiredConfidense',
    ],
    ['unknown section', { summary: { footer: { enabled: true } } }, 'settings.summary.footer'],
    [
      'invalid nested value',
      { statusChecks: { requiredConfidence: 6 } },
      'settings.statusChecks.requiredConfidence',
    ],
    ['string boolean', { reviewDrafts: 'true' }, 'settings.reviewDrafts'],
    ['object replaced by null', { statusChecks: null }, 'settings.statusChecks'],
    ['object replaced by a list', { autoApprove: [] }, 'settings.autoApprove'],
    ['invalid filter value', { filters: [labelRule('')] }, 'settings.filters.0.conditions.0.values.0'],
    [
      'pausedAuthors over 500',
      { pausedAuthors: Array.from({ length: 501 }, (_, i) => `u${i}`) },
      'settings.pausedAuthors',
    ],
  ])('%s', (_name, patch, path) => {
    const result = failure(mergePolicy({ reviewDrafts: true }, patch));
    expect(result.path).toBe(path);
    expect(result.message.startsWith(`Unknown or invalid field: ${path}`)).toBe(true);
  });

  test('the full message of an out-of-range value', () => {
    const result = failure(mergePolicy(null, { statusChecks: { requiredConfidence: 6 } }));
    expect(result.message).toMatch(
      /^Unknown or invalid field: settings\.statusChecks\.requiredConfidence: .+/,
    );
  });

  test('a patch that is not an object fails at settings', () => {
    for (const patch of [null, undefined, [], 'x', 3]) {
      expect(failure(mergePolicy(null, patch)).path).toBe('settings');
    }
  });

  test('a __proto__ key is rejected, not swallowed', () => {
    const patch = JSON.parse('{"__proto__": {"reviewDrafts": true}}') as unknown;
    expect(failure(mergePolicy(null, patch)).path).toBe('settings.__proto__');
    expect(({} as Record<string, unknown>).reviewDrafts).toBeUndefined();
    const nested = JSON.parse('{"statusChecks": {"__proto__": {"enabled": false}}}') as unknown;
    expect(failure(mergePolicy(null, nested)).path).toBe('settings.statusChecks.__proto__');
  });

  test('a key that exists only in the stored document is not an error of the patch', () => {
    const result = mergePolicy({ legacyField: 1, reviewDrafts: true }, { featureTips: true });
    expect(result.ok).toBe(true);
  });
});

describe('an invalid stored document does not make every patch fail', () => {
  test('invalid and unknown stored fields fall back to their defaults; valid ones are kept', () => {
    const stored = {
      reviewDrafts: 'yes',
      strictness: 'medium',
      oldShapeFlag: true,
      'summary.files.enabled': false,
      summary: { files: { enabled: false, open: true }, diagram: 'off' },
      statusChecks: { requiredConfidence: 9, postStatusComments: true },
      pausedAuthors: ['ok', 5],
      monthlyModelBudgetUsd: -3,
    };
    const { policy, dropped } = sanitizeStoredPolicy(stored);
    expect(policy.reviewDrafts).toBe(false);
    expect(policy.strictness).toBe('medium');
    expect(policy.summary.files).toEqual({ enabled: false, collapsible: false, defaultOpen: true });
    expect(policy.summary.diagram).toEqual({ enabled: true, collapsible: false, defaultOpen: true });
    expect(policy.statusChecks).toEqual({ enabled: true, requiredConfidence: 0, postStatusComments: true });
    expect(policy.pausedAuthors).toEqual([]);
    expect(policy.monthlyModelBudgetUsd).toBeNull();
    expect(dropped.sort()).toEqual(
      [
        'settings.reviewDrafts',
        'settings.oldShapeFlag',
        'settings.summary.files.enabled',
        'settings.summary.files.open',
        'settings.summary.diagram',
        'settings.statusChecks.requiredConfidence',
        'settings.pausedAuthors',
        'settings.monthlyModelBudgetUsd',
      ].sort(),
    );
    // 'settings.summary.files.enabled' above is the flat top-level key; the nested (valid) one is kept.
    expect(policy.summary.files.enabled).toBe(false);
  });

  test('a patch over an invalid stored document succeeds and keeps the valid stored parts', () => {
    const stored = {
      reviewDrafts: 'yes',
      strictness: 'high',
      filters: [{ conditions: [{ field: 'nope' }] }],
    };
    const policy = merged(stored, { commentHeader: 'hello' });
    expect(policy.commentHeader).toBe('hello');
    expect(policy.strictness).toBe('high');
    expect(policy.reviewDrafts).toBe(false);
    expect(policy.filters).toEqual([]);
  });

  test('a stored filter list with one bad rule is dropped whole', () => {
    const { policy, dropped } = sanitizeStoredPolicy({
      filters: [labelRule('good'), labelRule('bad\u0000')],
    });
    expect(policy.filters).toEqual([]);
    expect(dropped).toEqual(['settings.filters']);
  });

  test('auto approval is switched off when its stored filter list is dropped', () => {
    const { policy } = sanitizeStoredPolicy({ autoApprove: { enabled: true, filters: [{ bad: 1 }] } });
    expect(policy.autoApprove.enabled).toBe(false);
    expect(policy.autoApprove.filters).toEqual([]);
    const kept = sanitizeStoredPolicy({ autoApprove: { enabled: true, filters: [labelRule('docs')] } });
    expect(kept.policy.autoApprove.enabled).toBe(true);
    expect(kept.dropped).toEqual([]);
  });

  test('a stored document that is not an object gives the defaults', () => {
    for (const stored of ['not json', '[1]', 42, [1, 2], true]) {
      expect(sanitizeStoredPolicy(stored).policy).toEqual(defaultReviewPolicy());
      expect(merged(stored, { reviewDrafts: true }).reviewDrafts).toBe(true);
    }
  });

  test('a valid stored document is kept as is', () => {
    const stored = { ...defaultReviewPolicy(), reviewDrafts: true, filters: [labelRule('a')] };
    expect(sanitizeStoredPolicy(stored)).toEqual({ policy: stored, dropped: [] });
  });
});

describe('mergeDeep', () => {
  test('objects merge; arrays, scalars and null replace; undefined is missing', () => {
    expect(mergeDeep({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: null, e: undefined })).toEqual({
      a: { b: 1, c: [3] },
      d: null,
    });
    expect(mergeDeep({ a: [1] }, { a: { x: 1 } })).toEqual({ a: { x: 1 } });
    expect(mergeDeep({ a: { x: 1 } }, { a: 'flat' })).toEqual({ a: 'flat' });
  });
});
