import { example, prComment, sign } from '../helpers/webhooks.js';
import { startIngress, until, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startIngress({ bindings: { DEDUPE_TTL_SECONDS: '120' } });
});
afterAll(() => h.close());

const opened = () => {
  const p = example('pull_request', 'opened');
  p.installation = { id: 77 };
  return p;
};

describe('native ingress: routes', () => {
  it('answers GET /health', async () => {
    const res = await h.mf.dispatchFetch('http://verdict.local/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it.each(['/operator/api/runs', '/api/github/webhooks', '/', '/dashboard'])('404 on %s', async (path) => {
    const res = await h.mf.dispatchFetch(`http://verdict.local${path}`);
    expect(res.status).toBe(404);
    await res.text();
  });

  it('404 on GET /github/webhooks', async () => {
    const res = await h.mf.dispatchFetch('http://verdict.local/github/webhooks');
    expect(res.status).toBe(404);
    await res.text();
  });
});

describe('native ingress: errors of 7.1 in the order of 4.1', () => {
  it('400 missing_headers names the missing headers (before the signature)', async () => {
    const res = await h.mf.dispatchFetch('http://verdict.local/github/webhooks', {
      method: 'POST',
      headers: { 'x-github-event': 'ping' },
      body: 'not json',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: 'missing_headers',
      missing: ['x-github-delivery', 'x-hub-signature-256'],
    });
  });

  it('401 invalid_signature before JSON is parsed', async () => {
    const r = await h.post('pull_request', null, { raw: 'not json', signature: sign('other') });
    expect(r).toEqual({ status: 401, body: { error: 'invalid_signature' } });
  });

  it('401 for an upper-case digest (the shared signature rule)', async () => {
    const raw = JSON.stringify(opened());
    const r = await h.post('pull_request', null, {
      raw,
      signature: sign(raw).toUpperCase().replace('SHA256', 'sha256'),
    });
    expect(r.status).toBe(401);
  });

  it('400 invalid_json after a valid signature', async () => {
    const r = await h.post('pull_request', null, { raw: '{nope' });
    expect(r).toEqual({ status: 400, body: { error: 'invalid_json' } });
  });
});

describe('native ingress: accepted deliveries', () => {
  it('enqueues pull_request.opened once, records it in D1, and dedupes a redelivery', async () => {
    const id = 'dup-' + crypto.randomUUID();
    const first = await h.post('pull_request', opened(), { id });
    expect(first).toEqual({
      status: 202,
      body: { accepted: true, ignored: false, outcome: 'enqueued', deliveryId: id },
    });
    const again = await h.post('pull_request', opened(), { id });
    expect(again).toEqual({
      status: 200,
      body: { accepted: true, ignored: true, outcome: 'duplicate_delivery', deliveryId: id },
    });
    const kv = await h.kv();
    const { keys } = await kv.list({ prefix: `delivery:${id}` });
    expect(keys).toHaveLength(1);
    expect(keys[0]!.expiration).toBeGreaterThan(Date.now() / 1000 + 60);
    expect(keys[0]!.expiration).toBeLessThanOrEqual(Date.now() / 1000 + 121);
    const db = await h.d1();
    const row = await db.prepare('SELECT * FROM native_deliveries WHERE id = ?').bind(id).first();
    expect(row).toMatchObject({ event: 'pull_request', action: 'opened', outcome: 'enqueued' });
    const seen = await until(h.seen, (s) => s.some((m) => m.deliveryId === id));
    const mine = seen.filter((m) => m.deliveryId === id);
    expect(mine).toHaveLength(1);
    expect(JSON.parse(mine[0].body).action).toBe('opened');
    expect(mine[0].bodyKey).toBeUndefined();
  });

  it('offloads a payload above 96 KiB to R2; the message carries the key', async () => {
    const id = 'big-' + crypto.randomUUID();
    const p = opened();
    p.pull_request.body = 'x'.repeat(100 * 1024);
    const r = await h.post('pull_request', p, { id });
    expect(r.status).toBe(202);
    const seen = await until(h.seen, (s) => s.some((m) => m.deliveryId === id));
    const msg = seen.find((m) => m.deliveryId === id);
    expect(msg.body).toBeUndefined();
    expect(msg.bodyKey).toBe(`deliveries/${id}.json`);
    const r2 = await h.r2();
    const stored = await r2.get(msg.bodyKey);
    expect(JSON.parse(await stored!.text()).pull_request.body).toHaveLength(100 * 1024);
  });

  it('records pull_request.edited as ignored unsupported_action without enqueueing', async () => {
    const id = 'edit-' + crypto.randomUUID();
    const p = opened();
    p.action = 'edited';
    const r = await h.post('pull_request', p, { id });
    expect(r).toEqual({
      status: 200,
      body: { accepted: true, ignored: true, outcome: 'unsupported_action', deliveryId: id },
    });
    const db = await h.d1();
    const row = await db.prepare('SELECT outcome FROM native_deliveries WHERE id = ?').bind(id).first();
    expect(row.outcome).toBe('unsupported_action');
  });

  it('answers a non-PR comment and an unsupported event accepted and ignored', async () => {
    const issue = example('issue_comment', 'created');
    delete issue.issue.pull_request;
    const a = await h.post('issue_comment', issue);
    expect(a.body).toMatchObject({ accepted: true, ignored: true, outcome: 'not_pull_request_comment' });
    const b = await h.post('star', { action: 'created' });
    expect(b.body).toMatchObject({ accepted: true, ignored: true, outcome: 'unsupported_event' });
  });

  it('enqueues created and edited PR comment commands; plain comments are ignored', async () => {
    const created = await h.post('issue_comment', prComment('@verdict review'));
    expect(created.status).toBe(202);
    const edited = prComment('@Verdict   rerun please');
    edited.action = 'edited';
    expect((await h.post('issue_comment', edited)).status).toBe(202);
    const plain = await h.post('issue_comment', prComment('looks good'));
    expect(plain.body).toMatchObject({ ignored: true, outcome: 'no_command' });
  });
});

describe('native ingress: failures delete the marker (6.2)', () => {
  it('500 enqueue_failed when an oversized payload cannot be offloaded; a redelivery is accepted', async () => {
    const bare = await startIngress({ r2: false });
    try {
      const id = 'noR2-' + crypto.randomUUID();
      const p = opened();
      p.pull_request.body = 'y'.repeat(130 * 1024);
      const r = await bare.post('pull_request', p, { id });
      expect(r).toEqual({ status: 500, body: { error: 'enqueue_failed' } });
      const kv = await bare.kv();
      expect(await kv.get(`delivery:${id}`)).toBeNull();
      p.pull_request.body = 'small';
      expect((await bare.post('pull_request', p, { id })).status).toBe(202);
    } finally {
      await bare.close();
    }
  });

  it('500 delivery_record_failed when D1 refuses the record; the marker is gone', async () => {
    const broken = await startIngress();
    try {
      const db = await broken.d1();
      // A table that refuses every row (schema setup adds the columns it lacks, not its CHECK).
      await db.prepare("CREATE TABLE native_deliveries (id TEXT PRIMARY KEY CHECK (id = ''))").run();
      const id = 'rec-' + crypto.randomUUID();
      const r = await broken.post('star', { action: 'created' }, { id });
      expect(r).toEqual({ status: 500, body: { error: 'delivery_record_failed' } });
      const kv = await broken.kv();
      expect(await kv.get(`delivery:${id}`)).toBeNull();
      const r2 = await broken.post('pull_request', opened());
      expect(r2).toEqual({ status: 500, body: { error: 'enqueue_failed' } });
    } finally {
      await broken.close();
    }
  });
});
