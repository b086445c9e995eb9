import { loadConfigOrExit } from '../config/index.js';
import { createProbot } from '../github/probot.js';
import { createLogger, stopOnSignals } from '../logger.js';
import { catchUpGitHubFor, createCommandBridge, createScheduler, loadApp } from '../compose/parts.js';
import { openConfiguredStore } from '../store/index.js';

/**
 * `npm run bridge`: the scheduled jobs (the command bridge every minute, the watchdog, maintenance) as
 * their own process, for servers started with `VERDICT_SCHEDULER=0`. `npm run bridge -- --once` runs one
 * bridge pass, prints it as JSON and exits (for an external cron). Several bridges may run against one
 * store: a command is claimed by exactly one of them.
 */
async function main(): Promise<void> {
  const once = process.argv.includes('--once');
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  const store = await openConfiguredStore(config);
  const probot = createProbot(config.github, log);
  await loadApp(probot, store, config, log);
  const bridge = createCommandBridge(store, probot, config, log);
  if (once) {
    try {
      process.stdout.write(`${JSON.stringify(await bridge.runOnce())}\n`);
    } finally {
      await store.close();
    }
    return;
  }
  const scheduler = createScheduler(store, bridge, config, log, {
    catchUp: catchUpGitHubFor(probot, config),
  });
  scheduler.start();
  stopOnSignals(log, 'bridge stopping: finishing the job in flight', async () => {
    await scheduler.stop();
    await store.close();
  });
}

main().catch((error) => {
  console.error(`Verdict bridge failed: ${(error as Error).message}`);
  process.exit(1);
});
