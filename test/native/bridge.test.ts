import { example } from '../helpers/webhooks.js';
import { runCommand, startIngress, until, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startIngress({ bindings: { VERDICT_BRIDGE_AUTHORITY: 'live' } });
});
afterAll(() => h.close());

const opened = (number: number, pad = 0) => {
  const p = example('pull_request', 'opened');
  p.installation = { id: 77 };
  p.number = number;
  p.pull_request.number = number;
  if (pad > 0) p.pull_request.body = 'x'.repeat(pad);
  return p;
};

const command = (kind: string, payload: unknown) => runCommand(h, kind, payload);

const messagesOf = async (deliveryId: string, n: number) =>
  (await until(h.seen, (seen) => seen.filter((m) => m.deliveryId === deliveryId).length >= n)).filter(
    (m) => m.deliveryId === deliveryId,
  );

/** review-engine 3.5: the native bridge's replay of a stored delivery (live authority). */
describe('native command bridge: replay-webhook', () => {
  it('replays a stored delivery again to the queue; a processed one needs force', async () => {
    const id = crypto.randomUUID();
    expect((await h.post('pull_request', opened(31), { id })).status).toBe(202);
    const [first] = await messagesOf(id, 1);
    const db = await h.d1();
    await db
      .prepare("UPDATE native_deliveries SET dispatch_outcome = 'dispatched' WHERE id = ?")
      .bind(id)
      .run();

    const refused = await command('replay-webhook', { deliveryId: id });
    expect(refused.status).toBe('failed');
    expect(refused.error).toBe(
      `delivery_processed: delivery ${id} was processed (dispatched); replay it with force`,
    );

    const forced = await command('replay-webhook', { deliveryId: id, force: true });
    expect(forced.status).toBe('succeeded');
    expect(JSON.parse(forced.result)).toEqual({
      deliveryId: id,
      event: 'pull_request',
      replayed: true,
      forced: true,
    });
    const both = await messagesOf(id, 2);
    expect(both[1].body).toBe(first.body);
    const row = await db
      .prepare('SELECT dispatch_outcome, attempts FROM native_deliveries WHERE id = ?')
      .bind(id)
      .first();
    expect(row).toEqual({ dispatch_outcome: null, attempts: 0 });
  });

  it('replays an offloaded delivery from R2 (the object-store fallback)', async () => {
    const id = crypto.randomUUID();
    expect((await h.post('pull_request', opened(32, 100 * 1024), { id })).status).toBe(202);
    await messagesOf(id, 1);
    const replayed = await command('replay-webhook', { deliveryId: id });
    expect(replayed.status).toBe('succeeded');
    const both = await messagesOf(id, 2);
    expect(both.map((m) => m.bodyKey)).toEqual([`deliveries/${id}.json`, `deliveries/${id}.json`]);
  });

  it('fails a command without a delivery id, for an unknown delivery, and of a kind with no native executor', async () => {
    expect(await command('replay-webhook', {})).toMatchObject({
      status: 'failed',
      error: 'invalid_command: replay-webhook needs a deliveryId',
    });
    expect(await command('replay-webhook', { deliveryId: 'nope' })).toMatchObject({
      status: 'failed',
      error: 'delivery_not_found: delivery nope is not recorded',
    });
    expect(await command('prime-watch', {})).toMatchObject({
      status: 'failed',
      error: 'no_native_executor: command kind prime-watch has no native executor',
    });
  });
});
