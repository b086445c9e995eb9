import nock from 'nock';
import { ProbotOctokit } from 'probot';
import type { GitHubClient } from '../../src/github/client.js';
import type { ChangedFile } from '../../src/review/context.js';
import { planStage, type PlanInput } from '../../src/review/plan.stage.js';
import type { RunRecord } from '../../src/store/runs.js';
import { HEAD, changedFile, runScope } from '../helpers/stages.js';

/**
 * Stage `plan`: full or incremental (GitHub's compare API through nock when there is an earlier head),
 * the files shown with their surrounding code read through the run's reader of files at the head.
 */
const API = 'https://api.github.com';
const REPO = 'acme/web';
const EARLIER = 'a'.repeat(40);

const CACHE_TS = [
  'export class Cache {', // 1
  '  get(key: string) {', // 2
  '    const hit = store.get(key);', // 3
  '    if (!hit) return undefined;', // 4
  '    return hit.value;', // 5
  '  }', // 6
  '}', // 7
].join('\n');
const CACHE: ChangedFile = {
  filename: 'src/cache.ts',
  status: 'modified',
  additions: 1,
  deletions: 1,
  changes: 2,
  patch: '@@ -4,1 +4,1 @@\n-    if (hit === null) return undefined;\n+    if (!hit) return undefined;',
};

/** An earlier run of the PR as the store returns it. */
function earlier(over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'run_0',
    reviewKey: `${REPO}#7@aaaaaaaaaaaa`,
    repo: REPO,
    prNumber: 7,
    headSha: EARLIER,
    variant: null,
    trigger: 'opened',
    status: 'completed',
    reason: null,
    analysisStatus: 'analysed',
    publishStatus: 'published',
    installationId: 77,
    deliveryId: null,
    jobId: null,
    error: null,
    verdict: 'clear',
    confidence: 4,
    shadowReview: null,
    checkRunId: null,
    publishError: null,
    result: {
      baseRef: 'main',
      coverage: {
        files: [
          { path: 'src/cache.ts', status: 'analysed', reason: null, partial: false },
          { path: 'src/old.ts', status: 'analysed', reason: null, partial: false },
        ],
      },
    },
    createdAt: 1,
    updatedAt: 1,
    ...over,
  };
}

describe('stage plan', () => {
  const gh = new ProbotOctokit({
    auth: { token: 'ghs_test' },
    throttle: { enabled: false },
    retry: { enabled: false },
  }) as unknown as GitHubClient;
  beforeAll(() => nock.disableNetConnect());
  afterAll(() => nock.enableNetConnect());
  afterEach(() => nock.cleanAll());

  function input(
    over: Partial<PlanInput['gathered']> = {},
    incrementalEnabled = true,
  ): PlanInput & { reads: string[] } {
    const reads: string[] = [];
    return {
      gh,
      run: runScope(),
      pr: { baseRef: 'main' },
      incrementalEnabled,
      gathered: {
        changed: [CACHE, changedFile('src/new.ts', 2, { status: 'added' }), changedFile('src/old.ts')],
        previous: null,
        latest: null,
        fileAtHead: async (path) => {
          reads.push(path);
          if (path === 'src/old.ts') throw new Error('502 Bad Gateway');
          return path === 'src/cache.ts' ? CACHE_TS : null;
        },
        ...over,
      },
      config: { chunkTokens: 60_000, maxChunks: 12 },
      signal: new AbortController().signal,
      reads,
    };
  }

  test('a first review shows every file; changed source files get their enclosing code at the head', async () => {
    const i = input();
    const out = await planStage.run(i);
    expect(out.review).toEqual({ kind: 'full', reason: 'first review of this pull request', sinceSha: null });
    expect(out.files.map((f) => f.filename)).toEqual(['src/cache.ts', 'src/new.ts', 'src/old.ts']);
    expect(out.files[0]!.context).toContain('(method_definition, lines 2-6)');
    // A new file is not read (the diff shows all of it); a file that cannot be read is a note.
    expect(i.reads.sort()).toEqual(['src/cache.ts', 'src/old.ts']);
    expect(out.files[1]!.context).toBeUndefined();
    expect(out.withContext).toBe(1);
    expect(out.notes).toEqual(['src/old.ts could not be read at the head: 502 Bad Gateway']);
    expect(out.carried).toBeUndefined();
    expect(planStage.counts(out, i)).toEqual({
      review: 'full',
      reviewReason: 'first review of this pull request',
      sinceSha: null,
      files: 3,
      surroundingFiles: 1,
    });
  });

  test('after an analysed earlier head that is an ancestor: only what changed since, and the rest carried', async () => {
    const compare = nock(API)
      .get(`/repos/${REPO}/compare/${EARLIER}...${HEAD}`)
      .query(true)
      .reply(200, { status: 'ahead', files: [CACHE, changedFile('base-only.ts')] });
    const out = await planStage.run(input({ previous: earlier(), latest: earlier() }));
    expect(compare.isDone()).toBe(true);
    expect(out.review).toMatchObject({
      kind: 'incremental',
      sinceSha: EARLIER,
      reason: '1 file(s) changed since aaaaaaa',
    });
    expect(out.files.map((f) => f.filename)).toEqual(['src/cache.ts']);
    expect(out.carried?.get('src/old.ts')).toEqual({
      path: 'src/old.ts',
      status: 'analysed',
      reason: 'unchanged since aaaaaaa, reviewed then',
      partial: false,
    });
  });

  test('a full review when the latest review failed or incremental review is off, without asking GitHub', async () => {
    const failed = await planStage.run(
      input({
        previous: earlier(),
        latest: earlier({ id: 'run_1', headSha: 'e'.repeat(40), analysisStatus: 'failed' }),
      }),
    );
    expect(failed.review).toEqual({
      kind: 'full',
      reason: 'the previous review (at eeeeeee) failed',
      sinceSha: EARLIER,
    });
    const off = await planStage.run(input({ previous: earlier(), latest: earlier() }, false));
    expect(off.review.reason).toBe('`review.incremental` is false in `.github/verdict.yml`');
    expect(off.files).toHaveLength(3);
  });
});
