import knexFactory from 'knex';
import { ReadCache } from '../../src/operator/read-cache.js';

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
    const knex = knexFactory({
      client: 'sqlite3',
      connection: { filename: ':memory:' },
      useNullAsDefault: true,
    });
    try {
      await knex.schema.createTable('runs', (t) => t.string('id'));
      await knex.schema.createTable('jobs', (t) => t.string('id'));
      const c = cache();
      c.watch(knex);
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
