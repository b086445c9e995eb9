import { PassThrough } from 'node:stream';
import { createLogger } from '../../../src/logger.js';
import { nativeConfig } from '../../../src/native/container/env.js';
import { internalClient } from '../../../src/native/container/internal.js';
import { ContainerService } from '../../../src/native/container/service.js';
import {
  containerErrorSchema,
  containerHealthSchema,
  stateFlushSchema,
} from '../../../src/native/protocol.js';
import type { RunRecord } from '../../../src/store/runs.js';
import type { FakeGitHub } from '../../helpers/fake-github.js';
import { eventually } from '../../helpers/webhooks.js';
import {
  FakeInternal,
  FakeModel,
  HEAD,
  REPO,
  containerTestEnv,
  fakeGitHub,
  reviewRequest,
  seedBundle,
} from './fakes.js';

/**
 * The review container in process (src/native/container/service.ts) against a fake worker (state and
 * broker hosts), a local fake GitHub and a local OpenAI-compatible model.
 */
describe('native review container', () => {
  let internal: FakeInternal;
  let model: FakeModel;
  let github: FakeGitHub;
  let service: ContainerService;
  let base: string;
  let run: RunRecord;
  let logLines: any[];

  async function start(publishMode: 'live' | 'shadow', phaseLogMs?: number) {
    const seeded = await seedBundle();
    run = seeded.run;
    internal = new FakeInternal(seeded.bundle);
    const internalOrigin = await internal.listen();
    model = new FakeModel();
    const modelUrl = await model.listen();
    github = fakeGitHub();
    await github.listen();
    const env = { ...containerTestEnv(modelUrl, github), VERDICT_PUBLISH_MODE: publishMode };
    const out = new PassThrough();
    logLines = [];
    out.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
    });
    service = new ContainerService({
      config: nativeConfig(env),
      log: createLogger('info', out, 'json'),
      internal: internalClient(internalOrigin),
      publishMode,
      maxAttempts: 8,
      stopWithinMs: 4000,
      ...(phaseLogMs !== undefined && { phaseLogMs }),
    });
    const port = await service.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${port}`;
  }

  afterEach(async () => {
    await service?.stop();
    await internal?.close();
    await model?.close();
    await github?.close();
  });

  const post = (body: unknown) =>
    fetch(`${base}/review`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const errorOf = async (res: Response) => containerErrorSchema.parse(await res.json()).error;
  const health = async () => containerHealthSchema.parse(await (await fetch(`${base}/health`)).json());

  it('reviews a run end to end: hydrates, publishes to GitHub, then answers after the final flush', async () => {
    await start('live');
    expect(await health()).toEqual({ ok: true, phase: 'idle', runId: null });
    const res = await post(reviewRequest(run));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ runId: run.id, status: 'completed' });

    // Published on GitHub: a review with the finding and a completed check run, on a brokered token.
    const reviews = github.submittedReviews();
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.commit_id).toBe(HEAD);
    expect(JSON.stringify(reviews[0])).toContain('Eviction races with writes');
    // Without VERDICT_CF_SANDBOX_ENABLED=1 the container has no sandbox for validation (review-engine 7.4).
    expect(reviews[0]!.body).toContain('no sandbox binding available');
    expect([...github.checkRuns.values()].map((c) => c.status)).toEqual(['completed']);
    expect(internal.calls.filter((c) => c.host === 'broker.internal')[0]!.body).toEqual({
      installationId: 77,
      runId: run.id,
      leaseToken: 'lease-token-1',
    });

    // One final flush, shaped as the protocol says: the run changed, findings and publications created.
    expect(internal.flushes).toHaveLength(1);
    const flush = stateFlushSchema.parse(internal.flushes[0]);
    expect(flush).toMatchObject({ runId: run.id, leaseToken: 'lease-token-1', final: true });
    const runs = flush.tables.runs!;
    expect(runs.insert).toEqual([]);
    expect(runs.upsert).toEqual([expect.objectContaining({ id: run.id, status: 'completed' })]);
    const findings = flush.tables.findings!;
    expect(findings.insert.length).toBeGreaterThanOrEqual(1);
    expect(findings.insert[0]).not.toHaveProperty('id');
    expect(findings.insert[0]).toMatchObject({ repo: REPO, pr_number: 7 });
    const publications = flush.tables.publications!;
    expect(publications.insert.length).toBeGreaterThanOrEqual(1);
    for (const row of publications.insert) expect(row).not.toHaveProperty('id');
    expect(flush.tables.traces!.insert.length).toBeGreaterThanOrEqual(1);
    // The bundle's untouched rows are not sent back.
    expect(flush.tables.repositories).toBeUndefined();
    expect(await health()).toEqual({ ok: true, phase: 'idle', runId: null });
    // Nothing the review wrote lies outside the state contract.
    expect(logLines.filter((l) => l.event === 'container-state-not-flushed')).toEqual([]);
  });

  it('a retry after an attempt that published but lost its state (its flush refused) publishes nothing twice', async () => {
    await start('live');
    internal.failFlushes = 1;
    const first = await post(reviewRequest(run));
    expect(first.ok).toBe(false);
    expect(github.submittedReviews()).toHaveLength(1);
    expect(github.checkRuns.size).toBe(1);
    const [review] = github.submittedReviews();
    const [checkId] = [...github.checkRuns.keys()];

    // The queue's next attempt: D1 holds nothing of the first (the same bundle is handed over).
    const again = await post(reviewRequest(run, { attempt: 2 }));
    expect(await again.json()).toEqual({ runId: run.id, status: 'completed' });
    expect(github.submittedReviews()).toHaveLength(1);
    expect(github.checkRuns.size).toBe(1);
    expect(github.checkRuns.get(checkId!)!.status).toBe('completed');
    // The ledger rows flushed by the retry record GitHub's ids of what the first attempt posted.
    const flush = stateFlushSchema.parse(internal.flushes.at(-1));
    const published = flush.tables.publications!.insert.filter((p) => p.status === 'published');
    expect(published.map((p) => p.receipt)).toEqual(
      expect.arrayContaining([String(review!.id), String(checkId)]),
    );
    expect(logLines.filter((l) => l.event === 'publish-recovered').length).toBeGreaterThanOrEqual(2);
  });

  it('in shadow mode reviews and stores, and publishes nothing to GitHub', async () => {
    await start('shadow');
    const res = await post(reviewRequest(run, { publishMode: 'shadow' }));
    expect(await res.json()).toEqual({ runId: run.id, status: 'completed' });
    expect(github.calls.filter((c) => c.method !== 'GET')).toEqual([]);
    expect(github.submittedReviews()).toEqual([]);
    const flush = stateFlushSchema.parse(internal.flushes[0]);
    expect(flush.tables.runs!.upsert[0]).toMatchObject({ status: 'completed' });
    expect(flush.tables.findings!.insert.length).toBeGreaterThanOrEqual(1);
  });

  it('refuses a run whose publish mode differs from the container’s (review-engine 7.5)', async () => {
    await start('shadow');
    const res = await post(reviewRequest(run, { publishMode: 'live' }));
    expect(res.status).toBe(409);
    expect((await errorOf(res)).code).toBe('publish_mode_mismatch');
    expect(internal.calls).toEqual([]);
  });

  it('answers 400 invalid_request for a body outside the protocol', async () => {
    await start('live');
    const res = await post({ ...reviewRequest(run), prNumber: 'seven' });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain('prNumber');
    const notJson = await fetch(`${base}/review`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('answers 503 container_busy beside a running review, reports its phase and logs it', async () => {
    await start('live', 20);
    let release!: () => void;
    model.gate = new Promise((resolve) => (release = resolve));
    const first = post(reviewRequest(run));
    await eventually(async () => model.reviewCalls > 0, 10_000);
    expect(await health()).toEqual({ ok: true, phase: 'reviewing', runId: run.id });
    const busy = await post(reviewRequest(run, { leaseToken: 'other' }));
    expect(busy.status).toBe(503);
    expect((await errorOf(busy)).code).toBe('container_busy');
    const phaseLine = await eventually(
      async () => logLines.find((l) => l.event === 'container-phase' && l.phase === 'reviewing'),
      10_000,
    );
    expect(phaseLine).toMatchObject({ runId: run.id, msg: 'container phase reviewing' });
    release();
    expect((await first).status).toBe(200);
    expect(internal.flushes.map((f) => f.final)).toEqual([true]);
  });

  it('while stopping: 503 container_stopping, the running review aborted and checkpointed', async () => {
    await start('live');
    model.gate = new Promise(() => undefined); // the model never answers
    const first = post(reviewRequest(run));
    await eventually(async () => model.reviewCalls > 0, 10_000);
    let flushed!: () => void;
    internal.flushGate = new Promise((resolve) => (flushed = resolve));
    const stopping = service.stop();
    // The checkpoint flush is on its way (held by the fake worker): the container is stopping.
    await eventually(async () => internal.flushes.length > 0, 10_000);
    expect(await health()).toMatchObject({ ok: false, phase: 'stopping', runId: run.id });
    const refused = await post(reviewRequest(run));
    expect(refused.status).toBe(503);
    expect((await errorOf(refused)).code).toBe('container_stopping');
    const answer = await first;
    expect(answer.status).toBe(503);
    expect((await errorOf(answer)).code).toBe('container_stopping');
    flushed();
    await stopping;
    expect(internal.flushes).toHaveLength(1);
    const checkpoint = stateFlushSchema.parse(internal.flushes[0]);
    expect(checkpoint.final).toBe(false);
    expect(checkpoint.tables.runs!.upsert[0]).toMatchObject({ id: run.id, status: 'running' });
  });
});
