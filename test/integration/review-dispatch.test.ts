import pino from 'pino';
import { requestReview, REVIEW_QUEUE } from '../../src/review/request.js';
import type { ClaimedJob } from '../../src/queue/types.js';
import { LeaseLostError, type JobContext } from '../../src/worker/runner.js';
import {
  missingHeadShaMessage,
  reviewJobHandler,
  type DispatchOutcome,
  type ReviewExecution,
} from '../../src/worker/review-consumer.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

const LEASE = 60_000;

const base = { owner: 'acme', repo: 'api', number: 7, installationId: 5, trigger: 'opened' };

/** Dispatch outcomes of the reviews lane (review-engine 3.4). */
describe('review dispatch', () => {
  let t: TestStore;
  let outcomes: Array<[number, DispatchOutcome]>;
  let executed: string[];
  let next: ReviewExecution | (() => Promise<ReviewExecution>);

  beforeEach(async () => {
    t = await openTestStore('sqlite');
    outcomes = [];
    executed = [];
    next = { status: 'completed' };
  });
  afterEach(() => t.cleanup());

  const handler = () =>
    reviewJobHandler(
      t.store,
      async (run) => {
        executed.push(run.reviewKey);
        return typeof next === 'function' ? next() : next;
      },
      pino({ level: 'silent' }),
      { lockedRetryMs: 1234, onDispatch: (id, o) => outcomes.push([id, o]) },
    );

  /** A context whose lease check asks the job table, as the real runner's does. */
  const ctxFor = (job: ClaimedJob): JobContext => ({
    signal: new AbortController().signal,
    assertLease: async () => {
      if ((await t.store.jobs.renew(job.id, job.receipt, LEASE)) === null) throw new LeaseLostError(job.id);
    },
  });

  /** The next execution starts (`started`) and runs until the test finishes it. */
  function hangingExecution(): { started: Promise<void>; finish: (r: ReviewExecution) => void } {
    let entered!: () => void;
    const started = new Promise<void>((r) => (entered = r));
    let finish!: (r: ReviewExecution) => void;
    next = () => {
      entered();
      return new Promise<ReviewExecution>((r) => (finish = r));
    };
    return { started, finish: (r) => finish(r) };
  }

  async function claim(): Promise<ClaimedJob> {
    const job = await t.store.jobs.claim(REVIEW_QUEUE, 'w:1', LEASE);
    if (!job) throw new Error('nothing to claim');
    return job;
  }

  test('a queued run is dispatched once, completed and acknowledged', async () => {
    const { run } = await requestReview(t.store, { ...base, headSha: 'a'.repeat(40) });
    const job = await claim();
    expect(await handler()(job, ctxFor(job))).toEqual({ type: 'ack' });
    expect(executed).toEqual([run.reviewKey]);
    expect(outcomes).toEqual([[job.id, 'dispatched']]);
    expect(await t.store.runs.get(run.id)).toMatchObject({ status: 'completed' });
  });

  test('skipped_completed: a job for a run that already completed is reconciled and acknowledged', async () => {
    const { run } = await requestReview(t.store, { ...base, headSha: 'a'.repeat(40) });
    await t.store.runs.update(run.id, { status: 'completed' });
    const job = await claim();
    expect(await handler()(job, ctxFor(job))).toEqual({ type: 'ack' });
    expect(executed).toEqual([]);
    expect(outcomes).toEqual([[job.id, 'skipped_completed']]);
  });

  test('skipped_obsolete: a job for a superseded or abandoned run is acknowledged without a review', async () => {
    const first = await requestReview(t.store, { ...base, headSha: 'a'.repeat(40) });
    await requestReview(t.store, { ...base, headSha: 'b'.repeat(40), trigger: 'synchronize' });
    expect((await t.store.runs.get(first.run.id))!.status).toBe('superseded');
    // An old job still naming the superseded run (e.g. brought back from the dead letter).
    await t.store.jobs.enqueue({
      queue: REVIEW_QUEUE,
      kind: 'review',
      payload: { runId: first.run.id },
      priority: 10,
    });
    const job = await claim();
    expect((job.payload as { runId: string }).runId).toBe(first.run.id);
    expect(await handler()(job, ctxFor(job))).toEqual({ type: 'ack' });
    expect(outcomes).toEqual([[job.id, 'skipped_obsolete']]);
    expect(executed).toEqual([]);
  });

  test('skipped_locked: while another job holds the run with a live lease, the job is retried later', async () => {
    const { run } = await requestReview(t.store, { ...base, headSha: 'a'.repeat(40) });
    await t.store.jobs.enqueue({ queue: REVIEW_QUEUE, kind: 'review', payload: { runId: run.id } });
    const holder = await claim();
    const { started, finish } = hangingExecution();
    const running = handler()(holder, ctxFor(holder));
    await started;
    expect(await t.store.runs.get(run.id)).toMatchObject({ status: 'running' });

    const second = await claim();
    expect(await handler()(second, ctxFor(second))).toEqual({ type: 'release', delayMs: 1234 });
    expect(outcomes.at(-1)).toEqual([second.id, 'skipped_locked']);

    finish({ status: 'completed' });
    expect(await running).toEqual({ type: 'ack' });
  });

  test("a run whose holder's lease expired is taken over; the old holder cannot record its result", async () => {
    const { run } = await requestReview(t.store, { ...base, headSha: 'a'.repeat(40) });
    const holder = await claim();
    const { started, finish } = hangingExecution();
    const stale = handler()(holder, ctxFor(holder));
    await started;

    t.clock.advance(LEASE + 1); // the holder stalls past its lease; its job is claimable again
    next = { status: 'completed' };
    const taker = await t.store.jobs.claim(REVIEW_QUEUE, 'w:2', LEASE);
    expect(taker).toMatchObject({ id: holder.id, attempts: 2 });
    expect(await handler()(taker!, ctxFor(taker!))).toEqual({ type: 'ack' });
    expect(outcomes.filter(([, o]) => o === 'dispatched')).toHaveLength(2);

    finish({ status: 'failed', error: 'late', retry: true });
    await expect(stale).rejects.toBeInstanceOf(LeaseLostError);
    expect(await t.store.runs.get(run.id)).toMatchObject({ status: 'completed', error: null });
  });

  test('a run with no head SHA fails with a message naming headSha and is dead-lettered', async () => {
    const { run } = await t.store.runs.createOrGet({
      reviewKey: 'acme/api#7@unknown',
      repo: 'acme/api',
      prNumber: 7,
      headSha: null,
      trigger: 'operator_requeue',
      installationId: 5,
    });
    await t.store.jobs.enqueue({ queue: REVIEW_QUEUE, kind: 'review', payload: { runId: run.id } });
    const job = await claim();
    const outcome = await handler()(job, ctxFor(job));
    expect(outcome).toEqual({
      type: 'dead',
      reason: 'unroutable',
      error: missingHeadShaMessage(run.reviewKey),
    });
    expect(missingHeadShaMessage(run.reviewKey)).toContain('no headSha');
    expect(await t.store.runs.get(run.id)).toMatchObject({
      status: 'failed',
      error: missingHeadShaMessage(run.reviewKey),
    });
    expect(executed).toEqual([]);
  });

  test('a job naming no run, or an unknown run, is dead-lettered as unroutable', async () => {
    await t.store.jobs.enqueue({ queue: REVIEW_QUEUE, kind: 'review', payload: { nothing: true } });
    await t.store.jobs.enqueue({ queue: REVIEW_QUEUE, kind: 'review', payload: { runId: 'run_missing' } });
    for (let i = 0; i < 2; i++) {
      const job = await claim();
      expect(await handler()(job, ctxFor(job))).toMatchObject({ type: 'dead', reason: 'unroutable' });
    }
    expect(outcomes.map(([, o]) => o)).toEqual(['dead_lettered', 'dead_lettered']);
  });

  test('a failing review is retried with the run back in queued; on the last attempt the run fails', async () => {
    const { run } = await requestReview(t.store, { ...base, headSha: 'a'.repeat(40) });
    next = { status: 'failed', error: 'model timed out after 600000 ms', retry: true };
    const job = await claim();
    expect(await handler()(job, ctxFor(job))).toEqual({
      type: 'retry',
      error: 'model timed out after 600000 ms',
    });
    expect(await t.store.runs.get(run.id)).toMatchObject({
      status: 'queued',
      error: 'model timed out after 600000 ms',
    });

    const last = { ...job, attempts: job.maxAttempts };
    await t.store.runs.releaseDispatch(run.id, job.receipt);
    expect(await handler()(last, ctxFor(last))).toMatchObject({ type: 'retry' });
    expect(await t.store.runs.get(run.id)).toMatchObject({ status: 'failed' });
  });

  test('an admission refusal ends the run as skipped with its reason', async () => {
    const { run } = await requestReview(t.store, { ...base, headSha: 'a'.repeat(40) });
    next = { status: 'skipped', reason: 'author_paused' };
    const job = await claim();
    expect(await handler()(job, ctxFor(job))).toEqual({ type: 'ack' });
    expect(await t.store.runs.get(run.id)).toMatchObject({ status: 'skipped', reason: 'author_paused' });
  });
});
