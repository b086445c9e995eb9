import { ReadCache, StampedCache } from '../../src/services/read-cache.js';
import { openTestStore } from '../helpers/store.js';

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

describe('writes through the store', () => {
  test('every write path of a table the caches show drops both caches; reads and other tables do not', async () => {
    const { store, cleanup } = await openTestStore('sqlite');
    try {
      const cache = new ReadCache(60_000, () => 0);
      const stamped = new StampedCache(true, 60_000, undefined, () => 0);
      store.shownWrites.subscribe(() => {
        cache.invalidate();
        stamped.written();
      });
      let loads = 0;
      const both = async () =>
        `${await cache.get('k', async () => ++loads)}/${await stamped.get(
          'k',
          async () => 'same',
          async () => ({ stamp: 'same', json: String(++loads) }),
        )}`;
      /** Whether `step` made both caches load again. */
      const drops = async (step: () => Promise<unknown>) => {
        const before = await both();
        expect(await both()).toBe(before);
        await step();
        const after = await both();
        return after.split('/').every((part, i) => part !== before.split('/')[i]);
      };
      const repo = 'acme/web';
      const owner = { repo, prNumber: 7, headSha: 'a'.repeat(40) };
      const newRun = {
        reviewKey: `${repo}#7@${'a'.repeat(40)}`,
        trigger: 'opened',
        installationId: 1,
        ...owner,
      };
      let runId = '';
      const finding = {
        severity: 'high',
        category: 'bug',
        path: 'a.ts',
        line: 1,
        title: 't',
        body: 'b',
        fingerprint: 'fp',
        outsideDiff: false,
      };
      const writes: Array<[string, () => Promise<unknown>]> = [
        ['runs.createOrGet', async () => (runId = (await store.runs.createOrGet(newRun)).run.id)],
        ['runs.update', () => store.runs.update(runId, { status: 'running' })],
        ['runs.acquireDispatch', () => store.runs.acquireDispatch(runId, 'receipt-1')],
        ['runs.releaseDispatch', () => store.runs.releaseDispatch(runId, 'receipt-1')],
        [
          'runs.recordAnalysis',
          () =>
            store.runs.recordAnalysis(
              { runId, reviewKey: newRun.reviewKey, ...owner },
              { analysisStatus: 'analysed', verdict: 'clear', confidence: 5, result: null },
              [],
              store.findings,
            ),
        ],
        [
          'findings.recordMany',
          () => store.findings.recordMany({ runId, reviewKey: newRun.reviewKey, ...owner }, [finding]),
        ],
        ['pullRequests.upsert', () => store.pullRequests.upsert({ repo, number: 7, title: 'Cache' })],
        ['deliveries.setOutcome', () => store.deliveries.setOutcome('d-1', 'ignored')],
        ['deliveries.finish', () => store.deliveries.finish('d-1', 'processed', null)],
        [
          'commands.create',
          () => store.commands.create({ id: 'cmd-1', kind: 'requeue', payload: {}, actor: 'op' }),
        ],
        ['commands.claim', () => store.commands.claim('cmd-1', 'bridge')],
        [
          'commands.finish',
          () => store.commands.finish('cmd-1', 'bridge', { status: 'succeeded', result: {} }),
        ],
        [
          'publications.finish',
          () => store.publications.finish(1, { status: 'published', receipt: null, error: null }),
        ],
        ['repositories.setStandaloneConfig', () => store.repositories.setStandaloneConfig(repo, {})],
        ['repositories.markUninstalled', () => store.repositories.markUninstalled([repo])],
        ['repositories.markInstallationRemoved', () => store.repositories.markInstallationRemoved(1)],
        [
          'memory.createContext',
          () =>
            store.memory.createContext({
              repo,
              paths: [],
              title: 'Cache',
              body: 'Keyed by id.',
              createdBy: 'op',
            }),
        ],
      ];
      for (const [name, write] of writes) expect([name, await drops(write)]).toEqual([name, true]);
      const others: Array<[string, () => Promise<unknown>]> = [
        ['runs.recent', () => store.runs.recent(10)],
        ['runs.get', () => store.runs.get(runId)],
        ['commands.list', () => store.commands.list()],
        ['memory.counts', () => store.memory.counts()],
        ['audit.record', () => store.audit.record({ actor: 'op', action: 'test.other-table' })],
      ];
      for (const [name, other] of others) expect([name, await drops(other)]).toEqual([name, false]);
    } finally {
      await cleanup();
    }
  });
});
