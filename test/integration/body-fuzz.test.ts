import { reviewPolicySchema } from '../../src/policy/policy.schema.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { TOKENS } from '../helpers/operator.js';

/**
 * Table-driven and seeded random bodies against every write route of the operator API: random JSON, wrong
 * types, huge strings, control characters, deep nesting and broken JSON. The answer is never a 5xx, and a
 * refused write leaves what is stored exactly as it was (never half-written).
 */

/** mulberry32: a small seeded generator, so a failure can be replayed from its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NASTY_STRINGS = [
  '',
  ' ',
  'a'.repeat(300_000),
  'x'.repeat(20_001),
  '\u0000',
  'tab\tnew\nline',
  '\u007f',
  '\u202e\u200b',
  '🙂'.repeat(1000),
  '../../etc/passwd',
  '**',
  'src/**.ts',
  '<script>alert(1)</script>',
  '@everyone',
  "' OR 1=1 --",
  'acme/api',
  'queued',
  'running',
  'succeeded',
  'low',
  'high',
  'is',
  'contains',
  'label',
  'acme/api#1@' + 'a'.repeat(40),
];
const NASTY_NUMBERS = [0, -1, 1, 2.5, 5, 6, 100_000, 100_001, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e308, -0];

function randomValue(next: () => number, depth = 0): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  switch (Math.floor(next() * (depth > 4 ? 5 : 8))) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return pick(NASTY_NUMBERS);
    case 3:
    case 4:
      return pick(NASTY_STRINGS);
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      const keys = [
        'enabled',
        'status',
        'settings',
        'revision',
        'filters',
        'values',
        'field',
        'operator',
        'name',
        'scopes',
        'reviewKey',
        'repo',
        'number',
        'force',
        'deliveryId',
        'title',
        'body',
        'paths',
        'path',
        'label',
        'action',
        'exemplar',
        'extra',
        '__proto__',
        'constructor',
      ];
      for (let i = Math.floor(next() * 4); i > 0; i--) out[pick(keys)] = randomValue(next, depth + 1);
      return out;
    }
  }
}

/** A copy of `doc` with one random path replaced by a random value (or a random key added). */
function mutate(doc: unknown, next: () => number): unknown {
  const copy = JSON.parse(JSON.stringify(doc));
  let node = copy;
  for (let depth = 0; depth < 4; depth++) {
    const keys = node && typeof node === 'object' ? Object.keys(node) : [];
    if (keys.length === 0) break;
    const key = keys[Math.floor(next() * keys.length)]!;
    if (next() < 0.35 || typeof node[key] !== 'object' || node[key] === null) {
      node[next() < 0.1 ? 'unknownField' : key] = randomValue(next, 2);
      return copy;
    }
    node = node[key];
  }
  return copy;
}

describe('write bodies under fuzzing: never a 500, never half-written', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict(TOKENS);
    await app.verdict.store.repositories.upsertInstalled('acme/api', 9);
    await app.verdict.store.commands.create({
      id: 'cmd-q',
      kind: 'requeue',
      actor: 't',
      reason: null,
      requestedActorId: null,
      payload: {},
      reviewKey: null,
      repo: 'acme/api',
      prNumber: 1,
    });
  });
  afterAll(() => app.stop());

  async function send(method: string, path: string, token: string, body: string) {
    const res = await fetch(app.baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text };
  }

  const bodies = (seed: number, count: number, base?: unknown): string[] => {
    const next = rng(seed);
    const out = [
      '',
      '{',
      'null',
      '[]',
      '"text"',
      '{"a":',
      '\u0000',
      '{}'.padEnd(10, ' '),
      JSON.stringify({ deep: JSON.parse('['.repeat(500) + ']'.repeat(500)) }),
    ];
    for (let i = 0; i < count; i++) {
      const value = base !== undefined && next() < 0.7 ? mutate(base, next) : randomValue(next);
      out.push(JSON.stringify(value) ?? 'null');
    }
    return out;
  };

  test('PATCH /settings: each answer is 200, 400, 409 or 413; refused writes change nothing', async () => {
    const { store } = app.verdict;
    const statuses = new Map<number, number>();
    for (const [i, raw] of bodies(1, 300).entries()) {
      const before = (await store.policy.get())!;
      let body = raw;
      // Most bodies carry the current revision around a mutated policy, so the merge and validation run.
      if (i % 3 !== 0) {
        const next = rng(1000 + i);
        body = JSON.stringify({
          revision: i % 7 === 0 ? before.revision - 1 : before.revision,
          settings: mutate(before.settings, next),
        });
      }
      const res = await send('PATCH', '/operator/api/settings', 'admin-secret', body);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect([i, [200, 400, 409, 413].includes(res.status)]).toEqual([i, true]);
      const after = (await store.policy.get())!;
      if (res.status === 200) {
        expect(after.revision).toBe(before.revision + 1);
        expect(reviewPolicySchema.safeParse(after.settings).success).toBe(true);
      } else {
        expect([i, after.revision, after.settings]).toEqual([i, before.revision, before.settings]);
      }
    }
    // The fuzz reached every branch: accepted, invalid, stale.
    expect(statuses.get(200)).toBeGreaterThan(0);
    expect(statuses.get(400)).toBeGreaterThan(0);
    expect(statuses.get(409)).toBeGreaterThan(0);
  }, 120_000);

  test('PATCH /repos/:repo: refused bodies leave the configuration untouched', async () => {
    const { store } = app.verdict;
    const valid = {
      enabled: true,
      branches: { include: ['main'], exclude: [] },
      model: { provider: 'openai' },
      reason: 'x',
    };
    const seen = new Set<number>();
    for (const [i, body] of bodies(2, 250, valid).entries()) {
      const before = await store.repositories.get('acme/api');
      const res = await send('PATCH', '/operator/api/repos/acme%2Fapi', 'admin-secret', body);
      seen.add(res.status);
      expect([i, [200, 400, 413].includes(res.status)]).toEqual([i, true]);
      if (res.status !== 200) expect([i, await store.repositories.get('acme/api')]).toEqual([i, before]);
    }
    expect([seen.has(200), seen.has(400)]).toEqual([true, true]);
  }, 120_000);

  test('command creation: refused bodies create nothing', async () => {
    const knex = app.verdict.store.db.knex;
    const count = async () => Number((await knex('operator_commands').count({ n: '*' }).first())!.n);
    const valid = { reviewKey: 'acme/api#1@' + 'a'.repeat(40), reason: 'r' };
    for (const kind of ['requeue', 'retry-publish', 'replay-webhook']) {
      for (const [i, body] of bodies(3 + kind.length, 120, valid).entries()) {
        const before = await count();
        const res = await send('POST', `/operator/api/commands/${kind}`, 'command-secret', body);
        expect([kind, i, [200, 202, 400, 413].includes(res.status)]).toEqual([kind, i, true]);
        if (res.status >= 400) expect([kind, i, await count()]).toEqual([kind, i, before]);
      }
    }
  }, 120_000);

  test('command PATCH: refused bodies leave the command as it was', async () => {
    const { store } = app.verdict;
    for (const [i, body] of bodies(4, 200, { status: 'running', error: null, result: { a: 1 } }).entries()) {
      const before = await store.commands.get('cmd-q');
      const res = await send('PATCH', '/operator/api/commands/cmd-q', 'bridge-secret', body);
      expect([i, [200, 400, 409, 413].includes(res.status)]).toEqual([i, true]);
      if (res.status !== 200) expect([i, await store.commands.get('cmd-q')]).toEqual([i, before]);
    }
  }, 120_000);

  test('key creation: refused bodies create no key', async () => {
    const { store } = app.verdict;
    for (const [i, body] of bodies(5, 150, { name: 'ci', scopes: ['read'] }).entries()) {
      const before = (await store.apiKeys.list({})).length;
      const res = await send('POST', '/operator/api/keys', 'admin-secret', body);
      expect([i, [201, 400, 413].includes(res.status)]).toEqual([i, true]);
      if (res.status !== 201) expect([i, (await store.apiKeys.list({})).length]).toEqual([i, before]);
    }
  }, 120_000);
  test('memory writes: each answer is 2xx, 400, 404, 409 or 413; refused writes change nothing', async () => {
    const { store } = app.verdict;
    const ok = [200, 201, 400, 404, 409, 413];
    const contexts = async () => JSON.stringify(await store.memory.listContexts({ limit: 100 }));
    const validContext = { repo: 'acme/api', paths: ['src/**'], title: 'Rule', body: 'Text.', enabled: true };
    for (const [i, body] of bodies(6, 150, validContext).entries()) {
      const before = await contexts();
      const res = await send('POST', '/operator/api/memory/contexts', 'admin-secret', body);
      expect([i, ok.includes(res.status)]).toEqual([i, true]);
      if (res.status !== 201) expect([i, await contexts()]).toEqual([i, before]);
    }
    const target = await store.memory.createContext({ ...validContext, createdBy: 't' });
    const patches = new Set<number>();
    for (const [i, raw] of bodies(7, 150, { title: 'New', paths: ['lib/*.ts'], enabled: false }).entries()) {
      const before = (await store.memory.getContext(target.id))!;
      // Most bodies carry the current (or a stale) revision, so validation and the revision check run.
      let body = raw;
      try {
        const parsed = JSON.parse(raw);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && i % 4 !== 0) {
          body = JSON.stringify({ ...parsed, revision: i % 5 === 0 ? before.revision - 1 : before.revision });
        }
      } catch {
        // broken JSON is sent as it is
      }
      const res = await send('PATCH', `/operator/api/memory/contexts/${target.id}`, 'admin-secret', body);
      patches.add(res.status);
      expect([i, ok.includes(res.status)]).toEqual([i, true]);
      const after = (await store.memory.getContext(target.id))!;
      if (res.status === 200) expect(after.revision).toBe(before.revision + 1);
      else expect([i, after]).toEqual([i, before]);
    }
    expect([patches.has(200), patches.has(400), patches.has(409)]).toEqual([true, true, true]);
    const documents = async () => JSON.stringify(await store.memory.listKnowledge({ limit: 100 }));
    for (const [i, body] of bodies(8, 150, { repo: 'acme/api', path: 'src', body: 'Notes.' }).entries()) {
      const before = await documents();
      const res = await send('PUT', '/operator/api/memory/knowledge/document', 'admin-secret', body);
      expect([i, ok.includes(res.status)]).toEqual([i, true]);
      if (res.status !== 200) expect([i, await documents()]).toEqual([i, before]);
    }
  }, 120_000);
});
