import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { callApi, TOKENS } from '../helpers/operator.js';
import { testDatabaseUrl, type TestDialect } from '../helpers/store.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

/**
 * Inputs SQLite stores and PostgreSQL refuses (issue 37): a NUL byte in a path or query parameter or a body
 * field, and a pull-request number past a 32-bit column, answer the same 400 `invalid_request` on both
 * dialects, never a 500 from the database.
 */
const NUL = '%00';
const GETS = [
  `/commands/cmd${NUL}`,
  `/webhooks/d${NUL}`,
  `/traces/t${NUL}`,
  `/memory/contexts/ctx${NUL}`,
  `/test-lab/r${NUL}`,
  `/commands?q=a${NUL}`,
  `/webhooks?q=a${NUL}`,
  `/keys?q=a${NUL}`,
  `/settings/audit?q=a${NUL}`,
  `/memory/contexts?q=a${NUL}`,
  `/memory/contexts?repo=acme%2Fw${NUL}`,
  `/memory/clusters?repo=acme%2Fw${NUL}`,
  `/memory/knowledge?repo=acme%2Fw${NUL}`,
  `/memory/knowledge/document?repo=acme%2Fweb&path=src${NUL}`,
  `/pr?repo=acme%2Fw${NUL}&number=1`,
  `/snapshot?repo=acme%2Fw${NUL}`,
  `/traces?repo=acme%2Fw${NUL}`,
  `/reports?repo=acme%2Fw${NUL}`,
];

export function paramBytesSuite(dialect: TestDialect) {
  let app: RunningVerdict;
  let schema = '';
  beforeAll(async () => {
    schema = `t_${randomBytes(6).toString('hex')}`;
    app = await startVerdict({
      ...TOKENS,
      ...(dialect === 'pg' && { DATABASE_URL: testDatabaseUrl(), VERDICT_PG_SCHEMA: schema }),
    });
  });
  afterAll(async () => {
    await app?.stop();
    if (dialect === 'pg') {
      const k = knexFactory({ client: 'pg', connection: testDatabaseUrl() });
      await k.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]);
      await k.destroy();
    }
  });

  test.each(GETS)('GET /operator/api%s with a NUL byte answers 400 invalid_request', async (path) => {
    // Key management is the admin token's; every other read the read token's.
    const token = path.startsWith('/keys')
      ? TOKENS.VERDICT_OPERATOR_ADMIN_TOKEN
      : TOKENS.VERDICT_OPERATOR_READ_TOKEN;
    const res = await callApi(app.baseUrl, 'GET', `/operator/api${path}`, token);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });

  test('a body field with a NUL byte answers 400 naming the field', async () => {
    const res = await callApi(
      app.baseUrl,
      'POST',
      '/operator/api/memory/contexts',
      TOKENS.VERDICT_OPERATOR_ADMIN_TOKEN,
      {
        title: 'a\u0000b',
        body: 'text',
      },
    );
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
    expect(res.body.message).toContain('title');
  });

  test('tRPC: a NUL byte in a query or mutation input answers BAD_REQUEST invalid_request', async () => {
    const input = encodeURIComponent(JSON.stringify({ id: 'cmd\u0000' }));
    for (const proc of ['commands.get', 'traces.get']) {
      const res = await callApi(
        app.baseUrl,
        'GET',
        `/trpc/${proc}?input=${input}`,
        TOKENS.VERDICT_OPERATOR_READ_TOKEN,
      );
      expect([proc, res.status, res.body.error?.data?.operatorCode]).toEqual([proc, 400, 'invalid_request']);
    }
  });

  test('a review key whose pull-request number overflows 32 bits answers 400, one that fits is accepted', async () => {
    const key = (n: string) => `acme/web#${n}@${'a'.repeat(40)}`;
    const send = (n: string) =>
      callApi(app.baseUrl, 'POST', '/operator/api/commands/requeue', TOKENS.VERDICT_OPERATOR_COMMAND_TOKEN, {
        reviewKey: key(n),
        reason: 'probe',
      });
    const big = await send('9999999999');
    expect([big.status, big.body.error]).toEqual([400, 'invalid_request']);
    expect(big.body.message).toMatch(/at most 2147483647/);
    expect((await send('2147483647')).status).toBeLessThan(300);
  });
}
