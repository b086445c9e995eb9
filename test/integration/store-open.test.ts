import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomId, systemClock } from '../../src/clock.js';
import { openStore } from '../../src/store/index.js';

/** A store that cannot be opened says which path and why (not "Acquire connection error: [object Object]"). */
describe('opening the store', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'verdict-open-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('a data directory that cannot be created names the path and the reason', async () => {
    // A regular file where the data directory should be: it can be neither created nor written.
    const blocker = join(dir, 'data');
    writeFileSync(blocker, 'not a directory');
    const filename = join(blocker, 'verdict.sqlite');
    await expect(
      openStore({ client: 'sqlite', filename }, { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 }),
    ).rejects.toThrow(
      new RegExp(
        `^cannot open the SQLite store ${filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(VERDICT_DB_PATH\\): its directory ${blocker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be created or written \\((ENOTDIR|EEXIST)\\)$`,
      ),
    );
  });
});
