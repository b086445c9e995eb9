import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import type { StageTap } from '../../src/review/run-trace.js';
import { regressions, type Baseline } from '../../src/testlab/baseline.js';
import {
  deleteDiff,
  dropFinding,
  noSurroundingCode,
  packingRecorder,
  shiftLineNumbers,
  taps,
} from '../../src/testlab/mutations.js';
import { runTestLab, type TestLabRun } from '../../src/testlab/runner.js';

const CORPUS = join(process.cwd(), 'fixtures/testlab');
const baseline = JSON.parse(readFileSync(join(CORPUS, 'baseline.json'), 'utf8')) as Baseline;

/**
 * The Test Lab fails for the right reasons: the whole corpus in replay, each time with one breakage of the
 * pipeline injected through the engine's stage tap, checked as `npm run testlab` checks a run (regressions
 * against fixtures/testlab/baseline.json). Deleting the diff from the prompt, shifting its line numbers by
 * one and a parser that drops a finding each fail; leaving out the surrounding code (which packs the files
 * into parts anew) does not.
 */
async function replay(tap?: StageTap): Promise<{ run: TestLabRun; worse: string[] }> {
  const run = await runTestLab({
    corpus: CORPUS,
    concurrency: 4,
    env: {},
    provider: 'replay',
    log: pino({ level: 'silent' }),
    ...(tap ? { tap } : {}),
  });
  return { run, worse: regressions(run, baseline) };
}

const failedCases = (run: TestLabRun) =>
  run.cases.filter((c) => c.status === 'failed' || c.status === 'error');

describe('Test Lab mutations', () => {
  const control = packingRecorder();
  let unmutated: { run: TestLabRun; worse: string[] };
  beforeAll(async () => {
    unmutated = await replay(control.tap);
  }, 180_000);

  test('the pipeline as it is passes the check', () => {
    expect(unmutated.worse).toEqual([]);
    expect(unmutated.run.scores.caught).toBe(baseline.caught.length);
  });

  test('deleting the diff from the prompt fails every reviewed case, saying which relied lines are missing', async () => {
    const { run, worse } = await replay(deleteDiff);
    expect(worse.length).toBeGreaterThan(0);
    const reviewed = run.cases.filter((c) => c.status !== 'skipped');
    expect(failedCases(run).map((c) => c.name)).toEqual(reviewed.map((c) => c.name));
    const billing = run.cases.find((c) => c.name === 'ts-billing-credit-note-balance')!;
    expect(billing.error).toMatch(/replay refused: part 1: the prompt does not show \d+ line\(s\)/);
    expect(billing.error).toContain('src/billing/credit-notes.ts:53');
    expect(worse).toContain(`ts-billing-credit-note-balance did not review: ${billing.error}`);
  }, 180_000);

  test('shifting every shown line number by one fails the cases, naming the line and its expected text', async () => {
    const { run, worse } = await replay(shiftLineNumbers);
    expect(worse.length).toBeGreaterThan(0);
    expect(failedCases(run).length).toBe(run.cases.filter((c) => c.status !== 'skipped').length);
    const billing = run.cases.find((c) => c.name === 'ts-billing-credit-note-balance')!;
    expect(billing.error).toContain(
      'src/billing/credit-notes.ts:53 "      `UPDATE invoices SET balance_cents = $2, status = $3, updated_at = now() WHERE id = $1`,"',
    );
    expect(billing.error).toMatch(/the prompt shows "/);
  }, 180_000);

  test('a parser that drops a finding fails the check: the bugs it caught are lost', async () => {
    const { run, worse } = await replay(dropFinding);
    expect(failedCases(run)).toEqual([]);
    expect(run.scores.caught).toBeLessThan(baseline.caught.length);
    expect(worse.some((w) => /^recall fell from/.test(w))).toBe(true);
    expect(worse.some((w) => / is no longer caught$/.test(w))).toBe(true);
  }, 180_000);

  test('removing the surrounding code repacks the parts and still passes', async () => {
    const packing = packingRecorder();
    const { run, worse } = await replay(taps(noSurroundingCode, packing.tap));
    expect(worse).toEqual([]);
    expect(failedCases(run)).toEqual([]);
    // The mutation took effect: smaller prompts, and at least one large case's files packed otherwise.
    expect(run.scores.tokens.input).toBeLessThan(unmutated.run.scores.tokens.input);
    const repacked = [...packing.parts].filter(
      ([repo, parts]) => JSON.stringify(parts) !== JSON.stringify(control.parts.get(repo)),
    );
    expect(repacked.map(([repo]) => repo)).toEqual(
      expect.arrayContaining(['testlab/java-large-helpdesk-explicit-tenant-scope']),
    );
  }, 180_000);
});
