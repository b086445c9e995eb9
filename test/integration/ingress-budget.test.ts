import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { BodyBudget } from '../../src/http/body-budget.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { example, postWebhook, sign } from '../helpers/webhooks.js';

/**
 * The in-flight body budget holds under bodies that are large, slow or only declared (issue 37): bytes are
 * counted as they arrive, ordinary deliveries have a pool that large bodies cannot take, and one client
 * address holds at most its share of the large pool.
 */
const MiB = 1024 * 1024;

describe('BodyBudget', () => {
  const budget = () => new BodyBudget({ capacity: 100 * MiB, maxBodyBytes: 25 * MiB });

  test('an ordinary body uses the ordinary pool, which large bodies never reach', () => {
    const b = budget();
    // Large bodies from many addresses take the whole large pool (75 MiB).
    const large = ['a', 'b', 'c'].map((address) => b.lease(address, 25 * MiB));
    for (const l of large) expect(l.ensure(25 * MiB)).toBe(true);
    expect(b.lease('d', 25 * MiB).ensure(1)).toBe(false);
    // Ordinary bodies still fit, up to the ordinary pool (25 MiB; half of it per address).
    const ordinary = Array.from({ length: 12 }, () => b.lease('github', MiB));
    for (const o of ordinary) expect(o.ensure(MiB)).toBe(true);
    expect(b.lease('github', MiB).ensure(MiB)).toBe(false);
    expect(b.lease('github-2', 1000).ensure(1000)).toBe(true);
    for (const l of large) l.release();
    expect(b.lease('d', 25 * MiB).ensure(25 * MiB)).toBe(true);
  });

  test('one address holds at most one maximum-size body of the large pool; others keep their share', () => {
    const b = budget();
    const mine = Array.from({ length: 50 }, () => b.lease('attacker', 25 * MiB));
    let held = 0;
    for (const l of mine) if (l.ensure(MiB)) held += MiB;
    expect(held).toBe(25 * MiB);
    expect(b.lease('other', 25 * MiB).ensure(25 * MiB)).toBe(true);
    expect(b.inUse).toBe(50 * MiB);
  });

  test('nothing is taken for a declared length; released bytes come back once', () => {
    const b = budget();
    const l = b.lease('a', 25 * MiB);
    expect(b.inUse).toBe(0);
    expect(l.ensure(1000)).toBe(true);
    expect(b.inUse).toBe(1000);
    l.release();
    l.release();
    expect(b.inUse).toBe(0);
  });
});

describe('50 connections declaring 25 MiB bodies cannot block webhook intake', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict({ VERDICT_WORKER_INLINE: '0' });
  });
  afterAll(() => app.stop());

  /** A connection that declares a 25 MiB webhook body and sends `sent` bytes of it. */
  function hog(sent: number): Socket {
    const { port } = new URL(app.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    const head = [
      'POST /github/webhooks HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      `X-GitHub-Delivery: ${randomUUID()}`,
      'X-GitHub-Event: pull_request',
      `X-Hub-Signature-256: ${sign('x')}`,
      `Content-Length: ${25 * MiB}`,
      '',
      '',
    ].join('\r\n');
    socket.write(head + 'x'.repeat(sent));
    return socket;
  }

  /** A signed delivery of `bytes` of padding from a chosen local address. */
  function deliverFrom(localAddress: string, bytes: number): Promise<number> {
    const raw = JSON.stringify({ ...example('pull_request', 'opened'), padding: 'p'.repeat(bytes) });
    return new Promise((resolve, reject) => {
      const req = request(
        `${app.baseUrl}/github/webhooks`,
        {
          method: 'POST',
          localAddress,
          headers: {
            'content-type': 'application/json',
            'x-github-delivery': randomUUID(),
            'x-github-event': 'pull_request',
            'x-hub-signature-256': sign(raw),
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(raw);
    });
  }

  test('holding or trickling: every ordinary signed delivery is accepted, and another address still gets a large one in', async () => {
    // Half hold only headers; half send 600 KB and stall: 15 MiB arrive, a share no address may exceed.
    const hogs = Array.from({ length: 50 }, (_, i) => hog(i % 2 === 0 ? 0 : 600 * 1024));
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 100; i++) {
        statuses.push(
          (await postWebhook(app.baseUrl, 'pull_request', example('pull_request', 'opened'))).status,
        );
      }
      expect(statuses.filter((s) => s !== 202)).toEqual([]);
      // A 5 MiB delivery from another client address fits in the large pool beside them.
      expect(await deliverFrom('127.0.0.2', 5 * MiB)).toBe(202);
    } finally {
      for (const h of hogs) h.destroy();
    }
  }, 60_000);
});
