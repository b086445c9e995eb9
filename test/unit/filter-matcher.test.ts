import { filterRuleListSchema, type FilterRule } from '../../src/policy/filters.schema.js';
import { globMatch, matchRules, type MatchResult, type PrFacts } from '../../src/policy/matcher.js';

type RawCondition = { field: string; operator: string; values?: string[] };

/** Rules go through the schema, as they would from a stored policy. */
function rules(...ruleConditions: RawCondition[][]): FilterRule[] {
  return filterRuleListSchema.parse(ruleConditions.map((conditions) => ({ conditions })));
}

function decide(condition: RawCondition, pr: PrFacts): MatchResult['decision'] {
  return matchRules(rules([condition]), pr).decision;
}

const FULL_PR: Required<PrFacts> = {
  labels: ['Bug', 'needs-review'],
  author: 'OctoCat',
  repository: 'Acme/Web',
  targetBranch: 'main',
  sourceBranch: 'feature/login/form',
  paths: ['src/app.ts', 'docs/guide/intro.md'],
  title: 'Fix login [WIP]',
  body: 'This closes #12. Do not merge yet.',
  draft: false,
  filesChanged: 12,
};

describe('matchRules: combining rules and conditions', () => {
  test('an empty rule list matches every PR, even one with no facts', () => {
    expect(matchRules([], FULL_PR)).toEqual({ decision: 'match' });
    expect(matchRules([], {})).toEqual({ decision: 'match' });
  });

  test('a rule matches only when all its conditions match', () => {
    const both = rules([
      { field: 'label', operator: 'is', values: ['bug'] },
      { field: 'author', operator: 'is', values: ['octocat'] },
    ]);
    expect(matchRules(both, FULL_PR)).toEqual({ decision: 'match' });
    expect(matchRules(both, { ...FULL_PR, author: 'hubot' })).toEqual({ decision: 'no_match' });
  });

  test('the list matches when any rule matches', () => {
    const either = rules(
      [{ field: 'label', operator: 'is', values: ['security'] }],
      [{ field: 'author', operator: 'is', values: ['octocat'] }],
    );
    expect(matchRules(either, FULL_PR)).toEqual({ decision: 'match' });
    expect(matchRules(either, { ...FULL_PR, author: 'hubot' })).toEqual({ decision: 'no_match' });
  });
});

describe('matchRules: each field and operator', () => {
  test.each<[string, RawCondition, PrFacts, MatchResult['decision']]>([
    // label: case-insensitive equality with any value
    ['label is (case-insensitive)', { field: 'label', operator: 'is', values: ['BUG'] }, FULL_PR, 'match'],
    [
      'label is, one of several',
      { field: 'label', operator: 'is', values: ['x', 'needs-review'] },
      FULL_PR,
      'match',
    ],
    ['label is, absent', { field: 'label', operator: 'is', values: ['bugfix'] }, FULL_PR, 'no_match'],
    ['label is, not a substring', { field: 'label', operator: 'is', values: ['needs'] }, FULL_PR, 'no_match'],
    ['label is, no labels', { field: 'label', operator: 'is', values: ['bug'] }, { labels: [] }, 'no_match'],
    [
      'label is_not, absent',
      { field: 'label', operator: 'is_not', values: ['wip', 'skip'] },
      FULL_PR,
      'match',
    ],
    [
      'label is_not, present',
      { field: 'label', operator: 'is_not', values: ['wip', 'bug'] },
      FULL_PR,
      'no_match',
    ],
    [
      'label is_not, no labels',
      { field: 'label', operator: 'is_not', values: ['wip'] },
      { labels: [] },
      'match',
    ],
    // author
    ['author is', { field: 'author', operator: 'is', values: ['hubot', 'octocat'] }, FULL_PR, 'match'],
    ['author is, other', { field: 'author', operator: 'is', values: ['hubot'] }, FULL_PR, 'no_match'],
    ['author is, prefix only', { field: 'author', operator: 'is', values: ['octo'] }, FULL_PR, 'no_match'],
    ['author is_not', { field: 'author', operator: 'is_not', values: ['dependabot[bot]'] }, FULL_PR, 'match'],
    [
      'author is_not, equal',
      { field: 'author', operator: 'is_not', values: ['OCTOCAT'] },
      FULL_PR,
      'no_match',
    ],
    // repository
    ['repository is', { field: 'repository', operator: 'is', values: ['acme/web'] }, FULL_PR, 'match'],
    [
      'repository is, other',
      { field: 'repository', operator: 'is', values: ['acme/api'] },
      FULL_PR,
      'no_match',
    ],
    [
      'repository is_not',
      { field: 'repository', operator: 'is_not', values: ['acme/api'] },
      FULL_PR,
      'match',
    ],
    [
      'repository is_not, equal',
      { field: 'repository', operator: 'is_not', values: ['ACME/WEB'] },
      FULL_PR,
      'no_match',
    ],
    // branches
    ['targetBranch is', { field: 'targetBranch', operator: 'is', values: ['main'] }, FULL_PR, 'match'],
    [
      'targetBranch is, case matters',
      { field: 'targetBranch', operator: 'is', values: ['Main'] },
      FULL_PR,
      'no_match',
    ],
    [
      'targetBranch is, glob',
      { field: 'targetBranch', operator: 'is', values: ['release/*'] },
      { targetBranch: 'release/1.2' },
      'match',
    ],
    [
      'targetBranch is_not',
      { field: 'targetBranch', operator: 'is_not', values: ['release/**'] },
      FULL_PR,
      'match',
    ],
    [
      'targetBranch is_not, matching',
      { field: 'targetBranch', operator: 'is_not', values: ['dev', 'ma?n'] },
      FULL_PR,
      'no_match',
    ],
    [
      'sourceBranch is, * stays in a segment',
      { field: 'sourceBranch', operator: 'is', values: ['feature/*'] },
      FULL_PR,
      'no_match',
    ],
    [
      'sourceBranch is, ** crosses segments',
      { field: 'sourceBranch', operator: 'is', values: ['feature/**'] },
      FULL_PR,
      'match',
    ],
    [
      'sourceBranch is_not',
      { field: 'sourceBranch', operator: 'is_not', values: ['dependabot/**'] },
      FULL_PR,
      'match',
    ],
    [
      'sourceBranch is_not, matching',
      { field: 'sourceBranch', operator: 'is_not', values: ['**/form'] },
      FULL_PR,
      'no_match',
    ],
    // path: any changed path matches any glob
    ['path is, one path matches', { field: 'path', operator: 'is', values: ['docs/**'] }, FULL_PR, 'match'],
    ['path is, exact', { field: 'path', operator: 'is', values: ['src/app.ts'] }, FULL_PR, 'match'],
    ['path is, none matches', { field: 'path', operator: 'is', values: ['*.md'] }, FULL_PR, 'no_match'],
    [
      'path is, ** in the middle',
      { field: 'path', operator: 'is', values: ['docs/**/*.md'] },
      FULL_PR,
      'match',
    ],
    [
      'path is, no changed paths',
      { field: 'path', operator: 'is', values: ['**'] },
      { paths: [] },
      'no_match',
    ],
    [
      'path is_not, no path matches',
      { field: 'path', operator: 'is_not', values: ['vendor/**', '*.lock'] },
      FULL_PR,
      'match',
    ],
    [
      'path is_not, one path matches',
      { field: 'path', operator: 'is_not', values: ['docs/**'] },
      FULL_PR,
      'no_match',
    ],
    [
      'path is_not, no changed paths',
      { field: 'path', operator: 'is_not', values: ['**'] },
      { paths: [] },
      'match',
    ],
    // title: case-insensitive substrings
    ['title contains', { field: 'title', operator: 'contains', values: ['[wip]'] }, FULL_PR, 'match'],
    [
      'title contains, any value',
      { field: 'title', operator: 'contains', values: ['nope', 'LOGIN'] },
      FULL_PR,
      'match',
    ],
    [
      'title contains, absent',
      { field: 'title', operator: 'contains', values: ['closes'] },
      FULL_PR,
      'no_match',
    ],
    [
      'title not_contains',
      { field: 'title', operator: 'not_contains', values: ['skip', 'draft'] },
      FULL_PR,
      'match',
    ],
    [
      'title not_contains, present',
      { field: 'title', operator: 'not_contains', values: ['skip', 'wip'] },
      FULL_PR,
      'no_match',
    ],
    // keyword: title or body
    [
      'keyword contains, in the body',
      { field: 'keyword', operator: 'contains', values: ['DO NOT MERGE'] },
      FULL_PR,
      'match',
    ],
    [
      'keyword contains, in the title',
      { field: 'keyword', operator: 'contains', values: ['fix login'] },
      FULL_PR,
      'match',
    ],
    [
      'keyword contains, neither',
      { field: 'keyword', operator: 'contains', values: ['refactor'] },
      FULL_PR,
      'no_match',
    ],
    [
      'keyword not_contains',
      { field: 'keyword', operator: 'not_contains', values: ['refactor'] },
      FULL_PR,
      'match',
    ],
    [
      'keyword not_contains, in the body',
      { field: 'keyword', operator: 'not_contains', values: ['#12'] },
      FULL_PR,
      'no_match',
    ],
    [
      'keyword, empty body is known',
      { field: 'keyword', operator: 'not_contains', values: ['x'] },
      { title: 'a', body: '' },
      'match',
    ],
    // draft
    ['draft is, draft', { field: 'draft', operator: 'is' }, { draft: true }, 'match'],
    ['draft is, ready', { field: 'draft', operator: 'is' }, { draft: false }, 'no_match'],
    ['draft is_not, ready', { field: 'draft', operator: 'is_not', values: [] }, { draft: false }, 'match'],
    ['draft is_not, draft', { field: 'draft', operator: 'is_not' }, { draft: true }, 'no_match'],
    // filesChanged
    [
      'filesChanged at_most, below',
      { field: 'filesChanged', operator: 'at_most', values: ['20'] },
      FULL_PR,
      'match',
    ],
    [
      'filesChanged at_most, equal',
      { field: 'filesChanged', operator: 'at_most', values: ['12'] },
      FULL_PR,
      'match',
    ],
    [
      'filesChanged at_most, above',
      { field: 'filesChanged', operator: 'at_most', values: ['11'] },
      FULL_PR,
      'no_match',
    ],
    [
      'filesChanged more_than, above',
      { field: 'filesChanged', operator: 'more_than', values: ['11'] },
      FULL_PR,
      'match',
    ],
    [
      'filesChanged more_than, equal',
      { field: 'filesChanged', operator: 'more_than', values: ['12'] },
      FULL_PR,
      'no_match',
    ],
    [
      'filesChanged at_most 0, zero',
      { field: 'filesChanged', operator: 'at_most', values: ['0'] },
      { filesChanged: 0 },
      'match',
    ],
    [
      'filesChanged leading zeros',
      { field: 'filesChanged', operator: 'more_than', values: ['007'] },
      { filesChanged: 8 },
      'match',
    ],
  ])('%s', (_name, condition, pr, decision) => {
    expect(decide(condition, pr)).toBe(decision);
  });
});

describe('matchRules: missing metadata defers, never denies', () => {
  test.each<[RawCondition, string[]]>([
    [{ field: 'label', operator: 'is', values: ['bug'] }, ['labels']],
    [{ field: 'label', operator: 'is_not', values: ['bug'] }, ['labels']],
    [{ field: 'author', operator: 'is', values: ['a'] }, ['author']],
    [{ field: 'repository', operator: 'is_not', values: ['a/b'] }, ['repository']],
    [{ field: 'targetBranch', operator: 'is', values: ['main'] }, ['targetBranch']],
    [{ field: 'sourceBranch', operator: 'is_not', values: ['x'] }, ['sourceBranch']],
    [{ field: 'path', operator: 'is', values: ['**'] }, ['paths']],
    [{ field: 'title', operator: 'contains', values: ['x'] }, ['title']],
    [{ field: 'keyword', operator: 'contains', values: ['x'] }, ['title', 'body']],
    [{ field: 'draft', operator: 'is' }, ['draft']],
    [{ field: 'filesChanged', operator: 'at_most', values: ['5'] }, ['filesChanged']],
  ])('%j with no facts is deferred on %j', (condition, missing) => {
    expect(matchRules(rules([condition]), {})).toEqual({ decision: 'deferred', missing });
  });

  test('null counts as missing, like undefined', () => {
    const pr: PrFacts = { labels: null, author: null, draft: null, filesChanged: null };
    expect(decide({ field: 'label', operator: 'is_not', values: ['x'] }, pr)).toBe('deferred');
    expect(decide({ field: 'author', operator: 'is_not', values: ['x'] }, pr)).toBe('deferred');
    expect(decide({ field: 'draft', operator: 'is_not' }, pr)).toBe('deferred');
    expect(decide({ field: 'filesChanged', operator: 'at_most', values: ['1'] }, pr)).toBe('deferred');
  });

  test('a failing condition decides the rule even when another one is unknown', () => {
    const rule = rules([
      { field: 'author', operator: 'is', values: ['octocat'] },
      { field: 'label', operator: 'is', values: ['bug'] },
    ]);
    expect(matchRules(rule, { author: 'hubot' })).toEqual({ decision: 'no_match' });
    expect(matchRules(rule, { author: 'octocat' })).toEqual({ decision: 'deferred', missing: ['labels'] });
    expect(matchRules(rule, { author: 'octocat', labels: ['BUG'] })).toEqual({ decision: 'match' });
  });

  test('a matching rule wins over a deferred one; deferred wins over no_match', () => {
    const list = rules(
      [{ field: 'filesChanged', operator: 'at_most', values: ['10'] }],
      [{ field: 'author', operator: 'is', values: ['octocat'] }],
    );
    expect(matchRules(list, { author: 'octocat' })).toEqual({ decision: 'match' });
    expect(matchRules(list, { author: 'hubot' })).toEqual({
      decision: 'deferred',
      missing: ['filesChanged'],
    });
    expect(matchRules(list, { author: 'hubot', filesChanged: 11 })).toEqual({ decision: 'no_match' });
  });

  test('missing names are collected from every deferred rule, once each', () => {
    const list = rules(
      [
        { field: 'draft', operator: 'is' },
        { field: 'path', operator: 'is', values: ['src/**'] },
      ],
      [
        { field: 'path', operator: 'is_not', values: ['docs/**'] },
        { field: 'label', operator: 'is', values: ['x'] },
      ],
    );
    expect(matchRules(list, {})).toEqual({ decision: 'deferred', missing: ['draft', 'paths', 'labels'] });
  });

  test('keyword: a value found in the known part decides; otherwise the missing part defers', () => {
    const contains = { field: 'keyword', operator: 'contains', values: ['hotfix'] };
    const notContains = { field: 'keyword', operator: 'not_contains', values: ['hotfix'] };
    expect(decide(contains, { title: 'Hotfix for login', body: null })).toBe('match');
    expect(decide(notContains, { title: 'Hotfix for login' })).toBe('no_match');
    expect(matchRules(rules([contains]), { title: 'Fix login', body: null })).toEqual({
      decision: 'deferred',
      missing: ['body'],
    });
    expect(matchRules(rules([notContains]), { body: 'nothing here' })).toEqual({
      decision: 'deferred',
      missing: ['title'],
    });
    expect(decide(notContains, { title: 'Fix login', body: '' })).toBe('match');
  });
});

describe('globMatch', () => {
  test.each<[string, string, boolean]>([
    ['main', 'main', true],
    ['main', 'main2', false],
    ['main', 'xmain', false],
    ['main', 'Main', false],
    ['release/*', 'release/1.0', true],
    ['release/*', 'release/', true],
    ['release/*', 'release/1.0/hotfix', false],
    ['release/*', 'release', false],
    ['*', 'main', true],
    ['*', 'feature/x', false],
    ['*.md', 'README.md', true],
    ['*.md', 'docs/README.md', false],
    ['feat-*-fix', 'feat-login-fix', true],
    ['feat-*-fix', 'feat-a/b-fix', false],
    ['v?.?', 'v1.2', true],
    ['v?.?', 'v1.22', false],
    ['a?b', 'a/b', false],
    ['**', '', true],
    ['**', 'a/b/c', true],
    ['**/*.md', 'README.md', true],
    ['**/*.md', 'docs/a/b/README.md', true],
    ['**/*.md', 'docs/README.mdx', false],
    ['docs/**', 'docs/a', true],
    ['docs/**', 'docs/a/b/c.md', true],
    ['docs/**', 'docs', false],
    ['docs/**', 'documentation/a', false],
    ['src/**/test/*.ts', 'src/test/a.ts', true],
    ['src/**/test/*.ts', 'src/x/y/test/a.ts', true],
    ['src/**/test/*.ts', 'src/x/test/sub/a.ts', false],
    ['src/**/test/*.ts', 'srcx/test/a.ts', false],
    ['a/**/**/b', 'a/b', true],
    ['a/**/**/b', 'a/x/y/z/b', true],
    ['a.b', 'axb', false],
    ['a b/@x', 'a b/@x', true],
    ['*', '', true],
  ])('%j vs %j -> %s', (glob, value, expected) => {
    expect(globMatch(glob, value)).toBe(expected);
  });

  test('no catastrophic backtracking', () => {
    const glob = `${'*a'.repeat(100)}*b`;
    const started = Date.now();
    expect(globMatch(glob, 'a'.repeat(400))).toBe(false);
    expect(globMatch(`**/${'*a'.repeat(50)}/**`, `${'a/'.repeat(200)}x`)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
