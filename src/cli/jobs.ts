import { existsSync } from 'node:fs';
import { catchUpGitHubFor, createCommandBridge, createScheduler, loadApp } from '../compose/parts.js';
import { loadConfig } from '../config/index.js';
import { createProbot } from '../github/probot.js';
import { createLogger } from '../logger.js';
import { JOB_NAMES } from '../scheduler/jobs.js';
import { openConfiguredStore } from '../store/index.js';
import { CliError, type Io } from './io.js';
import type { Options } from './options.js';

/** The jobs `verdict jobs run` knows, in the order the help lists them. */
export const RUNNABLE_JOBS: readonly string[] = Object.values(JOB_NAMES);

/**
 * `verdict jobs run <name>`: one scheduled job, once, against the configured store and GitHub App, with
 * its heartbeat and artifact recorded as a scheduled tick records them; prints `{job, status, artifact}`
 * (or `{job, status: "error", error}`) as JSON. Exit 0 when the job ran, 1 when it failed.
 */
export async function run(args: string[], opts: Options, io: Io): Promise<number> {
  const [sub, name, ...rest] = args;
  if (sub !== 'run') throw new CliError('usage: verdict jobs run <name> (run verdict jobs --help)');
  if (!name || rest.length > 0) throw new CliError(`needs exactly one job name: ${RUNNABLE_JOBS.join(', ')}`);
  if (!RUNNABLE_JOBS.includes(name)) {
    throw new CliError(`no job named "${name}" (jobs: ${RUNNABLE_JOBS.join(', ')})`);
  }
  const config = loadConfig(io.env);
  if (config.store.client === 'sqlite' && config.store.filename !== ':memory:') {
    if (!existsSync(config.store.filename) && !opts.init) {
      throw new CliError(
        `no Verdict database at ${config.store.filename} (check --db, or pass --init to create one there)`,
      );
    }
  }
  const log = createLogger(config.logLevel, process.stderr, config.logFormat);
  const store = await openConfiguredStore(config);
  try {
    const probot = createProbot(config.github, log);
    await loadApp(probot, store, config, log);
    const bridge = createCommandBridge(store, probot, config, log);
    const scheduler = createScheduler(store, bridge, config, log, {
      catchUp: catchUpGitHubFor(probot, config),
    });
    const result = await scheduler.runNow(name);
    io.stdout(JSON.stringify({ job: name, ...result }, null, 2));
    return result.status === 'ok' ? 0 : 1;
  } finally {
    await store.close();
  }
}
