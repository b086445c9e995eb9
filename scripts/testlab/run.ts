/**
 * `npm run testlab`: the whole Test Lab corpus in replay (recorded answers, no network), its score table,
 * and a comparison with the recorded baseline (fixtures/testlab/baseline.json). `--update-baseline`
 * records the current scores as the new baseline. Exit 1 when a score fell.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { renderRun } from '../../src/cli/testlab.js';
import { painter } from '../../src/cli/table.js';
import { baselineOf, regressions, type Baseline } from '../../src/testlab/baseline.js';
import { runTestLab } from '../../src/testlab/runner.js';

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
