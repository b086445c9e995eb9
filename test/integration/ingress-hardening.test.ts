import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { nextTurn } from '../helpers/turns.js';
import { example, postWebhook, sign } from '../helpers/webhooks.js';

/** A webhook request written by hand: the headers and `sent` bytes of a `declared`-byte body. */
function partialWebhook(
  baseUrl: string,
  opts: { declared?: number; chunked?: boolean; body: string; sent: number; deliveryId?: string },
): { socket: Socket; answer: Promise<string>; closed: Promise<void> } {
  const { port } = new URL(baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const answer = new Promise<string>((resolve) => {
    socket.on('data', () => {
      if (received.includes('\r\n\r\n')) resolve(received);
    });
    socket.on('close', () => resolve(received));
  });
  const head = [
    'POST /github/webhooks HTTP/1.1',
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    `X-GitHub-Delivery: ${opts.deliveryId ?? Math.random().toString(36).slice(2)}`,
    'X-GitHub-Event: pull_request',
    `X-Hub-Signature-256: ${sign(opts.body)}`,
    opts.chunked
      ? 'Transfer-Encoding: chunked'
      : `Content-Length: ${opts.declared ?? Buffer.byteLength(opts.body)}`,
    '',
    '',
  ].join('\r\n');
  const part = opts.body.slice(0, opts.sent);
  socket.write(head + (opts.chunked ? `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n` : part));
  return { socket, answer, closed };
}

const statusOf = (answer: string) => Number(answer.split(' ')[1]);

/**
 * The server's side of the webhook request with this delivery id, once its handler has run as far as it
 * can without more bytes (its body's declared length taken from the in-flight budget).
 */
async function requestArrived(app: RunningVerdict, deliveryId: string): Promise<IncomingMessage> {
  const { server } = app.verdict;
  const req = await new Promise<IncomingMessage>((resolve) => {
    const seen = (req: IncomingMessage) => {
      if (req.headers['x-github-delivery'] !== deliveryId) return;
      server.off('request', seen);
      resolve(req);
    };
    server.on('request', seen);
  });
  await nextTurn();
  return req;
}

/** Waits until the server has read `bytes` from the request's connection (its headers included). */
async function bytesRead(req: IncomingMessage, bytes: number): Promise<void> {
  while (req.socket.bytesRead < bytes) await new Promise((resolve) => setTimeout(resolve, 5));
  await nextTurn();
}

/** Waits until the server has seen a request's connection close, and has finished with the request. */
async function serverClosed(req: IncomingMessage): Promise<void> {
  const { socket } = req;
  if (!socket.destroyed) await new Promise((resolve) => socket.once('close', resolve));
  await nextTurn();
}

describe('ingress hardening: in-flight body budget', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict({
      VERDICT_WORKER_INLINE: '0',
      // 256 KB: bodies declaring up to 32 KB are ordinary (a 64 KB pool), the rest share 192 KB.
      VERDICT_WEBHOOK_INFLIGHT_BYTES: String(256 * 1024),
    });
  });
  afterAll(async () => {
    await app.stop();
  });

  // About 123 KB: a large body.
  const body = JSON.stringify({ ...example('pull_request', 'opened'), padding: 'x'.repeat(100 * 1024) });

  test('a declared length is not taken ahead of its bytes: a request that only declared 60 KB holds what it sent', async () => {
    const arrived = requestArrived(app, 'declared');
    const held = partialWebhook(app.baseUrl, { body, declared: 200_000, sent: 1000, deliveryId: 'declared' });
    await arrived;
    // The whole budget is 256 KB: with the 200 KB declared taken, this body would not fit beside it.
    expect((await postWebhook(app.baseUrl, 'pull_request', JSON.parse(body))).status).toBe(202);
    held.socket.destroy();
  });

  test('a body that does not fit beside the bytes in flight answers 503 ingress_busy; the bytes come back when a request ends', async () => {
    // The first request has sent 100 KB of its body and waits; the large pool is 192 KB.
    const arrived = requestArrived(app, 'first');
    const first = partialWebhook(app.baseUrl, { body, sent: 100_000, deliveryId: 'first' });
    const req = await arrived;
    await bytesRead(req, 100_000);
    const second = partialWebhook(app.baseUrl, { body, sent: body.length });
    const refused = await second.answer;
    expect(statusOf(refused)).toBe(503);
    expect(refused).toMatch(/retry-after: 1/i);
    expect(refused).toContain('"error":"ingress_busy"');
    second.socket.destroy();
    // A small delivery has room that the large bodies cannot take.
    const small = await postWebhook(app.baseUrl, 'pull_request', example('pull_request', 'opened'));
    expect(small.status).toBe(202);
    // The first finishes and is stored.
    first.socket.write(body.slice(100_000));
    expect(statusOf(await first.answer)).toBe(202);
    first.socket.destroy();
    // Its bytes are back: the same body fits again.
    const again = await postWebhook(app.baseUrl, 'pull_request', JSON.parse(body));
    expect(again.status).toBe(202);
  });

  test('a chunked body (no declared length) is counted as it arrives and refused when it passes the budget', async () => {
    const big = JSON.stringify({ ...example('pull_request', 'opened'), padding: 'y'.repeat(250 * 1024) });
    const chunked = partialWebhook(app.baseUrl, { body: big, sent: big.length, chunked: true });
    expect(statusOf(await chunked.answer)).toBe(503);
    chunked.socket.destroy();
    expect((await postWebhook(app.baseUrl, 'pull_request', JSON.parse(body))).status).toBe(202);
  });

  test('a client that goes away mid-body gives its bytes back', async () => {
    const arrived = requestArrived(app, 'gone');
    const gone = partialWebhook(app.baseUrl, { body, sent: 1000, deliveryId: 'gone' });
    const req = await arrived;
    gone.socket.destroy();
    await gone.closed;
    await serverClosed(req);
    expect((await postWebhook(app.baseUrl, 'pull_request', JSON.parse(body))).status).toBe(202);
  });
});

describe('ingress hardening: request timeout and client aborts', () => {
  let app: RunningVerdict;
  const lines: Array<{ level: number; event?: string }> = [];
  beforeAll(async () => {
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    app = await startVerdict({ VERDICT_WORKER_INLINE: '0', VERDICT_REQUEST_TIMEOUT_MS: '300' }, { log });
  });
  afterAll(async () => {
    await app.stop();
  });

  const body = JSON.stringify(example('pull_request', 'opened'));

  test('a body that stalls is answered 408 and its connection closed once the request timeout passes', async () => {
    const started = Date.now();
    const slow = partialWebhook(app.baseUrl, { body, sent: 100 });
    const answer = await slow.answer;
    await slow.closed;
    expect(statusOf(answer)).toBe(408);
    // The timeout (300 ms) is checked every 300 ms here: far from the 300 s of Node's default.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('a client closing mid-body is logged at debug, never as an error', async () => {
    lines.length = 0;
    const arrived = requestArrived(app, 'aborting');
    const gone = partialWebhook(app.baseUrl, { body, sent: 100, deliveryId: 'aborting' });
    const req = await arrived;
    gone.socket.destroy();
    await serverClosed(req);
    expect(lines.find((l) => l.event === 'client-aborted')).toMatchObject({ level: 20 });
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
