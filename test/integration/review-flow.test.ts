import pino from 'pino';
import type { GitHubClient } from '../../src/github/client.js';
import type { Admission, ReviewEngine, ReviewSession } from '../../src/review/engine.js';
import { requestReview, REVIEW_QUEUE } from '../../src/review/request.js';
import type { ClaimedJob } from '../../src/queue/types.js';
import type { RunRecord } from '../../src/store/runs.js';
import type { ReviewExecution } from '../../src/worker/review-consumer.js';
import { reviewFlow, type FeedbackCollection, type Publication } from '../../src/worker/review-flow.js';
import type { JobContext } from '../../src/worker/runner.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

const gh = { marker: 'installation client' } as unknown as GitHubClient;
const HEAD = 'a'.repeat(40);

/**
 * The worker's review flow: the engine admits and analyses, the worker calls publication around it.
 * The engine here is scripted (its admission and analysis are given); the store and the flow are real.
 */
describe('review flow (the worker calls publication, the engine only analyses)', () => {
  let t: TestStore;
  let calls: string[];
  let admission: Admission;
  let analysis: ReviewExecution | (() => Promise<ReviewExecution>);
  let failing: Set<string>;
  let steps: Array<{ name: string; error: string | null }>;

  beforeEach(async () => {
    t = await openTestStore('sqlite');
    calls = [];
    failing = new Set();
    steps = [];
    admission = { admitted: true, gh, headSha: HEAD };
    analysis = { status: 'completed' };
  });
  afterEach(() => t.cleanup());

  const engine: ReviewEngine = {
    open(): ReviewSession {
      const session: ReviewSession = {
        traced: (flow) => flow(session),
        admit: async () => {
          calls.push('admit');
          return admission;
        },
        analyse: async () => {
          calls.push('analyse');
          return typeof analysis === 'function' ? analysis() : analysis;
        },
        step: async (name, fn) => {
          try {
            await fn();
            steps.push({ name, error: null });
            return null;
          } catch (error) {
            steps.push({ name, error: (error as Error).message });
            return (error as Error).message;
          }
        },
      };
      return session;
    },
  };

  const publication: Publication = {
    startCheck: async (client, run, headSha) => {
      expect(client).toBe(gh);
      calls.push(`start-check ${run.reviewKey} ${headSha.slice(0, 4)}`);
      if (failing.has('start-check')) throw new Error('checks API down');
    },
    failCheck: async (_client, _run, error) => {
      calls.push(`fail-check: ${error}`);
    },
    noticeCheck: async (client, _run, notice) => {
      expect(client).toBe(gh);
      calls.push(`notice-check ${notice.reason}: ${notice.hint}`);
      if (failing.has('notice-check')) throw new Error('checks API down');
    },
    publish: async (_client, run) => {
      calls.push(`publish ${run.status}`);
      if (failing.has('publish')) throw new Error('reviews API down');
      return null;
    },
  };

  async function job(attempts = 1, maxAttempts = 3): Promise<{ run: RunRecord; job: ClaimedJob }> {
    const { run } = await requestReview(t.store, {
      owner: 'acme',
      repo: 'api',
      number: 7,
      installationId: 5,
      headSha: HEAD,
      trigger: 'opened',
    });
    const claimed = await t.store.jobs.claim(REVIEW_QUEUE, 'w:1', 60_000);
    if (!claimed) throw new Error('no job');
    return { run, job: { ...claimed, attempts, maxAttempts } };
  }
  const ctx: JobContext = { signal: new AbortController().signal, assertLease: async () => undefined };
  const flow = (p: Publication | null = publication) =>
    reviewFlow({ engine, publication: p, store: t.store, log: pino({ level: 'silent' }) });

  test('admitted and analysed: the check starts before the analysis, publication follows it', async () => {
    const { run, job: j } = await job();
    const out = await flow()(run, j, ctx);
    expect(out).toEqual({ status: 'completed' });
    expect(calls).toEqual(['admit', `start-check ${run.reviewKey} aaaa`, 'analyse', 'publish queued']);
    expect(steps.map((s) => s.name)).toEqual(['start-check', 'publish']);
  });

  test('not admitted: nothing is published, the engine does not analyse', async () => {
    const { run, job: j } = await job();
    admission = { admitted: false, execution: { status: 'skipped', reason: 'draft' } };
    expect(await flow()(run, j, ctx)).toEqual({ status: 'skipped', reason: 'draft' });
    expect(calls).toEqual(['admit']);
  });

  test('refused in a way the author can act on: a notice check run says why, and nothing else runs', async () => {
    const { run, job: j } = await job();
    const notice = {
      gh,
      headSha: HEAD,
      reason: 'repository_disabled',
      detail: 'disabled',
      hint: 'enable it',
    };
    admission = { admitted: false, execution: { status: 'skipped', reason: 'repository_disabled' }, notice };
    expect(await flow()(run, j, ctx)).toEqual({ status: 'skipped', reason: 'repository_disabled' });
    expect(calls).toEqual(['admit', 'notice-check repository_disabled: enable it']);
    expect(steps).toEqual([{ name: 'notice-check', error: null }]);
    // Its failure is recorded on the run like any publication step's, and the refusal stands.
    calls = [];
    failing.add('notice-check');
    expect(await flow()(run, j, ctx)).toEqual({ status: 'skipped', reason: 'repository_disabled' });
    expect((await t.store.runs.get(run.id))?.publishError).toBe('notice-check: checks API down');
  });

  test('a failure that will be retried leaves the check in progress; the last attempt fails the check', async () => {
    const first = await job(1, 3);
    analysis = { status: 'failed', error: 'model timed out', retry: true };
    await flow()(first.run, first.job, ctx);
    expect(calls).not.toContainEqual(expect.stringContaining('fail-check'));
    calls = [];
    await flow()(first.run, { ...first.job, attempts: 3 }, ctx);
    expect(calls).toEqual([
      'admit',
      expect.stringMatching(/^start-check/),
      'analyse',
      'fail-check: model timed out',
    ]);
  });

  test('a failure that cannot succeed later fails the check at once', async () => {
    const { run, job: j } = await job(1, 3);
    analysis = { status: 'failed', error: 'bad model name', retry: false };
    await flow()(run, j, ctx);
    expect(calls.at(-1)).toBe('fail-check: bad model name');
  });

  test('a publication step that fails is recorded on the run, and the review stays completed', async () => {
    const { run, job: j } = await job();
    failing.add('publish');
    expect(await flow()(run, j, ctx)).toEqual({ status: 'completed' });
    expect(steps.at(-1)).toEqual({ name: 'publish', error: 'reviews API down' });
    const stored = await t.store.runs.get(run.id);
    expect(stored).toMatchObject({ publishStatus: 'failed', publishError: 'publish: reviews API down' });
  });

  test('a failed start of the check is recorded and the analysis still runs and is published', async () => {
    const { run, job: j } = await job();
    failing.add('start-check');
    await flow()(run, j, ctx);
    expect(calls.slice(2)).toEqual(['analyse', 'publish queued']);
    expect((await t.store.runs.get(run.id))?.publishError).toBe('start-check: checks API down');
  });

  test('without a publication the analysis runs and nothing is published', async () => {
    const { run, job: j } = await job();
    expect(await flow(null)(run, j, ctx)).toEqual({ status: 'completed' });
    expect(calls).toEqual(['admit', 'analyse']);
    expect(steps).toEqual([]);
  });

  describe('feedback around the analysis', () => {
    const feedback = (opts: { before: boolean; after: boolean; fail?: boolean }): FeedbackCollection => ({
      beforeAnalysis: async (run) => {
        calls.push(`feedback? ${run.reviewKey}`);
        if (!opts.before) return null;
        return async (client) => {
          expect(client).toBe(gh);
          calls.push('read reactions');
          if (opts.fail) throw new Error('reactions API down');
        };
      },
      afterAnalysis: async () => {
        if (!opts.after) return null;
        return async () => {
          calls.push('count addressed');
        };
      },
    });
    const withFeedback = (f: FeedbackCollection) =>
      reviewFlow({ engine, publication, store: t.store, log: pino({ level: 'silent' }), feedback: f });

    test('read after the check starts and before the analysis; dispositions counted before publication', async () => {
      const { run, job: j } = await job();
      expect(await withFeedback(feedback({ before: true, after: true }))(run, j, ctx)).toEqual({
        status: 'completed',
      });
      expect(calls).toEqual([
        'admit',
        `start-check ${run.reviewKey} aaaa`,
        `feedback? ${run.reviewKey}`,
        'read reactions',
        'analyse',
        'count addressed',
        'publish queued',
      ]);
      expect(steps.map((s) => s.name)).toEqual(['start-check', 'feedback', 'feedback-addressed', 'publish']);
    });

    test('nothing to read or count: no span; a failed read is a span error, not a failed review or publication', async () => {
      const { run, job: j } = await job();
      await withFeedback(feedback({ before: false, after: false }))(run, j, ctx);
      expect(steps.map((s) => s.name)).toEqual(['start-check', 'publish']);
      steps = [];
      calls = [];
      expect(await withFeedback(feedback({ before: true, after: false, fail: true }))(run, j, ctx)).toEqual({
        status: 'completed',
      });
      expect(steps.find((s) => s.name === 'feedback')).toEqual({
        name: 'feedback',
        error: 'reactions API down',
      });
      expect(calls.slice(-2)).toEqual(['analyse', 'publish queued']);
      const stored = await t.store.runs.get(run.id);
      expect(stored?.publishError ?? null).toBeNull();
    });

    test('a failed analysis counts nothing', async () => {
      const { run, job: j } = await job();
      analysis = { status: 'failed', error: 'bad model name', retry: false };
      await withFeedback(feedback({ before: false, after: true }))(run, j, ctx);
      expect(calls).not.toContain('count addressed');
    });
  });
});
