import nock from 'nock';
import { ProbotOctokit } from 'probot';
import { listChangedFiles } from '../../src/review/gather.js';
import type { GitHubClient } from '../../src/github/client.js';
import { nextTurn } from '../helpers/turns.js';

/** Reading a large pull request's file list by page number, several pages at a time. */
const API = 'https://api.github.com';
const file = (i: number) => ({
  sha: 'f'.repeat(40),
  filename: `src/f${i}.ts`,
  status: 'modified',
  additions: 1,
  deletions: 0,
  changes: 1,
  blob_url: '',
  raw_url: '',
  contents_url: '',
  patch: '@@ -1 +1 @@\n+x',
});
const files = (from: number, n: number) => Array.from({ length: n }, (_, i) => file(from + i));

describe('listChangedFiles', () => {
  beforeAll(() => nock.disableNetConnect());
  afterAll(() => nock.enableNetConnect());
  afterEach(() => nock.cleanAll());
  const gh = new ProbotOctokit({
    auth: { token: 'ghs_test' },
    throttle: { enabled: false },
    retry: { enabled: false },
  }) as unknown as GitHubClient;

  test('the pages the PR announces, in page order; a full last page is followed by the next', async () => {
    const scope = nock(API);
    // Pages 1 and 2 are asked at once, and page 1 is answered after page 2.
    let secondAnswered!: () => void;
    const second = new Promise<void>((r) => (secondAnswered = r));
    // The PR said 150 files: two pages; it grew to 210 meanwhile, so page 2 is full and page 3 follows.
    for (const [page, body] of [
      [1, files(0, 100)],
      [2, files(100, 100)],
      [3, files(200, 10)],
    ] as const) {
      scope
        .get('/repos/acme/web/pulls/7/files')
        .query({ per_page: '100', page: String(page) })
        .reply(200, async () => {
          if (page === 2) secondAnswered();
          if (page === 1) {
            await second;
            await nextTurn();
          }
          return body;
        });
    }
    const listed = await listChangedFiles(gh, 'acme', 'web', 7, 150);
    expect(scope.pendingMocks()).toEqual([]);
    expect(listed).toHaveLength(210);
    expect(listed.map((f) => f.filename).slice(98, 102)).toEqual([
      'src/f98.ts',
      'src/f99.ts',
      'src/f100.ts',
      'src/f101.ts',
    ]);
    expect(listed[209]!.filename).toBe('src/f209.ts');
  });
});
