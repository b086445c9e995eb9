import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type ProcessEnv } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { createVerdict, type RuntimeOptions, type Verdict } from '../../src/compose/server.js';
import { TEST_SECRET } from './webhooks.js';

export type RunningVerdict = { verdict: Verdict; baseUrl: string; stop(): Promise<void> };

/**
 * Starts a real Verdict server on a free loopback port with a fresh SQLite store. Without a
 * `reviewExecutor` option no review lane runs (review jobs stay queued); pass `reviewExecutor: undefined`
 * explicitly for the production review engine.
 */
export async function startVerdict(
  env: ProcessEnv = {},
  opts: Omit<RuntimeOptions, 'log'> & { log?: RuntimeOptions['log'] } = {},
): Promise<RunningVerdict> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-it-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    VERDICT_DB_PATH: join(dir, 'verdict.sqlite'),
    GITHUB_WEBHOOK_SECRET: TEST_SECRET,
    // Scheduled jobs (the command bridge every minute) stay off unless a test asks for them.
    VERDICT_SCHEDULER: '0',
    ...env,
  });
  const withLane = 'reviewExecutor' in opts ? opts : { ...opts, reviewExecutor: null };
  const verdict = await createVerdict(config, {
    ...withLane,
    log: opts.log ?? createLogger(config.logLevel),
  });
  const port = await verdict.listen();
  return {
    verdict,
    baseUrl: `http://127.0.0.1:${port}`,
    stop: async () => {
      await verdict.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
