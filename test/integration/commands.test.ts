import { parseLimit } from '../../src/http/query.js';
import { transitionAllowed, COMMAND_STATUSES } from '../../src/store/commands.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { callApi, TOKENS } from '../helpers/operator.js';

const SHA = 'a'.repeat(40);
const KEY = `acme/api#7@${SHA}`;

/** Operator commands (operator-api 2.3, 3, 4.1, 4.3). */
describe('operator commands', () => {
  let app: RunningVerdict;
  beforeEach(async () => {
    app = await startVerdict(TOKENS);
  });
  afterEach(() => app.stop());

  const call = (
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => callApi(app.baseUrl, method, path, token, body, headers);
  const command = (kind: string, body: unknown, headers: Record<string, string> = {}) =>
    call('POST', `/operator/api/commands/${kind}`, 'command-secret', body, headers);
  const patch = (id: string, body: unknown) =>
    call('PATCH', `/operator/api/commands/${encodeURIComponent(id)}`, 'bridge-secret', body);

  test('creation: 202 created:true, then 200 created:false for the same id, payload not compared', async () => {
    const first = await command(
      'requeue',
      { reviewKey: KEY, reason: 'model outage', commandId: 'c-1' },
      { 'x-operator-actor': 'alice' },
    );
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      ok: true,
      created: true,
      command: {
        id: 'c-1',
        kind: 'requeue',
        status: 'queued',
        reviewKey: KEY,
        repo: 'acme/api',
        prNumber: 7,
        reason: 'model outage',
        actor: 'alice',
      },
    });
    const again = await command('requeue', { repo: 'other/repo', number: 1, commandId: 'c-1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ ok: true, created: false, command: { id: 'c-1', reviewKey: KEY } });
    // The command event for the bridge is persisted.
    const detail = await call('GET', '/operator/api/commands/c-1', 'bridge-secret');
    expect(detail.body.events).toEqual([
      expect.objectContaining({ commandId: 'c-1', type: 'created', toStatus: 'queued', actor: 'alice' }),
    ]);
  });

  test('the Idempotency-Key header wins over the body commandId; without either an id is generated', async () => {
    const res = await command(
      'retry-publish',
      { reviewKey: KEY, commandId: 'body-id' },
      { 'idempotency-key': 'header-id' },
    );
    expect(res.body.command.id).toBe('header-id');
    expect(await app.verdict.store.commands.get('body-id')).toBeNull();
    const generated = await command('replay-webhook', { deliveryId: 'd-1' });
    expect(generated.status).toBe(202);
    expect(generated.body.command).toMatchObject({
      kind: 'replay-webhook',
      deliveryId: 'd-1',
      payload: { deliveryId: 'd-1', force: false },
    });
    expect(generated.body.command.id).toMatch(/^cmd_/);
    expect((await command('replay-webhook', { deliveryId: 'd-1' })).status).toBe(202); // a new id: a new command
  });

  test('concurrent creation with one key leaves exactly one command', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        command('requeue', { reviewKey: KEY }, { 'idempotency-key': 'race-1' }),
      ),
    );
    expect(results.filter((r) => r.status === 202)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(19);
    expect(await app.verdict.store.commands.list()).toHaveLength(1);
    expect(await app.verdict.store.commands.events('race-1')).toHaveLength(1);
  });

  test('bodies are validated with 400s naming the field; nothing is stored', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['requeue', {}, 'reviewKey'],
      ['requeue', { reviewKey: KEY, repo: 'acme/api', number: 7 }, 'reviewKey'],
      ['requeue', { repo: 'acme/api' }, 'number'],
      ['requeue', { repo: 'not a repo', number: 7 }, 'repo'],
      ['requeue', { repo: 'acme/api', number: 0 }, 'number'],
      ['requeue', { repo: 'acme/api', number: 7.5 }, 'number'],
      ['requeue', { reviewKey: 'acme/api#7' }, 'reviewKey'],
      ['requeue', { reviewKey: KEY, variant: 'has space' }, 'variant'],
      ['requeue', { reviewKey: KEY, surprise: 1 }, 'surprise'],
      ['retry-publish', {}, 'reviewKey'],
      ['retry-publish', { reviewKey: KEY, reason: 'x'.repeat(1001) }, 'reason'],
      ['replay-webhook', {}, 'deliveryId'],
      ['replay-webhook', { deliveryId: 'd', force: 'yes' }, 'force'],
      ['replay-webhook', { deliveryId: 'd', commandId: 'has space' }, 'commandId'],
      ['replay-webhook', { deliveryId: 'd', actorId: 'a\u0007' }, 'actorId'],
    ];
    for (const [kind, body, field] of cases) {
      const res = await command(kind, body);
      expect([kind, field, res.status, res.body.error]).toEqual([kind, field, 400, 'invalid_request']);
      expect(res.body.message).toContain(field);
    }
    expect((await command('requeue', '{"reviewKey":')).body.error).toBe('invalid_json');
    expect((await command('requeue', { reviewKey: KEY }, { 'idempotency-key': 'bad key' })).status).toBe(400);
    expect(await app.verdict.store.commands.list()).toEqual([]);
  });

  test('PATCH follows the transition table exactly: 409 otherwise, the same status is allowed', async () => {
    for (const from of COMMAND_STATUSES) {
      for (const to of COMMAND_STATUSES) {
        const expected =
          from === to ||
          (from === 'queued' && to === 'running') ||
          (from === 'running' && ['succeeded', 'failed'].includes(to));
        expect([from, to, transitionAllowed(from, to)]).toEqual([from, to, expected]);
      }
    }
    await command('requeue', { reviewKey: KEY, commandId: 'p-1' });
    expect((await patch('p-1', { status: 'succeeded' })).status).toBe(409);
    expect((await patch('p-1', { status: 'queued' })).status).toBe(200);
    const running = await patch('p-1', { status: 'running', startedAt: '2026-11-22T10:00:00Z' });
    expect(running.body.command).toMatchObject({
      status: 'running',
      startedAt: Date.parse('2026-11-22T10:00:00Z'),
    });
    expect((await patch('p-1', { status: 'queued' })).body).toMatchObject({
      ok: false,
      error: 'invalid_transition',
    });
    const done = await patch('p-1', {
      status: 'failed',
      error: 'review run is not analyzed',
      result: { attempts: 1 },
    });
    expect(done.body.command).toMatchObject({
      status: 'failed',
      error: 'review run is not analyzed',
      result: { attempts: 1 },
    });
    expect(done.body.command.completedAt).toEqual(expect.any(Number));
    for (const to of ['queued', 'running', 'succeeded'] as const) {
      const res = await patch('p-1', { status: to });
      expect([to, res.status]).toEqual([to, 409]);
    }
    expect((await patch('p-1', { status: 'failed' })).status).toBe(200);
    expect((await patch('missing', { status: 'running' })).status).toBe(404);
    expect((await patch('p-1', { status: 'done' })).status).toBe(400);
    expect((await patch('p-1', { status: 'failed', extra: 1 })).status).toBe(400);
    const events = await app.verdict.store.commands.events('p-1');
    expect(events.map((e) => `${e.fromStatus}->${e.toStatus}`)).toEqual([
      'null->queued',
      'queued->running',
      'running->failed',
    ]);
  });

  test('sync-repositories commands cannot be patched; racing PATCHes move a command once', async () => {
    await app.verdict.store.commands.create({
      id: 'sync-1',
      kind: 'sync-repositories',
      payload: {},
      actor: 'cron',
    });
    expect(await patch('sync-1', { status: 'running' })).toMatchObject({
      status: 409,
      body: { error: 'bridge_owned' },
    });
    await command('requeue', { reviewKey: KEY, commandId: 'r-1' });
    await patch('r-1', { status: 'running' });
    const racing = await Promise.all([
      patch('r-1', { status: 'succeeded' }),
      patch('r-1', { status: 'failed' }),
    ]);
    const statuses = racing.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    const winner = racing.find((r) => r.status === 200)!.body.command.status;
    expect((await app.verdict.store.commands.get('r-1'))!.status).toBe(winner);
  });

  test('reads: list with status and limit (default 50, clamped 1..100, non-integer → 50), 404 for a missing id', async () => {
    for (let i = 0; i < 3; i++)
      await command('replay-webhook', { deliveryId: `d-${i}`, commandId: `l-${i}` });
    await patch('l-0', { status: 'running' });
    const all = await call('GET', '/operator/api/commands', 'read-secret');
    expect(all.body.commands.map((c: any) => c.id).sort()).toEqual(['l-0', 'l-1', 'l-2']);
    expect(
      (await call('GET', '/operator/api/commands?status=running', 'bridge-secret')).body.commands.map(
        (c: any) => c.id,
      ),
    ).toEqual(['l-0']);
    expect((await call('GET', '/operator/api/commands?limit=1', 'bridge-secret')).body.commands).toHaveLength(
      1,
    );
    expect((await call('GET', '/operator/api/commands?limit=0', 'bridge-secret')).body.commands).toHaveLength(
      1,
    );
    expect(
      (await call('GET', '/operator/api/commands?limit=abc', 'bridge-secret')).body.commands,
    ).toHaveLength(3);
    expect((await call('GET', '/operator/api/commands?status=bogus', 'bridge-secret')).status).toBe(400);
    expect(await call('GET', '/operator/api/commands/nope', 'read-secret')).toMatchObject({
      status: 404,
      body: { ok: false, error: 'not_found' },
    });
    expect([
      parseLimit(null),
      parseLimit('7'),
      parseLimit('1000'),
      parseLimit('-3'),
      parseLimit('2.5'),
      parseLimit(''),
    ]).toEqual([50, 7, 100, 1, 50, 50]);
  });

  test('token classes: creation needs the command token, PATCH the bridge token, reads bridge or read', async () => {
    const key = (
      await call('POST', '/operator/api/keys', 'admin-secret', {
        name: 'reader',
        scopes: ['read', 'memory:write'],
      })
    ).body.token;
    const rows: Array<[string, string, unknown, string[]]> = [
      ['POST', '/operator/api/commands/requeue', { reviewKey: KEY, commandId: 'm-1' }, ['command-secret']],
      [
        'POST',
        '/operator/api/commands/retry-publish',
        { reviewKey: KEY, commandId: 'm-2' },
        ['command-secret'],
      ],
      [
        'POST',
        '/operator/api/commands/replay-webhook',
        { deliveryId: 'd', commandId: 'm-3' },
        ['command-secret'],
      ],
      ['PATCH', '/operator/api/commands/m-1', { status: 'queued' }, ['bridge-secret']],
      ['GET', '/operator/api/commands', undefined, ['bridge-secret', 'read-secret']],
      ['GET', '/operator/api/commands/m-1', undefined, ['bridge-secret', 'read-secret']],
    ];
    for (const [method, path, body, accepted] of rows) {
      expect([path, (await call(method, path, null, body)).status]).toEqual([path, 401]);
      for (const token of Object.values(TOKENS)) {
        const res = await call(method, path, token, body);
        const ok = accepted.includes(token);
        expect([method, path, token, ok ? res.status < 400 : res.status]).toEqual([
          method,
          path,
          token,
          ok ? true : 401,
        ]);
      }
      // A generated key never reaches commands (operator-api 5.2 rule 2).
      expect([path, (await call(method, path, key, body)).status]).toEqual([path, 403]);
    }
  });
});
