import {
  autoReviewDecision,
  baseBranchIncluded,
  configErrorFingerprint,
  reviewedBranches,
  DEFAULT_REPO_CONFIG,
  repoConfigSchema,
  resolveRepoConfig,
  type RepoConfig,
} from '../../src/repo-config/schema.js';

/** The spec's table plus Verdict's review switches (NAMES.md extensions) and one sample by default. */
const VERDICT_REVIEW = { incremental: true, hideOutdated: true, samples: 1 };
const SPEC_DEFAULTS = {
  enabled: true,
  review: { auto: true, onDraft: false, ...VERDICT_REVIEW },
  // No include list: reviewedBranches() gives main, dev and the repository's default branch.
  branches: { exclude: [] },
  manual: { enabled: true, allowAssociations: ['OWNER', 'MEMBER', 'COLLABORATOR'], allowUsers: [] },
};

function configOf(raw: unknown): RepoConfig {
  const result = resolveRepoConfig(raw);
  if (result.error !== null) throw new Error(`unexpected config error: ${result.error}`);
  return result.config;
}

describe('defaults (review-engine 2.7)', () => {
  test('DEFAULT_REPO_CONFIG is the spec table', () => {
    expect(DEFAULT_REPO_CONFIG).toEqual(SPEC_DEFAULTS);
  });

  test.each<[string, unknown]>([
    ['absent file (null)', null],
    ['undefined', undefined],
    ['empty file ({})', {}],
    ['empty sections', { review: {}, branches: {}, manual: {} }],
  ])('%s → defaults, no error', (_label, raw) => {
    expect(resolveRepoConfig(raw)).toEqual({ config: SPEC_DEFAULTS, error: null });
  });

  test('DEFAULT_REPO_CONFIG is frozen, and results are fresh copies', () => {
    expect(Object.isFrozen(DEFAULT_REPO_CONFIG.branches.exclude)).toBe(true);
    expect(Object.isFrozen(DEFAULT_REPO_CONFIG.manual)).toBe(true);
    const first = resolveRepoConfig(null).config;
    first.branches.exclude.push('feature');
    first.manual.enabled = false;
    const invalid = resolveRepoConfig({ bogus: 1 }).config;
    invalid.review.auto = false;
    expect(resolveRepoConfig(null).config).toEqual(SPEC_DEFAULTS);
    expect(resolveRepoConfig({ bogus: 1 }).config).toEqual(SPEC_DEFAULTS);
    expect(DEFAULT_REPO_CONFIG).toEqual(SPEC_DEFAULTS);
  });
});

describe('partial files merge with the defaults', () => {
  test.each<[string, unknown, unknown]>([
    ['enabled', { enabled: false }, { ...SPEC_DEFAULTS, enabled: false }],
    [
      'review.onDraft only',
      { review: { onDraft: true } },
      { ...SPEC_DEFAULTS, review: { auto: true, onDraft: true, ...VERDICT_REVIEW } },
    ],
    [
      'review.auto only',
      { review: { auto: false } },
      { ...SPEC_DEFAULTS, review: { auto: false, onDraft: false, ...VERDICT_REVIEW } },
    ],
    [
      'branches.include replaces the default list',
      { branches: { include: ['master'] } },
      { ...SPEC_DEFAULTS, branches: { include: ['master'], exclude: [] } },
    ],
    [
      'branches.exclude only keeps the default include',
      { branches: { exclude: ['dev'] } },
      { ...SPEC_DEFAULTS, branches: { exclude: ['dev'] } },
    ],
    [
      'manual.allowUsers only keeps the default associations',
      { manual: { allowUsers: ['octocat'] } },
      { ...SPEC_DEFAULTS, manual: { ...SPEC_DEFAULTS.manual, allowUsers: ['octocat'] } },
    ],
    [
      'allowAssociations are trimmed and upper-cased',
      { manual: { allowAssociations: ['member', ' Contributor '] } },
      { ...SPEC_DEFAULTS, manual: { ...SPEC_DEFAULTS.manual, allowAssociations: ['MEMBER', 'CONTRIBUTOR'] } },
    ],
    [
      'allowUsers lose a leading @ and surrounding spaces',
      { manual: { allowUsers: ['@Octocat', ' hubot '] } },
      { ...SPEC_DEFAULTS, manual: { ...SPEC_DEFAULTS.manual, allowUsers: ['Octocat', 'hubot'] } },
    ],
    [
      'a full file',
      {
        enabled: true,
        review: {
          auto: false,
          onDraft: true,
          incremental: false,
          hideOutdated: false,
          verification: { threshold: 80 },
          samples: 3,
        },
        branches: { include: ['release/*'], exclude: ['release/old'] },
        manual: { enabled: false, allowAssociations: ['OWNER'], allowUsers: ['a'] },
      },
      {
        enabled: true,
        review: {
          auto: false,
          onDraft: true,
          incremental: false,
          hideOutdated: false,
          verification: { threshold: 80 },
          samples: 3,
        },
        branches: { include: ['release/*'], exclude: ['release/old'] },
        manual: { enabled: false, allowAssociations: ['OWNER'], allowUsers: ['a'] },
      },
    ],
  ])('%s', (_label, raw, expected) => {
    expect(resolveRepoConfig(raw)).toEqual({ config: expected, error: null });
  });

  test('review.verification: false, true, or {enabled, threshold}; review.samples: 1 to 5', () => {
    expect(configOf({ review: { verification: false } }).review.verification).toBe(false);
    expect(configOf({ review: { verification: true } }).review.verification).toBe(true);
    expect(configOf({ review: { verification: { threshold: 90 } } }).review.verification).toEqual({
      threshold: 90,
    });
    expect(configOf({}).review.verification).toBeUndefined();
    expect(resolveRepoConfig({ review: { verification: { threshold: 101 } } }).error).toMatch(
      /^review\.verification/,
    );
    expect(resolveRepoConfig({ review: { verification: 'off' } }).error).toMatch(/^review\.verification/);
    expect(configOf({ review: { samples: 5 } }).review.samples).toBe(5);
    expect(resolveRepoConfig({ review: { samples: 6 } }).error).toMatch(/^review\.samples: /);
    expect(resolveRepoConfig({ review: { samples: 0 } }).error).toMatch(/^review\.samples: /);
    expect(resolveRepoConfig({ review: { samples: 2.5 } }).error).toMatch(/^review\.samples: /);
  });

  test("validation.commands: the repository's own checks, each an argv (absent: none)", () => {
    expect(configOf({}).validation).toBeUndefined();
    expect(
      configOf({ validation: { commands: [{ check: 'test', run: ['make', 'test'] }] } }).validation,
    ).toEqual({
      commands: [{ check: 'test', run: ['make', 'test'] }],
    });
    expect(resolveRepoConfig({ validation: { commands: [{ check: 'deploy', run: ['x'] }] } }).error).toMatch(
      /validation\.commands\[0\]\.check/,
    );
    expect(
      resolveRepoConfig({ validation: { commands: [{ check: 'test', run: 'make test' }] } }).error,
    ).toMatch(/validation\.commands\[0\]\.run/);
  });

  test('the schema itself applies the nested defaults', () => {
    expect(repoConfigSchema.parse({ manual: { enabled: false } }).manual).toEqual({
      enabled: false,
      allowAssociations: ['OWNER', 'MEMBER', 'COLLABORATOR'],
      allowUsers: [],
    });
  });
});

describe('invalid files: defaults plus an error naming the dotted path', () => {
  test.each<[string, unknown, string[]]>([
    ['wrong type', { review: { auto: 'sometimes' } }, ['review.auto: expected true or false', '"sometimes"']],
    ['quoted boolean', { enabled: 'false' }, ['enabled: expected true or false', 'without quotes']],
    [
      'number for a boolean',
      { manual: { enabled: 1 } },
      ['manual.enabled: expected true or false', 'number 1'],
    ],
    [
      'unknown root key',
      { reviews: {} },
      ['reviews: unknown key', 'allowed: enabled, review, branches, manual, validation'],
    ],
    ['unknown nested key', { branches: { include: ['main'], only: ['x'] } }, ['branches.only: unknown key']],
    ['unknown key in manual', { manual: { users: ['a'] } }, ['manual.users: unknown key']],
    [
      'misspelt key gets a suggestion',
      { review: { on_draft: true } },
      ['review.on_draft: unknown key', 'onDraft'],
    ],
    ['wrong case gets a suggestion', { manual: { allowusers: [] } }, ['manual.allowusers', 'allowUsers']],
    [
      'a single string where a list is expected',
      { branches: { include: 'main' } },
      ['branches.include: expected a list', 'the string "main"', '[main]'],
    ],
    [
      'a single string for allowUsers',
      { manual: { allowUsers: 'me' } },
      ['manual.allowUsers: expected a list'],
    ],
    [
      'a non-string list entry',
      { branches: { exclude: ['main', 7] } },
      ['branches.exclude[1]: expected a string'],
    ],
    ['an empty branch name', { branches: { include: [''] } }, ['branches.include[0]: must not be empty']],
    ['an empty login', { manual: { allowUsers: ['@'] } }, ['manual.allowUsers[0]: must not be empty']],
    [
      'an unknown association',
      { manual: { allowAssociations: ['OWNER', 'maintainer'] } },
      ['manual.allowAssociations[1]', '"maintainer" is not a GitHub author association', 'COLLABORATOR'],
    ],
    ['a key without a value', { review: null }, ['review: expected a mapping', 'without a value']],
    ['a list as the whole file', ['main'], ['(root): expected a mapping', 'a list']],
    ['a number as the whole file', 42, ['(root): expected a mapping']],
  ])('%s', (_label, raw, fragments) => {
    const result = resolveRepoConfig(raw);
    expect(result.config).toEqual(SPEC_DEFAULTS);
    expect(typeof result.error).toBe('string');
    for (const fragment of fragments) expect(result.error).toContain(fragment);
  });

  test('one bad key invalidates the whole file (the valid parts are not applied)', () => {
    const result = resolveRepoConfig({ enabled: false, review: { auto: 'no' } });
    expect(result.config.enabled).toBe(true);
    expect(result.error).toContain('review.auto');
  });

  test('every problem is listed, separated by "; "', () => {
    const error = resolveRepoConfig({
      reviews: {},
      branches: { include: 'main' },
      review: { auto: 1 },
    }).error;
    expect(error).toContain('reviews: unknown key');
    expect(error).toContain('branches.include: expected a list');
    expect(error).toContain('review.auto: expected true or false');
    expect(error?.split('; ')).toHaveLength(3);
  });

  test('at most ten problems are listed, then a count', () => {
    const raw = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, i]));
    const error = resolveRepoConfig(raw).error ?? '';
    expect(error.split('; ')).toHaveLength(11);
    expect(error.endsWith('and 2 more')).toBe(true);
  });

  test('the message is deterministic for the same file', () => {
    const raw = { reviews: {}, branches: { include: 'main' } };
    expect(resolveRepoConfig(raw).error).toBe(resolveRepoConfig(structuredClone(raw)).error);
  });
});

describe('baseBranchIncluded', () => {
  const globs = configOf({
    branches: { include: ['main', 'release/*', 'hotfix/**'], exclude: ['release/old'] },
  });

  test.each<[string, RepoConfig, string, boolean]>([
    ['default main', DEFAULT_REPO_CONFIG, 'main', true],
    ['default dev', DEFAULT_REPO_CONFIG, 'dev', true],
    ['default master', DEFAULT_REPO_CONFIG, 'master', false],
    ['default feature', DEFAULT_REPO_CONFIG, 'feature/x', false],
    ['exact match is case-sensitive', DEFAULT_REPO_CONFIG, 'Main', false],
    ['no prefix matching', DEFAULT_REPO_CONFIG, 'main2', false],
    ['no suffix matching', DEFAULT_REPO_CONFIG, 'my-main', false],
    ['refs/heads/ prefix is the same branch', DEFAULT_REPO_CONFIG, 'refs/heads/main', true],
    ['empty ref', DEFAULT_REPO_CONFIG, '', false],
    ['glob * within a segment', globs, 'release/1.2', true],
    ['glob * not across /', globs, 'release/a/b', false],
    ['glob * needs the prefix', globs, 'releases/1.2', false],
    ['glob ** across /', globs, 'hotfix/a/b', true],
    ['exclude wins over include', globs, 'release/old', false],
    ['exact include next to globs', globs, 'main', true],
    ['. in a pattern is literal', configOf({ branches: { include: ['v1.0'] } }), 'v1x0', false],
    ['literal . matches itself', configOf({ branches: { include: ['v1.0'] } }), 'v1.0', true],
    ['empty include lists nothing', configOf({ branches: { include: [] } }), 'main', false],
    ['exclude only removes from the defaults', configOf({ branches: { exclude: ['dev'] } }), 'dev', false],
    [
      '* alone matches any single-segment branch',
      configOf({ branches: { include: ['*'] } }),
      'feature',
      true,
    ],
  ])('%s: %s', (_label, config, baseRef, expected) => {
    expect(baseBranchIncluded(reviewedBranches(config), baseRef)).toBe(expected);
  });
});

describe('reviewedBranches (NAMES.md: the default branch is reviewed)', () => {
  const included = (raw: unknown, opts: Parameters<typeof reviewedBranches>[1], base: string) =>
    baseBranchIncluded(reviewedBranches(configOf(raw), opts), base);

  test('without an include list: main, dev and the repository default branch', () => {
    expect(reviewedBranches(DEFAULT_REPO_CONFIG, { defaultBranch: 'master' })).toEqual({
      include: ['main', 'dev', 'master'],
      exclude: [],
      source: 'default',
    });
    expect(reviewedBranches(DEFAULT_REPO_CONFIG, { defaultBranch: 'main' }).include).toEqual(['main', 'dev']);
    expect(reviewedBranches(DEFAULT_REPO_CONFIG, { defaultBranch: null }).include).toEqual(['main', 'dev']);
    expect(included({}, { defaultBranch: 'trunk' }, 'trunk')).toBe(true);
    expect(included({}, { defaultBranch: 'trunk' }, 'master')).toBe(false);
  });

  test('an explicit include in the file replaces the default entirely', () => {
    expect(included({ branches: { include: ['release/*'] } }, { defaultBranch: 'master' }, 'master')).toBe(
      false,
    );
    expect(included({ branches: { include: ['release/*'] } }, { defaultBranch: 'master' }, 'main')).toBe(
      false,
    );
    expect(
      reviewedBranches(configOf({ branches: { include: ['release/*'] } }), { defaultBranch: 'master' }),
    ).toEqual({ include: ['release/*'], exclude: [], source: 'file' });
  });

  test("the operator configuration's lists win over the file's", () => {
    const file = { branches: { include: ['main'], exclude: ['dev'] } };
    expect(reviewedBranches(configOf(file), { operator: { include: ['master'] } })).toEqual({
      include: ['master'],
      exclude: ['dev'],
      source: 'operator',
    });
    expect(included(file, { operator: { include: ['master'] } }, 'master')).toBe(true);
    expect(included(file, { operator: { include: ['master'] } }, 'main')).toBe(false);
    // An operator exclude alone keeps the file's include.
    expect(reviewedBranches(configOf(file), { operator: { exclude: [] } })).toEqual({
      include: ['main'],
      exclude: [],
      source: 'file',
    });
    // Malformed stored values are ignored, not trusted.
    expect(reviewedBranches(configOf({}), { operator: { include: 'master' } }).source).toBe('default');
  });
});

describe('autoReviewDecision', () => {
  test.each<[string, unknown, { baseRef: string; draft: boolean; defaultBranch?: string }, string]>([
    ['repository disabled', { enabled: false }, { baseRef: 'main', draft: false }, 'repository disabled'],
    [
      'review.auto false',
      { review: { auto: false } },
      { baseRef: 'main', draft: false },
      'review.auto is false',
    ],
    [
      'base not listed',
      {},
      { baseRef: 'feature', draft: false },
      '"feature" is not listed in branches.include',
    ],
    [
      'base excluded',
      { branches: { exclude: ['dev'] } },
      { baseRef: 'dev', draft: false },
      '"dev" is excluded by branches.exclude',
    ],
    ['draft without onDraft', {}, { baseRef: 'main', draft: true }, 'review.onDraft is false'],
    // order: enabled, then review.auto, then base, then draft
    [
      'disabled wins over everything',
      { enabled: false, review: { auto: false } },
      { baseRef: 'x', draft: true },
      'repository disabled',
    ],
    [
      'auto wins over base and draft',
      { review: { auto: false } },
      { baseRef: 'x', draft: true },
      'review.auto',
    ],
    ['base wins over draft', {}, { baseRef: 'x', draft: true }, 'branches.include'],
    [
      'an explicit include drops the default branch',
      { branches: { include: ['main'] } },
      { baseRef: 'master', draft: false, defaultBranch: 'master' },
      '"master" is not listed in branches.include (main)',
    ],
  ])('%s → auto_review_disabled', (_label, raw, pr, detail) => {
    const decision = autoReviewDecision(configOf(raw), pr);
    expect(decision).toEqual({
      ok: false,
      reason: 'auto_review_disabled',
      detail: expect.any(String),
      hint: expect.any(String),
    });
    if (!decision.ok) {
      expect(decision.detail).toContain(detail);
      // What to change, for the neutral check run the refusal completes (NAMES.md).
      expect(decision.hint).toMatch(/verdict\.yml|operator configuration/);
    }
  });

  test.each<[string, unknown, { baseRef: string; draft: boolean; defaultBranch?: string }]>([
    ['defaults on main', {}, { baseRef: 'main', draft: false }],
    ['defaults on dev', {}, { baseRef: 'dev', draft: false }],
    ['draft with review.onDraft', { review: { onDraft: true } }, { baseRef: 'main', draft: true }],
    ['custom include', { branches: { include: ['master'] } }, { baseRef: 'master', draft: false }],
    ['the default branch', {}, { baseRef: 'master', draft: false, defaultBranch: 'master' }],
    [
      'manual commands off does not stop auto review',
      { manual: { enabled: false } },
      { baseRef: 'main', draft: false },
    ],
  ])('%s → ok', (_label, raw, pr) => {
    expect(autoReviewDecision(configOf(raw), pr)).toEqual({ ok: true });
  });
});

describe('configErrorFingerprint', () => {
  test('16 hex characters of the SHA-256 of the message', () => {
    // sha256('a') = ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb
    expect(configErrorFingerprint('a')).toBe('ca978112ca1bbdca');
  });

  test('stable per message, different for different messages', () => {
    const error = resolveRepoConfig({ reviews: {} }).error ?? '';
    expect(configErrorFingerprint(error)).toBe(
      configErrorFingerprint(resolveRepoConfig({ reviews: {} }).error ?? ''),
    );
    expect(configErrorFingerprint(error)).not.toBe(
      configErrorFingerprint(resolveRepoConfig({ review: 1 }).error ?? ''),
    );
    expect(configErrorFingerprint(error)).toMatch(/^[0-9a-f]{16}$/);
  });
});
