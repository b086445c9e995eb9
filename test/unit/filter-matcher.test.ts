import { filterRuleListSchema, type FilterRule } from '../../src/policy/filters.schema.js';
import {
  globMatch,
  globMatcher,
  matchRules,
  type MatchResult,
  type PrFacts,
} from '../../src/policy/matcher.js';

type RawCondition = { field: string; operator: string; values?: string[] };

/** Rules go through the schema, as they would from a stored policy. */
function rules(...ruleConditions: RawCondition[][]): FilterRule[] {
  return filterRuleListSchema.parse(ruleConditions.map((conditions) => ({ conditions })));
}

/** A condition with its values: `c('label', 'is', 'bug')`; none given, no `values` key. */
function c(field: string, operator: string, ...values: string[]): RawCondition {
  return values.length > 0 ? { field, operator, values } : { field, operator };
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
    const both = rules([c('label', 'is', 'bug'), c('author', 'is', 'octocat')]);
    expect(matchRules(both, FULL_PR)).toEqual({ decision: 'match' });
    expect(matchRules(both, { ...FULL_PR, author: 'hubot' })).toEqual({ decision: 'no_match' });
  });

  test('the list matches when any rule matches', () => {
    const either = rules([c('label', 'is', 'security')], [c('author', 'is', 'octocat')]);
    expect(matchRules(either, FULL_PR)).toEqual({ decision: 'match' });
    expect(matchRules(either, { ...FULL_PR, author: 'hubot' })).toEqual({ decision: 'no_match' });
  });
});

describe('matchRules: each field and operator', () => {
  test.each<[string, RawCondition, PrFacts, MatchResult['decision']]>([
    // label: case-insensitive equality with any value
    ['label is (case-insensitive)', c('label', 'is', 'BUG'), FULL_PR, 'match'],
    ['label is, one of several', c('label', 'is', 'x', 'needs-review'), FULL_PR, 'match'],
    ['label is, absent', c('label', 'is', 'bugfix'), FULL_PR, 'no_match'],
    ['label is, not a substring', c('label', 'is', 'needs'), FULL_PR, 'no_match'],
    ['label is, no labels', c('label', 'is', 'bug'), { labels: [] }, 'no_match'],
    ['label is_not, absent', c('label', 'is_not', 'wip', 'skip'), FULL_PR, 'match'],
    ['label is_not, present', c('label', 'is_not', 'wip', 'bug'), FULL_PR, 'no_match'],
    ['label is_not, no labels', c('label', 'is_not', 'wip'), { labels: [] }, 'match'],
    // author
    ['author is', c('author', 'is', 'hubot', 'octocat'), FULL_PR, 'match'],
    ['author is, other', c('author', 'is', 'hubot'), FULL_PR, 'no_match'],
    ['author is, prefix only', c('author', 'is', 'octo'), FULL_PR, 'no_match'],
    ['author is_not', c('author', 'is_not', 'dependabot[bot]'), FULL_PR, 'match'],
    ['author is_not, equal', c('author', 'is_not', 'OCTOCAT'), FULL_PR, 'no_match'],
    // repository
    ['repository is', c('repository', 'is', 'acme/web'), FULL_PR, 'match'],
    ['repository is, other', c('repository', 'is', 'acme/api'), FULL_PR, 'no_match'],
    ['repository is_not', c('repository', 'is_not', 'acme/api'), FULL_PR, 'match'],
    ['repository is_not, equal', c('repository', 'is_not', 'ACME/WEB'), FULL_PR, 'no_match'],
    // branches
    ['targetBranch is', c('targetBranch', 'is', 'main'), FULL_PR, 'match'],
    ['targetBranch is, case matters', c('targetBranch', 'is', 'Main'), FULL_PR, 'no_match'],
    ['targetBranch is, glob', c('targetBranch', 'is', 'release/*'), { targetBranch: 'release/1.2' }, 'match'],
    ['targetBranch is_not', c('targetBranch', 'is_not', 'release/**'), FULL_PR, 'match'],
    ['targetBranch is_not, matching', c('targetBranch', 'is_not', 'dev', 'ma?n'), FULL_PR, 'no_match'],
    ['sourceBranch is, * stays in a segment', c('sourceBranch', 'is', 'feature/*'), FULL_PR, 'no_match'],
    ['sourceBranch is, ** crosses segments', c('sourceBranch', 'is', 'feature/**'), FULL_PR, 'match'],
    ['sourceBranch is_not', c('sourceBranch', 'is_not', 'dependabot/**'), FULL_PR, 'match'],
    ['sourceBranch is_not, matching', c('sourceBranch', 'is_not', '**/form'), FULL_PR, 'no_match'],
    // path: any changed path matches any glob
    ['path is, one path matches', c('path', 'is', 'docs/**'), FULL_PR, 'match'],
    ['path is, exact', c('path', 'is', 'src/app.ts'), FULL_PR, 'match'],
    ['path is, none matches', c('path', 'is', '*.md'), FULL_PR, 'no_match'],
    ['path is, ** in the middle', c('path', 'is', 'docs/**/*.md'), FULL_PR, 'match'],
    ['path is, no changed paths', c('path', 'is', '**'), { paths: [] }, 'no_match'],
    ['path is_not, no path matches', c('path', 'is_not', 'vendor/**', '*.lock'), FULL_PR, 'match'],
    ['path is_not, one path matches', c('path', 'is_not', 'docs/**'), FULL_PR, 'no_match'],
    ['path is_not, no changed paths', c('path', 'is_not', '**'), { paths: [] }, 'match'],
    // title: case-insensitive substrings
    ['title contains', c('title', 'contains', '[wip]'), FULL_PR, 'match'],
    ['title contains, any value', c('title', 'contains', 'nope', 'LOGIN'), FULL_PR, 'match'],
    ['title contains, absent', c('title', 'contains', 'closes'), FULL_PR, 'no_match'],
    ['title not_contains', c('title', 'not_contains', 'skip', 'draft'), FULL_PR, 'match'],
    ['title not_contains, present', c('title', 'not_contains', 'skip', 'wip'), FULL_PR, 'no_match'],
    // keyword: title or body
    ['keyword contains, in the body', c('keyword', 'contains', 'DO NOT MERGE'), FULL_PR, 'match'],
    ['keyword contains, in the title', c('keyword', 'contains', 'fix login'), FULL_PR, 'match'],
    ['keyword contains, neither', c('keyword', 'contains', 'refactor'), FULL_PR, 'no_match'],
    ['keyword not_contains', c('keyword', 'not_contains', 'refactor'), FULL_PR, 'match'],
    ['keyword not_contains, in the body', c('keyword', 'not_contains', '#12'), FULL_PR, 'no_match'],
    ['keyword, empty body is known', c('keyword', 'not_contains', 'x'), { title: 'a', body: '' }, 'match'],
    // draft
    ['draft is, draft', c('draft', 'is'), { draft: true }, 'match'],
    ['draft is, ready', c('draft', 'is'), { draft: false }, 'no_match'],
    ['draft is_not, ready', { field: 'draft', operator: 'is_not', values: [] }, { draft: false }, 'match'],
    ['draft is_not, draft', c('draft', 'is_not'), { draft: true }, 'no_match'],
    // filesChanged
    ['filesChanged at_most, below', c('filesChanged', 'at_most', '20'), FULL_PR, 'match'],
    ['filesChanged at_most, equal', c('filesChanged', 'at_most', '12'), FULL_PR, 'match'],
    ['filesChanged at_most, above', c('filesChanged', 'at_most', '11'), FULL_PR, 'no_match'],
    ['filesChanged more_than, above', c('filesChanged', 'more_than', '11'), FULL_PR, 'match'],
    ['filesChanged more_than, equal', c('filesChanged', 'more_than', '12'), FULL_PR, 'no_match'],
    ['filesChanged at_most 0, zero', c('filesChanged', 'at_most', '0'), { filesChanged: 0 }, 'match'],
    ['filesChanged leading zeros', c('filesChanged', 'more_than', '007'), { filesChanged: 8 }, 'match'],
  ])('%s', (_name, condition, pr, decision) => {
    expect(decide(condition, pr)).toBe(decision);
  });
});

describe('matchRules: missing metadata defers, never denies', () => {
  test.each<[RawCondition, string[]]>([
    [c('label', 'is', 'bug'), ['labels']],
    [c('label', 'is_not', 'bug'), ['labels']],
    [c('author', 'is', 'a'), ['author']],
    [c('repository', 'is_not', 'a/b'), ['repository']],
    [c('targetBranch', 'is', 'main'), ['targetBranch']],
    [c('sourceBranch', 'is_not', 'x'), ['sourceBranch']],
    [c('path', 'is', '**'), ['paths']],
    [c('title', 'contains', 'x'), ['title']],
    [c('keyword', 'contains', 'x'), ['title', 'body']],
    [c('draft', 'is'), ['draft']],
    [c('filesChanged', 'at_most', '5'), ['filesChanged']],
  ])('%j with no facts is deferred on %j', (condition, missing) => {
    expect(matchRules(rules([condition]), {})).toEqual({ decision: 'deferred', missing });
  });

  test('null counts as missing, like undefined', () => {
    const pr: PrFacts = { labels: null, author: null, draft: null, filesChanged: null };
    expect(decide(c('label', 'is_not', 'x'), pr)).toBe('deferred');
    expect(decide(c('author', 'is_not', 'x'), pr)).toBe('deferred');
    expect(decide(c('draft', 'is_not'), pr)).toBe('deferred');
    expect(decide(c('filesChanged', 'at_most', '1'), pr)).toBe('deferred');
  });

  test('a failing condition decides the rule even when another one is unknown', () => {
    const rule = rules([c('author', 'is', 'octocat'), c('label', 'is', 'bug')]);
    expect(matchRules(rule, { author: 'hubot' })).toEqual({ decision: 'no_match' });
    expect(matchRules(rule, { author: 'octocat' })).toEqual({ decision: 'deferred', missing: ['labels'] });
    expect(matchRules(rule, { author: 'octocat', labels: ['BUG'] })).toEqual({ decision: 'match' });
  });

  test('a matching rule wins over a deferred one; deferred wins over no_match', () => {
    const list = rules([c('filesChanged', 'at_most', '10')], [c('author', 'is', 'octocat')]);
    expect(matchRules(list, { author: 'octocat' })).toEqual({ decision: 'match' });
    expect(matchRules(list, { author: 'hubot' })).toEqual({
      decision: 'deferred',
      missing: ['filesChanged'],
    });
    expect(matchRules(list, { author: 'hubot', filesChanged: 11 })).toEqual({ decision: 'no_match' });
  });

  test('missing names are collected from every deferred rule, once each', () => {
    const list = rules(
      [c('draft', 'is'), c('path', 'is', 'src/**')],
      [c('path', 'is_not', 'docs/**'), c('label', 'is', 'x')],
    );
    expect(matchRules(list, {})).toEqual({ decision: 'deferred', missing: ['draft', 'paths', 'labels'] });
  });

  test('keyword: a value found in the known part decides; otherwise the missing part defers', () => {
    const contains = c('keyword', 'contains', 'hotfix');
    const notContains = c('keyword', 'not_contains', 'hotfix');
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
    // The compiled matcher (its literal prefix and runs checked first) answers the same.
    expect(globMatcher(glob)(value)).toBe(expected);
  });

  test('no catastrophic backtracking', () => {
    const glob = `${'*a'.repeat(100)}*b`;
    const started = Date.now();
    expect(globMatch(glob, 'a'.repeat(400))).toBe(false);
    expect(globMatch(`**/${'*a'.repeat(50)}/**`, `${'a/'.repeat(200)}x`)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
