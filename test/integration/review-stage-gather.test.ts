import nock from 'nock';
import { ProbotOctokit } from 'probot';
import { ManualClock } from '../../src/clock.js';
import type { GitHubClient } from '../../src/github/client.js';
import type { ChangedFile } from '../../src/review/context.js';
import { gatherStage, type GatherInput } from '../../src/review/gather.stage.js';
import type { PullRequestFacts } from '../../src/review/gather.js';
import type { Store } from '../../src/store/index.js';
import { openTestStore, type TestStore } from '../helpers/store.js';
import { HEAD, changedFile, runScope } from '../helpers/stages.js';

/**
 * Stage `gather` against a real store (SQLite) and GitHub's REST API through nock: the changed files, the
 * PR's earlier runs and prior findings, instruction files from the base branch, memory contexts, other
 * bots' reviews, and the reader of files at the head.
 */
const API = 'https://api.github.com';
const REPO = 'acme/web';

const PR: PullRequestFacts = {
  number: 7,
  state: 'open',
  title: 'T',
  body: '',
  author: 'marty',
  draft: false,
  baseRef: 'main',
  baseSha: 'b'.repeat(40),
  headRef: 'f',
  headSha: HEAD,
  defaultBranch: 'main',
  labels: [],
  changedFiles: 1,
};

describe('stage gather', () => {
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

  /** A run of PR 7 at `head`, created now, whose analysis ended as `status` with `findings`. */
  async function earlierRun(store: Store, head: string, status: 'analysed' | 'failed', result: unknown = {}) {
    const { run } = await store.runs.createOrGet({
      reviewKey: `${REPO}#7@${head}`,
      repo: REPO,
      prNumber: 7,
      headSha: head,
      trigger: 'opened',
      installationId: 77,
    });
    const findings =
      status === 'analysed'
        ? [
            {
              severity: 'high',
              category: 'bug',
              path: 'src/a.ts',
              line: 2,
              title: 'Own finding',
              body: '',
              fingerprint: 'fp-own',
              outsideDiff: false,
            },
          ]
        : [];
    const owner = { runId: run.id, reviewKey: run.reviewKey, repo: REPO, prNumber: 7, headSha: head };
    const analysis = { analysisStatus: status, verdict: null, confidence: null, result };
    await store.runs.recordAnalysis(owner, analysis, findings, store.findings);
    clock.advance(1_000);
    return run;
  }

  function input(store: Store, over: Partial<GatherInput> = {}): GatherInput {
    return {
      gh,
      store,
      run: runScope({ createdAt: clock.now() }),
      pr: PR,
      files: [changedFile('src/a.ts')],
      ...over,
    };
  }

  test('prior findings, earlier runs, instructions from the base branch, memory and other bots, in one place', async () => {
    const { store } = t;
    const carried = {
      priorReviewKey: 'older',
      fingerprint: 'fp-carried',
      severity: 'medium',
      category: 'bug',
      path: 'src/b.ts',
      line: null,
      title: 'Carried',
      headSha: 'd'.repeat(40),
    };
    const previous = await earlierRun(store, 'a'.repeat(40), 'analysed', {
      priorFindings: { carriedOpen: [carried] },
    });
    const failed = await earlierRun(store, 'e'.repeat(40), 'failed');
    const context = { repo: REPO, title: 'Rule', body: 'b', createdBy: 'test' };
    await store.memory.createContext({ ...context, id: 'mem-src', paths: ['src/**'] });
    await store.memory.createContext({ ...context, id: 'mem-docs', paths: ['docs/**'] });
    await store.competitors.record({
      repo: REPO,
      prNumber: 7,
      login: 'coderabbitai[bot]',
      kind: 'review',
      githubId: 5,
      state: 'COMMENTED',
      body: 'LGTM',
      submittedAt: null,
    });
    const tree = [{ path: 'AGENTS.md', mode: '100644', type: 'blob', sha: 'f'.repeat(40), size: 9 }];
    nock(API)
      .get(`/repos/${REPO}/git/trees/main`)
      .query({ recursive: 'true' })
      .reply(200, { sha: 'f'.repeat(40), url: '', tree, truncated: false })
      .get(`/repos/${REPO}/contents/AGENTS.md`)
      .query({ ref: 'main' })
      .reply(200, 'Log every request id.');
    const seen: ChangedFile[][] = [];
    const i = input(store, { onFiles: (files) => seen.push(files) });
    const out = await gatherStage.run(i);
    expect(seen).toEqual([i.files]);
    expect(out.changed).toBe(i.files);
    expect(out.paths).toEqual(['src/a.ts']);
    expect(out.previous?.id).toBe(previous.id);
    expect(out.latest?.id).toBe(failed.id);
    // The previous run's own findings, then those it carried open.
    expect(out.prior.map((p) => [p.fingerprint, p.priorReviewKey])).toEqual([
      ['fp-own', previous.reviewKey],
      ['fp-carried', 'older'],
    ]);
    expect(out.instructions).toEqual({
      files: [{ path: 'AGENTS.md', appliesTo: 'every file', text: 'Log every request id.' }],
      notes: [],
    });
    expect(out.memory.items.map((m) => m.id)).toEqual(['mem-src']);
    expect(out.memory.issues).toEqual([]);
    expect(out.competitors.map((c) => c.login)).toEqual(['coderabbitai[bot]']);
    expect(gatherStage.counts(out, i)).toEqual({
      files: 1,
      priorFindings: 2,
      memoryContexts: 1,
      knowledgeDocuments: 0,
      linkedIssues: 0,
      memoryLeftOut: 0,
      skippedIssues: 0,
      competitorReviews: 1,
      instructionFiles: 1,
      previousRun: previous.id,
    });
  });

  test('memory: the matching contexts and knowledge documents, and the issues the body links read from GitHub', async () => {
    const { store } = t;
    const context = { repo: REPO, title: 'Rule', body: 'b', createdBy: 'test' };
    await store.memory.createContext({ ...context, id: 'mem-src', paths: ['src/**'] });
    await store.memory.createContext({ ...context, id: 'mem-all', repo: null, paths: [] });
    await store.memory.createContext({ ...context, id: 'mem-docs', paths: ['docs/**'] });
    await store.memory.putKnowledge({ repo: REPO, path: 'src', body: 'Notes on src.' }, 'test');
    await store.memory.putKnowledge({ repo: REPO, path: 'docs', body: 'Notes on docs.' }, 'test');
    const issue = (number: number, over: Record<string, unknown> = {}) => ({
      id: 1000 + number,
      number,
      state: 'open',
      title: `Issue ${number}`,
      body: `Body of ${number}.`,
      user: { login: 'alice' },
      labels: [],
      ...over,
    });
    const scope = nock(API)
      .get(`/repos/${REPO}/git/trees/main`)
      .query({ recursive: 'true' })
      .reply(404, { message: 'Not Found' })
      .get(`/repos/${REPO}/issues/12`)
      .reply(200, issue(12, { state: 'closed' }))
      .get(`/repos/${REPO}/issues/3`)
      .reply(200, issue(3, { pull_request: { url: `${API}/repos/${REPO}/pulls/3` } }))
      .get(`/repos/${REPO}/issues/4`)
      .reply(404, { message: 'Not Found' })
      .get(`/repos/${REPO}/issues/5`)
      .reply(502, { message: 'Bad Gateway' })
      .get(`/repos/${REPO}/issues/6`)
      .reply(200, issue(6, { body: null }));
    const pr = { ...PR, body: 'Fixes #12, see #3, #4, acme/web#5 and https://github.com/acme/web/issues/6.' };
    const out = await gatherStage.run(input(store, { pr }));
    expect(scope.pendingMocks()).toEqual([]);
    expect(out.memory.items.map((m) => [m.kind, m.id])).toEqual([
      ['context', 'mem-src'],
      ['context', 'mem-all'],
      ['knowledge', 'knowledge:src'],
    ]);
    expect(out.memory.issues).toEqual([
      { number: 12, state: 'closed', title: 'Issue 12', body: 'Body of 12.', clipped: false },
      { number: 6, state: 'open', title: 'Issue 6', body: '', clipped: false },
    ]);
    expect(out.memory.skippedIssues).toEqual([
      { number: 3, reason: 'pull request' },
      { number: 4, reason: 'not found' },
      { number: 5, reason: 'could not be read: GitHub answered 502' },
    ]);
    expect(out.memory.leftOut).toEqual({ contexts: 0, knowledge: 0, linkedIssues: 0 });
  });

  test('files admission did not list are listed here; a file at the head is read once per run', async () => {
    const listed = [
      { ...changedFile('src/a.ts'), sha: 'f'.repeat(40), blob_url: '', raw_url: '', contents_url: '' },
    ];
    nock(API)
      .get(`/repos/${REPO}/pulls/7/files`)
      .query({ per_page: '100' })
      .reply(200, listed)
      .get(`/repos/${REPO}/git/trees/main`)
      .query({ recursive: 'true' })
      .reply(404, { message: 'Not Found' })
      .get(`/repos/${REPO}/contents/src%2Fa.ts`)
      .query({ ref: HEAD })
      .once()
      .reply(200, 'const v0 = 0;\n');
    const out = await gatherStage.run(input(t.store, { files: null }));
    expect(out.changed.map((f) => f.filename)).toEqual(['src/a.ts']);
    expect(out.previous).toBeNull();
    expect(out.latest).toBeNull();
    expect(out.prior).toEqual([]);
    // An instruction tree that cannot be read is a note, not a failure.
    expect(out.instructions.files).toEqual([]);
    expect(out.instructions.notes).toEqual([
      expect.stringMatching(/^repository instructions could not be listed on main/),
    ]);
    const [first, second] = await Promise.all([out.fileAtHead('src/a.ts'), out.fileAtHead('src/a.ts')]);
    expect(first).toBe('const v0 = 0;\n');
    expect(second).toBe(first);
    expect(await out.fileAtHead('src/a.ts')).toBe(first);
  });
});
