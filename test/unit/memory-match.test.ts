import {
  clusterSuppresses,
  contextApplies,
  knowledgeApplies,
  linkedIssueNumbers,
  MAX_LINKED_ISSUES,
} from '../../src/memory/match.js';

describe('which memory applies to a pull request', () => {
  test('a context: no globs is every path; else a glob matching a changed path', () => {
    expect(contextApplies([], ['anything'])).toBe(true);
    expect(contextApplies([], [])).toBe(true);
    expect(contextApplies(['src/**'], ['docs/a.md', 'src/x/y.ts'])).toBe(true);
    expect(contextApplies(['src/*.ts'], ['src/x/y.ts'])).toBe(false);
    expect(contextApplies(['**/*.sql', 'db/**'], ['migrations/001.sql'])).toBe(true);
  });

  test('a knowledge document: the root, the same file, or a directory above it', () => {
    expect(knowledgeApplies('/', ['x'])).toBe(true);
    expect(knowledgeApplies('src/api', ['src/api/users.ts'])).toBe(true);
    expect(knowledgeApplies('src/api', ['src/api/v2/users.ts'])).toBe(true);
    expect(knowledgeApplies('src/api', ['src/apiary.ts', 'src/ap'])).toBe(false);
    expect(knowledgeApplies('README.md', ['README.md'])).toBe(true);
    expect(knowledgeApplies('README.md', ['docs/README.md'])).toBe(false);
  });

  test('a cluster suppresses: action suppress, or two dismissals without 👍 unless keep', () => {
    const c = (action: 'none' | 'suppress' | 'keep', up: number, dismissed: number) =>
      clusterSuppresses({ action, feedback: { up, dismissed } });
    expect(c('suppress', 5, 0)).toBe(true);
    expect(c('none', 0, 2)).toBe(true);
    expect(c('none', 0, 1)).toBe(false);
    expect(c('none', 1, 7)).toBe(false);
    expect(c('keep', 0, 9)).toBe(false);
  });
});

describe('linked issues of a pull request body', () => {
  const REPO = 'acme/api';
  test('closing keywords, bare references, same-repository long forms; in order, once, not itself', () => {
    const body = [
      'Fixes #12 and closes acme/api#3.',
      'Resolves: #12 (again). See also #40,#41; related to https://github.com/acme/api/issues/7',
      'and https://github.com/Acme/API/pull/8#issuecomment-1.',
      'This is #99 itself.',
    ].join('\n');
    expect(linkedIssueNumbers(body, REPO, 99)).toEqual([12, 3, 40, 41, 7, 8]);
  });

  test('other repositories, glued references, HTML entities and code are not references', () => {
    const body = [
      'Upstream: other/api#5, https://github.com/other/api/issues/6, acme/apis#9.',
      'Not refs: abc#10, &#11; path/#13, C##14',
      'Code: `#15` and',
      '```',
      'const x = "#16";',
      '```',
      '#17 starts a line',
    ].join('\n');
    expect(linkedIssueNumbers(body, REPO, null)).toEqual([17]);
  });

  test(`at most ${MAX_LINKED_ISSUES}, the first ones; none in an empty body`, () => {
    const body = Array.from({ length: 15 }, (_, i) => `#${i + 1}`).join(' ');
    expect(linkedIssueNumbers(body, REPO, null)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(linkedIssueNumbers('', REPO, 1)).toEqual([]);
    expect(linkedIssueNumbers('#0 is not an issue', REPO, 1)).toEqual([]);
  });
});
