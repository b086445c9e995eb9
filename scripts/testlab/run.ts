/**
 * `npm run testlab`: the whole Test Lab corpus in replay (authored answers, served only to prompts that show
 * the lines they rely on; no network), its score table (a pipeline check, not a measure of review quality),
 * and a comparison with the recorded baseline (fixtures/testlab/baseline.json). `--update-baseline`
 * records the current scores as the new baseline. Exit 1 when a score fell.
 *
 * `npm run testlab -- --live [--samples K] [--cases <globs>]`: the corpus reviewed by the configured
 * provider (VERDICT_RUNNER_PROVIDER, VERDICT_RUNNER_MODEL and the provider's keys and base URL), the real
 * pull requests included; every call is recorded with its prompt hash, every sample scored. No baseline
 * is compared (it is replay's); exit 1 when a case could not be reviewed.
 *
 * The run is saved as a Test Lab record in the configured store (`VERDICT_DB_PATH` or `DATABASE_URL`, as
 * `npm start` uses), as `verdict testlab run` does, so the dashboard and `GET /test-lab` show it;
 * `--no-save` skips that.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
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

const { values: flags } = parseArgs({
  options: {
    live: { type: 'boolean', default: false },
    samples: { type: 'string', default: '1' },
    cases: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'no-save': { type: 'boolean', default: false },
    'update-baseline': { type: 'boolean', default: false },
  },
});
const live = flags.live === true;
const liveProvider = (process.env.VERDICT_RUNNER_PROVIDER ?? '').trim();
if (live && (liveProvider === '' || liveProvider === 'replay')) {
  console.error('--live reviews with a real provider: set VERDICT_RUNNER_PROVIDER (and its model and key)');
  process.exit(2);
}
const corpus = join(process.cwd(), 'fixtures/testlab');
const baselineFile = join(corpus, 'baseline.json');
const started = Date.now();
const run = await runTestLab({
  corpus,
  ...(flags.cases ? { cases: flags.cases } : {}),
  concurrency: Number(flags.concurrency),
  env: process.env,
  provider: live ? liveProvider : 'replay',
  samples: Number(flags.samples),
  log: pino({ level: process.env.LOG_LEVEL ?? 'warn' }),
});
console.log(renderRun(run, painter(process.stdout.isTTY === true)));
if (!flags['no-save']) {
  // Replay is the Test Lab's own provider: its store needs only the store's settings.
  const store = await openConfiguredStore(
    loadConfig(
      live
        ? process.env
        : { ...process.env, VERDICT_RUNNER_PROVIDER: undefined, VERDICT_MODEL_PROVIDER: undefined },
    ),
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
if (live) {
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `testlab --live: ${run.cases.length} case(s), ${run.scores.samples} sample(s) in ${seconds.toFixed(1)} s, ${run.scores.failedCases} not reviewed`,
  );
  process.exit(run.scores.failedCases === 0 ? 0 : 1);
}
if (flags['update-baseline']) {
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
  `testlab: pipeline check, ${run.scores.caught}/${run.scores.bugs} planted bugs caught by authored answers in ${seconds.toFixed(1)} s (target 60 s, no regression): ${seconds < 60 && worse.length === 0 ? 'met' : 'missed'}`,
);
process.exit(worse.length === 0 ? 0 : 1);
