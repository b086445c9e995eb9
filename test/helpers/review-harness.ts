import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { requestReview } from '../../src/review/request.js';
import { candidatesOf } from '../../src/review/verification.js';
import type { RunRecord } from '../../src/store/runs.js';
import { TOKENS } from './operator.js';
import { startVerdict, type RunningVerdict } from './verdict.js';
import { eventually } from './webhooks.js';

/**
 * Fixtures and a harness for review tests through the real server and its in-process review worker:
 * GitHub and the model providers are nock'd with bodies shaped like their real APIs.
 */
export const OWNER = 'acme';
export const NAME = 'web';
export const REPO = `${OWNER}/${NAME}`;
export const API = 'https://api.github.com';
export const OPENAI = 'https://api.openai.com';
export const HEAD = 'a'.repeat(40);
export const HEAD2 = 'b'.repeat(40);
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

export const READ = { authorization: `Bearer ${TOKENS.VERDICT_OPERATOR_READ_TOKEN}` };
export const BASE_ENV = {
  ...TOKENS,
  APP_ID: '123',
  PRIVATE_KEY: privateKey,
  VERDICT_RUNNER_PROVIDER: 'openai',
  VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
  OPENAI_API_KEY: 'sk-test',
  VERDICT_QUEUE_LEASE_SECONDS: '60',
  // Publication is tested in publication.test.ts: here it is recorded in the ledger only.
  VERDICT_PUBLISH_MODE: 'shadow',
  VERDICT_GITHUB_RETRIES: '0',
  LOG_LEVEL: process.env.DBG ? 'debug' : 'silent',
};

export function review(over: Record<string, unknown> = {}) {
  return {
    overview: 'Adds a read-through cache in front of the user service.',
    summary: 'The cache is keyed correctly, but eviction races with writes.',
    verdict: 'needs-attention',
    confidenceScore: 4,
    bulletHighlights: ['New cache layer'],
    reasoning: 'Read the diff of src/cache.ts.',
    mergeVerdict: 'Fix the eviction race before merging.',
    importantFiles: [{ path: 'src/cache.ts', overview: 'the cache' }],
    findings: [
      {
        severity: 'high',
        category: 'concurrency',
        path: 'src/cache.ts',
        title: 'Eviction races with concurrent writes',
        body: 'evict() runs between get and set.',
        contextIds: ['mem-1', 'made-up-id'],
      },
    ],
    priorFindingDispositions: [],
    missingValidations: [],
    crossRepoImpact: [],
    sequenceDiagram: '',
    competitorComparison: {
      available: false,
      winner: 'unclear',
      summary: 'none',
      confidence: 1,
      agreements: [],
      competitorMisses: [],
      ownMisses: [],
      strongerCompetitorFindings: [],
      strongerOwnFindings: [],
      actionItems: [],
    },
    ...over,
  };
}

/** An OpenAI chat completion, as the API returns it. */
export function completion(content: string, usage = { prompt_tokens: 1200, completion_tokens: 300 }) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** One model call, answered with `review(over)`; `seen` is given the request body. */
export function modelAnswer(over: Record<string, unknown> = {}, seen?: (body: any) => void) {
  return nock(OPENAI)
    .post('/v1/chat/completions', (body) => !isVerification(body) && (seen?.(body), true))
    .reply(200, completion(JSON.stringify(review(over))));
}

/** Whether a chat completion request is a verification call (NAMES.md: its structured output's name). */
export function isVerification(body: any): boolean {
  return body?.response_format?.json_schema?.name === 'verification';
}

/** The candidates of a verification request, as its user message lists them. */
export function verificationCandidates(body: any): Array<{ id: string; title: string; severity: string }> {
  return candidatesOf(String(body?.messages?.at(-1)?.content ?? '')) ?? [];
}

/**
 * How the fake model answers verification calls: a result per candidate (default: every candidate
 * confirmed with score 90), or a status and body to fail with. `seen` keeps every verification request.
 */
export type Verifier = (
  candidates: ReturnType<typeof verificationCandidates>,
  body: any,
) => { results: unknown[] } | { status: number; body: unknown } | string;

export const CONFIRM_ALL: Verifier = (candidates) => ({
  results: candidates.map((c) => ({
    id: c.id,
    verdict: 'confirmed',
    score: 90,
    reason: 'The code shows it.',
  })),
});

/**
 * The verification calls of the fake OpenAI model, answered by `verifier()` for as long as the test runs
 * (persisted and optional: a review without findings makes none).
 */
export function verificationAnswers(verifier: () => Verifier, seen: any[]) {
  return nock(OPENAI)
    .persist()
    .post('/v1/chat/completions', (body) => isVerification(body))
    .optionally()
    .reply((_uri, body) => {
      seen.push(body);
      const answer = verifier()(verificationCandidates(body), body);
      if (typeof answer === 'string')
        return [200, completion(answer, { prompt_tokens: 800, completion_tokens: 60 })];
      if ('status' in answer) return [answer.status, answer.body];
      return [200, completion(JSON.stringify(answer), { prompt_tokens: 800, completion_tokens: 60 })];
    });
}

/** GitHub's compare answer from HEAD to HEAD2, an ancestor of it: the one hunk that fixes `evict`. */
export const COMPARE_AHEAD = {
  status: 'ahead',
  ahead_by: 1,
  behind_by: 0,
  files: [
    {
      filename: 'src/cache.ts',
      status: 'modified',
      additions: 1,
      deletions: 1,
      changes: 2,
      patch:
        '@@ -1,3 +1,3 @@\n export function evict(key) {\n-  store.delete(key);\n+  if (expired(key)) store.delete(key);\n }',
    },
  ],
};

export function pull(over: Record<string, unknown> = {}) {
  return {
    number: 7,
    state: 'open',
    title: 'Add a cache',
    body: 'Caches user lookups.',
    draft: false,
    user: { login: 'alice' },
    labels: [{ name: 'backend' }],
    head: { sha: HEAD, ref: 'feature/cache' },
    base: { ref: 'main' },
    changed_files: 2,
    ...over,
  };
}

export const FILES = [
  {
    filename: 'src/cache.ts',
    status: 'added',
    additions: 3,
    deletions: 0,
    changes: 3,
    patch: '@@ -0,0 +1,3 @@\n+export function evict(key) {\n+  store.delete(key);\n+}',
  },
  { filename: 'assets/logo.png', status: 'added', additions: 0, deletions: 0, changes: 0 },
];

export function github(pr = pull(), files: unknown[] = FILES) {
  return nock(API)
    .post('/app/installations/77/access_tokens')
    .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z' })
    .get(`/repos/${REPO}/pulls/7`)
    .reply(200, pr)
    .get(`/repos/${REPO}/pulls/7/files`)
    .query(true)
    .reply(200, files);
}

/** Registers the hooks of a review test file and returns its helpers. */
export function reviewHarness(baseEnv: Record<string, string> = BASE_ENV) {
  let app: RunningVerdict;
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  afterAll(() => nock.enableNetConnect());
  afterEach(async () => {
    await app?.stop();
    nock.cleanAll();
  });

  let verifier: Verifier = CONFIRM_ALL;
  const verifications: any[] = [];

  async function start(env: Record<string, string> = {}) {
    verifier = CONFIRM_ALL;
    verifications.length = 0;
    verificationAnswers(() => verifier, verifications);
    app = await startVerdict({ ...baseEnv, ...env }, { reviewExecutor: undefined });
    const store = app.verdict.store;
    await store.repositories.upsertInstalled(REPO, 77);
    await store.repositories.configure(REPO, { enabled: true }, { actor: 'test', reason: null });
    return store;
  }

  async function setPolicy(patch: Record<string, unknown>) {
    const store = app.verdict.store;
    const current = await store.policy.get();
    expect(await store.policy.update(current!.revision, patch, 'test')).toMatchObject({ ok: true });
  }

  /** A queued run of the pull request (the worker is not woken). */
  async function requestRun(headSha = HEAD, trigger = 'opened', variant: string | null = null) {
    const request = { owner: OWNER, repo: NAME, number: 7, headSha, installationId: 77, trigger, variant };
    return (await requestReview(app.verdict.store, request)).run;
  }

  async function reviewRun(headSha = HEAD, trigger = 'opened', variant: string | null = null) {
    const store = app.verdict.store;
    const run = await requestRun(headSha, trigger, variant);
    app.verdict.reviewWorker!.kick();
    // Settled: the run is terminal and its job is no longer held by the worker.
    return eventually(async () => {
      const r = await store.runs.get(run.id);
      if (!r || ['queued', 'running'].includes(r.status) || r.analysisStatus === 'pending') return null;
      const job = r.jobId === null ? null : await store.jobs.get(r.jobId);
      return job && job.status === 'running' ? null : r;
    }, 20_000);
  }

  async function spansOf(run: RunRecord) {
    const traces = await app.verdict.store.traces.list({ runId: run.id, limit: 10 });
    const full = await app.verdict.store.traces.get(traces[0]!.traceId);
    return full!;
  }

  return {
    get app() {
      return app;
    },
    /** How the fake model answers the verification calls from now on (default: confirms everything). */
    verifyWith(next: Verifier) {
      verifier = next;
    },
    /** The verification requests the fake model received. */
    verifications,
    start,
    setPolicy,
    requestRun,
    reviewRun,
    spansOf,
  };
}
