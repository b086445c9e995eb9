import { request } from 'node:http';
import { ManualClock } from '../../src/clock.js';
import { AUTH_FAILURES_PER_WINDOW, AUTH_WINDOW_MS, AuthThrottle } from '../../src/http/throttle.js';
import { TOKENS } from '../helpers/operator.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

/**
 * Token guessing is throttled per client address (issue 37): after 20 different wrong tokens in a minute,
 * the address gets 429 with Retry-After on the operator API, tRPC, the queue API and the dashboard's
 * sign-in, whatever it presents, until the minute ends; other addresses and repeated stale tokens are not
 * affected.
 */
const READ = TOKENS.VERDICT_OPERATOR_READ_TOKEN;
const UI_TOKEN = 'ui-secret-token';

/** A GET from a chosen local address (the loopback network answers on every 127.x address). */
function getFrom(
  base: string,
  path: string,
  token: string,
  localAddress = '127.0.0.1',
): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { localAddress, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('AuthThrottle', () => {
  test('different wrong tokens count; the same one again does not; the window ends', () => {
    const clock = new ManualClock();
    const t = new AuthThrottle({ now: () => clock.now() });
    for (let i = 0; i < 100; i++) t.failed('10.0.0.1', 'stale-token');
    expect(t.retryAfter('10.0.0.1')).toBeNull();
    for (let i = 1; i < AUTH_FAILURES_PER_WINDOW; i++) t.failed('10.0.0.1', `guess-${i}`);
    expect(t.retryAfter('10.0.0.1')).toBe(AUTH_WINDOW_MS / 1000);
    expect(t.retryAfter('10.0.0.2')).toBeNull();
    clock.advance(AUTH_WINDOW_MS - 1500);
    expect(t.retryAfter('10.0.0.1')).toBe(2);
    clock.advance(1500);
    expect(t.retryAfter('10.0.0.1')).toBeNull();
  });

  test('it forgets the oldest address past its bound', () => {
    const t = new AuthThrottle({ limit: 1, maxClients: 2 });
    t.failed('a', 'x');
    t.failed('b', 'x');
    t.failed('c', 'x');
    expect([t.retryAfter('a'), t.retryAfter('b') !== null, t.retryAfter('c') !== null]).toEqual([
      null,
      true,
      true,
    ]);
  });
});

describe('throttled guessing through the server', () => {
  let app: RunningVerdict;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 10, 28));
    app = await startVerdict(
      { ...TOKENS, VERDICT_OPERATOR_UI_ENABLED: '1', VERDICT_OPERATOR_UI_TOKEN: UI_TOKEN },
      { clock },
    );
  });
  afterEach(() => app.stop());

  test('20 wrong tokens answer 401; then 429 with Retry-After for every token from that address, until the minute ends', async () => {
    for (let i = 0; i < AUTH_FAILURES_PER_WINDOW; i++) {
      expect((await getFrom(app.baseUrl, '/operator/api/repos', `guess-${i}`)).status).toBe(401);
    }
    const right = await getFrom(app.baseUrl, '/operator/api/repos', READ);
    expect(right).toEqual({ status: 429, retryAfter: '60' });
    // Every face that takes a token: tRPC, the queue API.
    const trpc = await getFrom(app.baseUrl, '/trpc/repos.list?input=%7B%7D', READ);
    expect(trpc).toEqual({ status: 429, retryAfter: '60' });
    expect((await getFrom(app.baseUrl, '/queue/stats', TOKENS.VERDICT_QUEUE_ADMIN_TOKEN)).status).toBe(429);
    // Another address is not affected.
    expect((await getFrom(app.baseUrl, '/operator/api/repos', READ, '127.0.0.2')).status).toBe(200);
    clock.advance(AUTH_WINDOW_MS);
    expect((await getFrom(app.baseUrl, '/operator/api/repos', READ)).status).toBe(200);
  });

  test('a client repeating one stale token keeps getting 401, never 429', async () => {
    for (let i = 0; i < 3 * AUTH_FAILURES_PER_WINDOW; i++) {
      expect((await getFrom(app.baseUrl, '/operator/api/repos', 'stale-token')).status).toBe(401);
    }
    expect((await getFrom(app.baseUrl, '/operator/api/repos', READ)).status).toBe(200);
  });

  test("the dashboard's token sign-in is throttled the same way", async () => {
    const signIn = (token: string) =>
      fetch(`${app.baseUrl}/operator/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: app.baseUrl },
        body: JSON.stringify({ token }),
      });
    for (let i = 0; i < AUTH_FAILURES_PER_WINDOW; i++) expect((await signIn(`guess-${i}`)).status).toBe(401);
    const refused = await signIn(UI_TOKEN);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(await refused.json()).toMatchObject({ ok: false, error: 'too_many_requests' });
    clock.advance(AUTH_WINDOW_MS);
    expect((await signIn(UI_TOKEN)).status).toBe(200);
  });
});
