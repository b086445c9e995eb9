import { failInsertsWhere } from '../helpers/faults.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { example, postWebhook, prComment, sign } from '../helpers/webhooks.js';

/** The webhook route over real HTTP, with the worker off so the store shows exactly what ingress wrote. */
describe('POST /github/webhooks (ingress only)', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict({ VERDICT_WORKER_INLINE: '0' });
  });
  afterAll(async () => {
    await app.stop();
  });
  const store = () => app.verdict.store;

  test('GET /health answers ok with the service name', async () => {
    const res = await fetch(`${app.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, service: 'verdict' });
  });

  test.each(['x-github-delivery', 'x-github-event', 'x-hub-signature-256'])(
    'missing %s → 400 missing_headers naming it',
    async (h) => {
      const res = await postWebhook(app.baseUrl, 'pull_request', example('pull_request', 'opened'), {
        omit: [h],
      });
      expect(res).toMatchObject({
        status: 400,
        body: { error: 'missing_headers', missing: [h], message: `Missing required header: ${h}` },
      });
      expect(await store().deliveries.get(res.deliveryId)).toBeNull();
    },
  );

  test.each([
    ['a delivery id over 200 characters', { deliveryId: 'd'.repeat(201) }, 'pull_request'],
    ['an event name over 100 characters', {}, 'e'.repeat(101)],
  ])('%s → 400 invalid_headers, nothing stored (both dialects alike)', async (_name, opts, event) => {
    const res = await postWebhook(app.baseUrl, event, example('pull_request', 'opened'), opts);
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_headers' } });
    expect(await store().deliveries.markerExists(res.deliveryId)).toBe(false);
  });

  test('a delivery id of exactly 200 characters is accepted', async () => {
    const res = await postWebhook(app.baseUrl, 'pull_request', example('pull_request', 'opened'), {
      deliveryId: 'd'.repeat(200),
    });
    expect(res.status).toBe(202);
    expect(await store().deliveries.get(res.deliveryId)).not.toBeNull();
  });

  test('a wrong signature → 401 invalid_signature and nothing stored', async () => {
    const payload = example('pull_request', 'opened');
    const res = await postWebhook(app.baseUrl, 'pull_request', payload, { signature: sign('other body') });
    expect(res).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
    expect(await store().deliveries.get(res.deliveryId)).toBeNull();
    expect(await store().deliveries.markerExists(res.deliveryId)).toBe(false);
  });

  test('a signed body that is not JSON → 400 invalid_json', async () => {
    const raw = '{"action": "opened",';
    const res = await postWebhook(app.baseUrl, 'pull_request', null, { raw, signature: sign(raw) });
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
    expect(await store().deliveries.get(res.deliveryId)).toBeNull();
  });

  test('pull_request.opened is recorded with its exact payload and enqueued; a repeat is a duplicate', async () => {
    const payload = example('pull_request', 'opened');
    const raw = JSON.stringify(payload);
    const res = await postWebhook(app.baseUrl, 'pull_request', payload, { raw });
    expect(res).toMatchObject({
      status: 202,
      body: { accepted: true, ignored: false, outcome: 'enqueued', deliveryId: res.deliveryId },
    });
    const delivery = await store().deliveries.get(res.deliveryId);
    expect(delivery).toMatchObject({
      event: 'pull_request',
      action: 'opened',
      status: 'queued',
      repo: 'Codertocat/Hello-World',
      prNumber: 2,
      payloadBytes: Buffer.byteLength(raw),
    });
    expect(await store().deliveries.payload(res.deliveryId)).toBe(raw);
    const jobs = (await store().jobs.list({ queue: 'webhooks' })).filter(
      (j) => (j.payload as any).deliveryId === res.deliveryId,
    );
    expect(jobs).toHaveLength(1);

    const again = await postWebhook(app.baseUrl, 'pull_request', payload, {
      raw,
      deliveryId: res.deliveryId,
    });
    expect(again).toMatchObject({
      status: 200,
      body: { accepted: true, ignored: true, outcome: 'duplicate_delivery' },
    });
    const after = (await store().jobs.list({ queue: 'webhooks' })).filter(
      (j) => (j.payload as any).deliveryId === res.deliveryId,
    );
    expect(after).toHaveLength(1);
  });

  test("Probot's default path /api/github/webhooks is accepted too", async () => {
    const res = await postWebhook(app.baseUrl, 'pull_request', example('pull_request', 'opened'), {
      path: '/api/github/webhooks',
    });
    expect(res.status).toBe(202);
  });

  test.each([
    ['pull_request', 'closed', 'unsupported_action'],
    ['pull_request', 'labeled', 'unsupported_action'],
    ['push', undefined, 'unsupported_event'],
    ['ping', undefined, 'ping'],
    ['issue_comment', 'deleted', 'unsupported_action'],
  ])('%s.%s is accepted, recorded and ignored as %s', async (event, action, outcome) => {
    const res = await postWebhook(app.baseUrl, event, example(event, action));
    expect(res).toMatchObject({ status: 200, body: { accepted: true, ignored: true, outcome } });
    expect(await store().deliveries.get(res.deliveryId)).toMatchObject({ status: 'ignored', outcome });
  });

  test('a synchronize whose before equals after is a no_op', async () => {
    const payload = example('pull_request', 'synchronize');
    payload.before = payload.after;
    const res = await postWebhook(app.baseUrl, 'pull_request', payload);
    expect(res.body).toMatchObject({ ignored: true, outcome: 'no_op' });
  });

  test('a comment command is enqueued; a comment without one is ignored as no_command', async () => {
    const cmd = await postWebhook(app.baseUrl, 'issue_comment', prComment('@verdict review please'));
    expect(cmd).toMatchObject({ status: 202, body: { outcome: 'enqueued' } });
    const chat = await postWebhook(app.baseUrl, 'issue_comment', prComment('thanks @verdict, looks good'));
    expect(chat).toMatchObject({ status: 200, body: { ignored: true, outcome: 'no_command' } });
  });

  test('a failed enqueue answers 500 enqueue_failed, keeps nothing, and the redelivery is accepted', async () => {
    const payload = example('pull_request', 'opened');
    const restore = await failInsertsWhere(store(), 'jobs', 'payload', 'redeliver-me');
    const deliveryId = 'redeliver-me-1';
    const first = await postWebhook(app.baseUrl, 'pull_request', payload, { deliveryId });
    expect(first).toMatchObject({ status: 500, body: { error: 'enqueue_failed' } });
    expect(await store().deliveries.get(deliveryId)).toBeNull();
    expect(await store().deliveries.markerExists(deliveryId)).toBe(false);
    await restore();
    const redelivery = await postWebhook(app.baseUrl, 'pull_request', payload, { deliveryId });
    expect(redelivery).toMatchObject({ status: 202, body: { outcome: 'enqueued' } });
    expect(await store().deliveries.get(deliveryId)).toMatchObject({ status: 'queued', attempts: 1 });
    const jobs = (await store().jobs.list({ queue: 'webhooks', limit: 100 })).filter(
      (j) => (j.payload as any).deliveryId === deliveryId,
    );
    expect(jobs).toHaveLength(1);
  });

  test('a failed record of an ignored delivery answers 500 delivery_record_failed', async () => {
    const restore = await failInsertsWhere(store(), 'deliveries', 'id', 'record-fails');
    const res = await postWebhook(app.baseUrl, 'push', example('push'), { deliveryId: 'record-fails-1' });
    expect(res).toMatchObject({ status: 500, body: { error: 'delivery_record_failed' } });
    await restore();
    const again = await postWebhook(app.baseUrl, 'push', example('push'), { deliveryId: 'record-fails-1' });
    expect(again).toMatchObject({ status: 200, body: { outcome: 'unsupported_event' } });
  });

  test('a body over 25 MB is refused with 413 without being stored', async () => {
    const big = Buffer.alloc(25 * 1024 * 1024 + 10, 0x20);
    const res = await fetch(`${app.baseUrl}/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-delivery': 'too-big',
        'x-github-event': 'pull_request',
        'x-hub-signature-256': sign(big),
      },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'payload_too_large' });
    expect(await store().deliveries.get('too-big')).toBeNull();
  });

  test('unknown paths answer 404 JSON', async () => {
    const res = await fetch(`${app.baseUrl}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ ok: false, error: 'not_found' });
  });
});
