import nock from 'nock';
import { ProbotOctokit } from 'probot';
import { ManualClock } from '../../src/clock.js';
import type { GitHubClient } from '../../src/github/client.js';
import { MAX_GIVEN_ISSUES, MAX_ISSUE_BYTES } from '../../src/review/linked-issues.js';
import { MEMORY_TOKENS, memoryItemText, selectReviewMemory } from '../../src/review/memory.js';
import { tokensOf } from '../../src/review/context.js';
import { MAX_REVIEW_CONTEXTS } from '../../src/store/memory.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

/**
 * `selectReviewMemory`, what the review's gather stage and the preview both call, on a real store
 * (SQLite) with GitHub's issues API through nock: the caps and budgets leave items out in the
 * documented order and count them.
 */
const API = 'https://api.github.com';
const REPO = 'acme/web';
const TARGET = { repo: REPO, owner: 'acme', name: 'web', number: 7, body: '', paths: ['src/a.ts'] };

describe('selectReviewMemory', () => {
  let t: TestStore;
  let clock: ManualClock;
  const gh = new ProbotOctokit({
    auth: { token: 'ghs_test' },
    throttle: { enabled: false },
    retry: { enabled: false },
  }) as unknown as GitHubClient;

  beforeAll(() => nock.disableNetConnect());
  afterAll(() => nock.enableNetConnect());
  beforeEach(async () => {
    clock = new ManualClock();
    t = await openTestStore('sqlite', clock);
  });
  afterEach(async () => {
    nock.cleanAll();
    await t.cleanup();
  });

  const context = (id: string, over: Record<string, unknown> = {}) => {
    clock.advance(1);
    return t.store.memory.createContext({
      id,
      repo: REPO,
      paths: [],
      title: `Rule ${id}`,
      body: 'Short rule.',
      createdBy: 't',
      ...over,
    });
  };

  test('a repository without memory and a body without links: nothing, and GitHub is not asked', async () => {
    await context('other', { repo: 'acme/other' });
    await context('off', { enabled: false });
    await context('docs', { paths: ['docs/**'] });
    await t.store.memory.putKnowledge({ repo: REPO, path: 'docs', body: 'Docs.' }, 't');
    expect(await selectReviewMemory({ store: t.store, gh }, TARGET)).toEqual({
      items: [],
      issues: [],
      leftOut: { contexts: 0, knowledge: 0, linkedIssues: 0 },
      skippedIssues: [],
    });
  });

  test('the order: path-specific before every-path, the repository before the workspace, the newest first; then knowledge', async () => {
    await context('ws', { repo: null });
    await context('ws-glob', { repo: null, paths: ['src/*.ts'] });
    await context('repo-old');
    await context('repo-new');
    await context('glob', { paths: ['src/**'] });
    await t.store.memory.putKnowledge({ repo: REPO, path: '/', body: 'Overview.' }, 't');
    await t.store.memory.putKnowledge({ repo: REPO, path: 'src', body: 'Short note.' }, 't');
    const memory = await selectReviewMemory({ store: t.store, gh }, TARGET);
    expect(memory.items.map((i) => i.id)).toEqual([
      'glob',
      'repo-new',
      'repo-old',
      'ws-glob',
      'ws',
      'knowledge:src',
      'knowledge:/',
    ]);
    expect(memory.leftOut).toEqual({ contexts: 0, knowledge: 0, linkedIssues: 0 });
  });

  test('over the token budget: items in order while they fit, the rest left out and counted', async () => {
    const long = 'Every cache write goes through the store first, then the cache. '.repeat(62).slice(0, 4000);
    await context('ws', { repo: null });
    for (let i = 0; i < 12; i++) await context(`r${String(i).padStart(2, '0')}`, { body: long });
    await context('glob', { paths: ['src/**'], body: long });
    await t.store.memory.putKnowledge({ repo: REPO, path: 'src', body: 'Short note.' }, 't');
    const order = [
      'glob',
      ...Array.from({ length: 12 }, (_, i) => `r${String(11 - i).padStart(2, '0')}`),
      'ws',
      'knowledge:src',
    ];
    const memory = await selectReviewMemory({ store: t.store, gh }, TARGET);
    const given = memory.items.map((i) => i.id);
    const used = memory.items.reduce((n, i) => n + tokensOf(memoryItemText(i)) + 1, 0);
    expect(used).toBeLessThanOrEqual(MEMORY_TOKENS);
    // About 800 tokens each: some fit; what is given is the start of the order. The short workspace
    // context and knowledge document would fit the room left, but never displace what comes before them.
    expect(given.length).toBeGreaterThan(5);
    expect(given.length).toBeLessThan(13);
    expect(given).toEqual(order.slice(0, given.length));
    expect(memory.leftOut).toEqual({ contexts: 14 - given.length, knowledge: 1, linkedIssues: 0 });
  });

  test(`more than ${MAX_REVIEW_CONTEXTS} matching contexts: the first ${MAX_REVIEW_CONTEXTS} in order, the rest counted`, async () => {
    for (let i = 0; i < MAX_REVIEW_CONTEXTS + 3; i++) await context(`c${String(i).padStart(3, '0')}`);
    const memory = await selectReviewMemory({ store: t.store, gh }, TARGET);
    expect(memory.items).toHaveLength(MAX_REVIEW_CONTEXTS);
    // The most recently written first.
    expect(memory.items[0]!.id).toBe(`c0${MAX_REVIEW_CONTEXTS + 2}`);
    expect(memory.leftOut.contexts).toBe(3);
  });

  test(`linked issues: read in the body's order until ${MAX_GIVEN_ISSUES} issues, each cut to ${MAX_ISSUE_BYTES} bytes`, async () => {
    const issue = (number: number, body = `Issue ${number}.`) => ({
      id: number,
      number,
      state: 'open',
      title: `Issue ${number}`,
      body,
      user: { login: 'alice' },
    });
    const scope = nock(API)
      .get('/repos/acme/web/issues/1')
      .reply(200, issue(1, 'é'.repeat(MAX_ISSUE_BYTES)))
      .get('/repos/acme/web/issues/2')
      .reply(200, { ...issue(2), pull_request: { url: 'x' } });
    for (const n of [3, 4, 5, 6]) scope.get(`/repos/acme/web/issues/${n}`).reply(200, issue(n));
    // #7 is the pull request itself; #8 is never read: five issues were found before it.
    const body = 'Closes #1, #2, #3, #4, #5, #6, #7 and #8.';
    const memory = await selectReviewMemory({ store: t.store, gh }, { ...TARGET, body });
    expect(scope.pendingMocks()).toEqual([]);
    expect(memory.issues.map((i) => i.number)).toEqual([1, 3, 4, 5, 6]);
    const first = memory.issues[0]!;
    expect(first.clipped).toBe(true);
    expect(first.body).toBe(
      `${'é'.repeat(MAX_ISSUE_BYTES / 2)}\n… [cut by Verdict: ${MAX_ISSUE_BYTES} more byte(s) of this issue not shown]`,
    );
    expect(memory.skippedIssues).toEqual([{ number: 2, reason: 'pull request' }]);
    expect(memory.leftOut).toEqual({ contexts: 0, knowledge: 0, linkedIssues: 1 });
  });

  test('linked issues over their token budget: the first ones kept, the rest counted', async () => {
    const scope = nock(API);
    for (const n of [1, 2, 3, 4, 5]) {
      scope.get(`/repos/acme/web/issues/${n}`).reply(200, {
        id: n,
        number: n,
        state: 'open',
        title: `Issue ${n}`,
        body: 'It fails when it runs. '.repeat(170),
      });
    }
    const memory = await selectReviewMemory({ store: t.store, gh }, { ...TARGET, body: '#1 #2 #3 #4 #5' });
    expect(scope.pendingMocks()).toEqual([]);
    // Each issue is about 1,000 tokens (4,000 bytes): three fit the 4,000 tokens, two are left out.
    expect(memory.issues.map((i) => i.number)).toEqual([1, 2, 3]);
    expect(memory.leftOut.linkedIssues).toBe(2);
  });
});
