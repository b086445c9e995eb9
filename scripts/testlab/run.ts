/**
 * `npm run testlab`: the whole Test Lab corpus in replay (recorded answers, no network), its score table,
 * and a comparison with the recorded baseline (fixtures/testlab/baseline.json). `--update-baseline`
 * records the current scores as the new baseline. Exit 1 when a score fell.
 *
 * The run is saved as a Test Lab record in the configured store (`VERDICT_DB_PATH` or `DATABASE_URL`, as
 * `npm start` uses), as `verdict testlab run` does, so the dashboard and `GET /test-lab` show it;
 * `--no-save` skips that.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { renderRun } from '../../src/cli/testlab.js';
import { painter } from '../../src/cli/table.js';
import { loadConfig } from '../../src/config/index.js';
import { openConfiguredStore } from '../../src/store/index.js';
import { baselineOf, regressions, type Baseline } from '../../src/testlab/baseline.js';
import { saveTestLabRun } from '../../src/testlab/record.js';
import { runTestLab } from '../../src/testlab/runner.js';

// Like `npm start` and the CLI: `.env` in the working directory, for what the environment does not set.
if (existsSync('.env')) process.loadEnvFile('.env');

const corpus = join(process.cwd(), 'fixtures/testlab');
const baselineFile = join(corpus, 'baseline.json');
const started = Date.now();
const run = await runTestLab({
  corpus,
  concurrency: 4,
  env: process.env,
  provider: 'replay',
  log: pino({ level: process.env.LOG_LEVEL ?? 'warn' }),
});
console.log(renderRun(run, painter(process.stdout.isTTY === true)));
if (!process.argv.includes('--no-save')) {
  // The replay provider is the Test Lab's own: the store needs only the store's settings.
  const store = await openConfiguredStore(
    loadConfig({ ...process.env, VERDICT_RUNNER_PROVIDER: undefined, VERDICT_MODEL_PROVIDER: undefined }),
  );
  try {
    const record = await saveTestLabRun(store, run, { actor: `npm:${process.env.USER ?? 'operator'}` });
    console.log(
      `saved Test Lab record ${record.id} (the dashboard's Test Lab view and GET /test-lab show it)`,
    );
  } finally {
    await store.close();
  }
}
if (process.argv.includes('--update-baseline')) {
  writeFileSync(baselineFile, `${JSON.stringify(baselineOf(run), null, 2)}\n`);
  console.log(`baseline written to ${baselineFile}`);
}
const baseline: Baseline | null = existsSync(baselineFile)
  ? JSON.parse(readFileSync(baselineFile, 'utf8'))
  : null;
const worse = baseline ? regressions(run, baseline) : ['no baseline recorded (run with --update-baseline)'];
for (const line of worse) console.log(`regression: ${line}`);
const seconds = (Date.now() - started) / 1000;
console.log(
  `testlab: ${run.scores.caught}/${run.scores.bugs} bugs caught in ${seconds.toFixed(1)} s (target 60 s, no regression): ${seconds < 60 && worse.length === 0 ? 'met' : 'missed'}`,
);
process.exit(worse.length === 0 ? 0 : 1);
