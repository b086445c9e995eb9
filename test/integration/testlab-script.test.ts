import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { randomId, systemClock } from '../../src/clock.js';

jest.setTimeout(300_000);

/** `npm run testlab` (scripts/testlab/run.ts) saves its record in the configured store, as the dashboard says. */
describe('npm run testlab', () => {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-testlab-script-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('replays the corpus and saves the run as a Test Lab record the operator API lists', async () => {
    const dbPath = join(dir, 'verdict.sqlite');
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
      (resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', join(process.cwd(), 'scripts/testlab/run.ts')],
          {
            cwd: process.cwd(),
            timeout: 280_000,
            env: { PATH: process.env.PATH ?? '', HOME: dir, USER: 'ci', VERDICT_DB_PATH: dbPath },
          },
          (error, out, err) =>
            resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out, stderr: err }),
        );
      },
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const saved = /saved Test Lab record (\S+)/.exec(stdout);
    expect(saved).not.toBeNull();
    const store = await openStore(
      { client: 'sqlite', filename: dbPath },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 3600 },
    );
    try {
      const records = await store.testLab.list();
      expect(records.map((r) => [r.id, r.provider, r.actor])).toEqual([[saved![1], 'replay', 'npm:ci']]);
    } finally {
      await store.close();
    }
  });
});
