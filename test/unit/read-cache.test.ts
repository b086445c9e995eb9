import knexFactory from 'knex';
import { ReadCache, StampedCache, watchShownWrites } from '../../src/services/read-cache.js';

/** An in-memory SQLite knex whose queries `watchShownWrites` can watch. */
const memoryKnex = () =>
  knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true });

describe('ReadCache', () => {
  let now = 0;
  const cache = (ttl = 1000) => new ReadCache(ttl, () => now);
  beforeEach(() => {
    now = 0;
  });

  test('serves an identical read within the TTL, loads again after it', async () => {
    const c = cache();
    let loads = 0;
    const load = async () => ++loads;
    expect(await c.get('k', load)).toBe(1);
    now = 999;
    expect(await c.get('k', load)).toBe(1);
    now = 1000;
    expect(await c.get('k', load)).toBe(2);
    expect(await c.get('other', load)).toBe(3);
  });

  test('concurrent identical reads share one load', async () => {
    const c = cache();
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return 'v';
    };
    const all = Promise.all([c.get('k', load), c.get('k', load), c.get('k', load)]);
    release();
    expect(await all).toEqual(['v', 'v', 'v']);
    expect(loads).toBe(1);
  });

  test('a failed load is not served again', async () => {
    const c = cache();
    await expect(c.get('k', async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await c.get('k', async () => 'fresh')).toBe('fresh');
  });

  test('TTL 0 turns it off', async () => {
    const c = cache(0);
    let loads = 0;
    await c.get('k', async () => ++loads);
    await c.get('k', async () => ++loads);
    expect(loads).toBe(2);
  });

  test('a write to a shown table drops it; reads and writes elsewhere do not', async () => {
    const knex = memoryKnex();
    try {
      await knex.schema.createTable('runs', (t) => t.string('id'));
      await knex.schema.createTable('jobs', (t) => t.string('id'));
      const c = cache();
      watchShownWrites(knex, () => c.invalidate());
      let loads = 0;
      const load = async () => ++loads;
      await c.get('k', load);
      await knex('runs').select('*');
      await knex('jobs').insert({ id: 'j' });
      await knex('jobs').where({ id: 'j' }).update({ id: 'k' });
      expect(await c.get('k', load)).toBe(1);
      await knex('runs').insert({ id: 'r' });
      expect(await c.get('k', load)).toBe(2);
      await knex('runs').where({ id: 'r' }).update({ id: 's' });
      expect(await c.get('k', load)).toBe(3);
      await knex('runs').where({ id: 's' }).del();
      expect(await c.get('k', load)).toBe(4);
    } finally {
      await knex.destroy();
    }
  });
});

describe('StampedCache', () => {
  let now = 0;
  let stamp = 'a';
  let loads = 0;
  let stamps = 0;
  const load = async () => ({ stamp, json: JSON.stringify({ load: ++loads }) });
  const stampOf = async () => {
    stamps++;
    return stamp;
  };
  beforeEach(() => {
    now = 0;
    stamp = 'a';
    loads = 0;
    stamps = 0;
  });

  test('serves while the stamp is unchanged, reloads when it changes', async () => {
    const c = new StampedCache(true, 15_000, 1 << 20, () => now);
    expect(await c.get('k', stampOf, load)).toBe('{"load":1}');
    now = 10_000;
    expect(await c.get('k', stampOf, load)).toBe('{"load":1}');
    stamp = 'b';
    expect(await c.get('k', stampOf, load)).toBe('{"load":2}');
    expect(await c.get('other', stampOf, load)).toBe('{"load":3}');
  });

  test('a key without an entry loads at once; the entry keeps the stamp the load read with', async () => {
    const c = new StampedCache(true, 15_000, 1 << 20, () => now);
    // The load read the detail when the stamp was 'a'; by the time it answers, the stamp is 'b'.
    const answer = await c.get('k', stampOf, async () => {
      const loaded = await load();
      stamp = 'b';
      return loaded;
    });
    expect(answer).toBe('{"load":1}');
    expect(stamps).toBe(0);
    // So the next read reloads instead of serving what was read before the change.
    expect(await c.get('k', stampOf, load)).toBe('{"load":2}');
    expect(await c.get('k', stampOf, load)).toBe('{"load":2}');
    expect(stamps).toBe(2);
  });

  test('never serves an entry older than the maximum age, even with the same stamp', async () => {
    const c = new StampedCache(true, 15_000, 1 << 20, () => now);
    await c.get('k', stampOf, load);
    now = 14_999;
    expect(await c.get('k', stampOf, load)).toBe('{"load":1}');
    now = 15_000;
    expect(await c.get('k', stampOf, load)).toBe('{"load":2}');
  });

  test('a write this process makes to a shown table reloads, even with an unchanged stamp', async () => {
    const knex = memoryKnex();
    try {
      await knex.schema.createTable('runs', (t) => t.string('id'));
      await knex.schema.createTable('unrelated', (t) => t.string('id'));
      const c = new StampedCache(true, 15_000, 1 << 20, () => now);
      watchShownWrites(knex, () => c.written());
      await c.get('k', stampOf, load);
      await knex('unrelated').insert({ id: 'x' });
      expect(await c.get('k', stampOf, load)).toBe('{"load":1}');
      await knex('runs').insert({ id: 'x' });
      expect(await c.get('k', stampOf, load)).toBe('{"load":2}');
    } finally {
      await knex.destroy();
    }
  });

  test('keeps at most maxBytes of JSON, least recently used dropped first; off means no caching', async () => {
    const c = new StampedCache(true, 15_000, 25, () => now);
    await c.get('a', stampOf, load); // 10 characters each
    await c.get('b', stampOf, load);
    await c.get('a', stampOf, load); // a is now the most recently used
    await c.get('c', stampOf, load); // 30 > 25: b goes
    expect(c.size).toBe(2);
    expect(await c.get('a', stampOf, load)).toBe('{"load":1}');
    expect(await c.get('b', stampOf, load)).toBe('{"load":4}');
    const off = new StampedCache(false);
    await off.get('k', stampOf, load);
    await off.get('k', stampOf, load);
    expect(loads).toBe(6);
    expect(off.size).toBe(0);
  });
});
