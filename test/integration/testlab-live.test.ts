import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { runCli } from '../../src/cli/main.js';
import { recordedCalls } from '../../src/cli/testlab.js';
import { saveTestLabRun } from '../../src/testlab/record.js';
import { runTestLab } from '../../src/testlab/runner.js';
import type { LabCaseResult } from '../../src/testlab/samples.js';
import { fakeOpenAI, listen, type Seen } from '../helpers/fake-openai.js';
import { callApi, TOKENS } from '../helpers/operator.js';
import { reviewOutput } from '../helpers/review-output.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

jest.setTimeout(240_000);

const CORPUS = join(process.cwd(), 'fixtures/testlab');
const PLANTED = 'go-shortener-click-stats';
const REAL = 'rbench-gh-copilot-review-9';
const CLEAN = 'ts-clean-docs-token-bucket-limiter';
const CASES = [PLANTED, REAL, CLEAN];

/** What the fake model answers a review of each case (the planted case: its authored answer). */
function reviewAnswer(caseName: string): string {
  if (caseName === PLANTED)
    return readFileSync(join(CORPUS, PLANTED, 'answers/click-map-unsynchronised.txt'), 'utf8');
  if (caseName === REAL) {
    return JSON.stringify(
      reviewOutput({
        verdict: 'needs-attention',
        findings: [
          {
            severity: 'high',
            category: 'correctness',
            path: 'cmd/root.go',
            title: 'Freshness check runs after MinimizeCopilotComments',
            body: 'IsCopilotReviewFresh is checked only after MinimizeCopilotComments has hidden every Copilot review, so a fresh review is minimized as OUTDATED and no new review is requested.',
            contextIds: [],
            line: 73,
            endLine: 80,
            confidence: 0.9,
          },
          {
            severity: 'medium',
            category: 'style',
            path: 'cmd/root.go',
            title: 'Message wording',
            body: 'The printed message could say which pull request it means.',
            contextIds: [],
            line: 78,
            endLine: 78,
            confidence: 0.5,
          },
        ],
      } as never),
    );
  }
  return JSON.stringify(reviewOutput());
}

describe('a live Test Lab run against an OpenAI-compatible model', () => {
  const seen: Seen[] = [];
  const server = fakeOpenAI(seen, reviewAnswer);
  let env: Record<string, string | undefined>;
  let app: RunningVerdict;
  const dir = mkdtempSync(join(tmpdir(), 'tl-live-'));
  beforeAll(async () => {
    env = {
      PATH: process.env.PATH,
      VERDICT_RUNNER_PROVIDER: 'openai',
      VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
      VERDICT_OPENAI_BASE_URL: await listen(server),
    };
    app = await startVerdict(TOKENS);
  });
  afterAll(async () => {
    await app.stop();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const log = pino({ level: 'silent' });
  let runId: string;
  let live: Awaited<ReturnType<typeof runTestLab>>;

  test('reviews the cases twice, scores each sample, records every call with its prompt hash', async () => {
    live = await runTestLab({
      corpus: CORPUS,
      cases: CASES.join(','),
      concurrency: 3,
      samples: 2,
      env,
      log,
    });
    expect(live).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', mode: 'live', refusals: [] });
    expect(live.cases.map((c) => [c.name, c.status])).toEqual([
      [PLANTED, 'analysed'],
      [REAL, 'analysed'],
      [CLEAN, 'analysed'],
    ]);
    const s = live.scores;
    expect(s).toMatchObject({
      mode: 'live',
      samples: 2,
      skippedCases: 0,
      failedCases: 0,
      recall: 1,
      caught: 1,
      bugs: 1,
      falseFindingsPerCleanCase: 0,
      anchorAccuracy: 1,
    });
    expect(s.precision).toBeGreaterThan(0);
    // The real pull request, by ReviewBench's rules: the finding on cmd/root.go 73-80 that names
    // MinimizeCopilotComments matches the golden finding at 73-79; the wording nit matches none.
    expect(s.reviewBench).toMatchObject({
      cases: 1,
      goldenTp: 7,
      coveredTp: 1,
      matched: 1,
      matchedTp: 1,
      matchedFp: 0,
      unmatched: 1,
      groundedPrecision: 1,
      groundedRecall: 0.143,
      precisionAllCounted: 0.5,
    });
    const real = live.cases.find((c) => c.name === REAL)!;
    expect(
      real.reviewBench!.golden.filter((g) => g.findings.length > 0).map((g) => [g.id, g.matchedBy]),
    ).toEqual([['g07-correctness', 'lines+words']]);
    expect(s.perSample.map((p) => [p.sample, p.recall, p.reviewBench?.groundedRecall])).toEqual([
      [1, 1, 0.143],
      [2, 1, 0.143],
    ]);
    // Tokens and cost come from the API's usage and the model's price; both samples are counted.
    const calls = seen.length;
    expect(s.tokens).toEqual({ input: 1500 * calls, output: 250 * calls });
    expect(s.costUsd).toBeGreaterThan(0);
    expect(s.wallMs).toBeGreaterThan(0);
    expect(s.perSample.every((p) => p.wallMs > 0 && p.costUsd !== null)).toBe(true);
    // Every call the server answered is in the record, with the hash of its prompt and its answer.
    const recorded = live.cases.flatMap((c) => (c.samples ?? []).flatMap((x) => x.calls));
    expect(recorded).toHaveLength(calls);
    for (const call of recorded) {
      expect(call.promptHash).toMatch(/^[0-9a-f]{64}$/);
      expect(call.answerHash).toBe(createHash('sha256').update(call.answer).digest('hex'));
    }
    expect(new Set(recorded.map((c) => c.answer))).toEqual(new Set(seen.map((x) => x.answer)));
    // The same prompt hashes the same in both samples; different cases' prompts differ.
    for (const c of live.cases) {
      const [one, two] = c.samples!;
      expect(one!.calls.map((x) => [x.key, x.promptHash])).toEqual(
        two!.calls.map((x) => [x.key, x.promptHash]),
      );
      expect(one!.calls.some((x) => x.kind === 'review')).toBe(true);
    }
    const reviewHashes = live.cases.map(
      (c) => c.samples![0]!.calls.find((x) => x.kind === 'review')!.promptHash,
    );
    expect(new Set(reviewHashes).size).toBe(3);
  });

  test('the saved record is what GET /test-lab lists and shows', async () => {
    const record = await saveTestLabRun(app.verdict.store, live, { actor: 'test:live' });
    runId = record.id;
    const list = await callApi(app.baseUrl, 'GET', '/operator/api/test-lab', 'read-secret');
    expect(list.status).toBe(200);
    expect(list.body.runs[0]).toMatchObject({
      kind: 'corpus',
      id: runId,
      provider: 'openai',
      model: 'gpt-4o-mini',
      caseCount: 3,
      scores: {
        mode: 'live',
        samples: 2,
        recall: 1,
        falseFindingsPerCleanCase: 0,
        anchorAccuracy: 1,
        reviewBench: { groundedRecall: 0.143, groundedPrecision: 1 },
        refusals: [],
      },
    });
    expect(list.body.runs[0].scores.perSample).toHaveLength(2);
    const one = await callApi(app.baseUrl, 'GET', `/operator/api/test-lab/${runId}`, 'read-secret');
    expect(one.status).toBe(200);
    const cases = one.body.run.cases as LabCaseResult[];
    expect(cases.map((c) => c.samples!.length)).toEqual([2, 2, 2]);
    expect(cases.find((c) => c.name === REAL)!.reviewBench!.matched).toBe(1);
    expect(cases[0]!.samples![0]!.calls[0]!.promptHash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('replaying the recorded answers serves them to the same prompts, and refuses a changed prompt', async () => {
    const record = (await app.verdict.store.testLab.get(runId))!;
    const recorded = {
      calls: recordedCalls(record),
      provider: record.provider,
      providerModel: record.model,
      model: `recorded:${record.id}`,
    };
    const before = seen.length;
    const same = await runTestLab({
      corpus: CORPUS,
      cases: CASES.join(','),
      concurrency: 3,
      env,
      log,
      recorded,
    });
    expect(seen.length).toBe(before); // nothing reached the model
    expect(same.refusals).toEqual([]);
    expect(same.mode).toBe('recorded');
    expect(same.cases.map((c) => c.status)).toEqual(['analysed', 'analysed', 'analysed']);
    expect(same.scores).toMatchObject({ recall: 1, falseFindingsPerCleanCase: 0 });
    expect(same.scores.reviewBench).toMatchObject({ coveredTp: 1, matched: 1 });

    // The planted case's pull request title changes: its prompt hashes differently.
    const corpus = join(dir, 'corpus');
    for (const name of CASES) cpSync(join(CORPUS, name), join(corpus, name), { recursive: true });
    const caseYml = join(corpus, PLANTED, 'case.yml');
    writeFileSync(
      caseYml,
      readFileSync(caseYml, 'utf8').replace('title: Per-link click stats endpoint', 'title: Click stats'),
    );
    const changed = await runTestLab({ corpus, cases: CASES.join(','), concurrency: 3, env, log, recorded });
    expect(seen.length).toBe(before);
    const planted = changed.cases.find((c) => c.name === PLANTED)!;
    expect(planted.status).toBe('failed');
    expect(planted.bugs.every((b) => b.finding === null)).toBe(true);
    expect(changed.refusals.length).toBeGreaterThan(0);
    expect(changed.refusals[0]).toMatch(
      new RegExp(
        `^the prompt changed: ${PLANTED}/part-1 was recorded for prompt [0-9a-f]{16}, this prompt hashes to [0-9a-f]{16}$`,
      ),
    );
    expect(changed.cases.filter((c) => c.name !== PLANTED).map((c) => c.status)).toEqual([
      'analysed',
      'analysed',
    ]);
  });

  test('verdict testlab run --provider --model --samples saves the live record; --from-record replays it', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      stdout: (t: string) => out.push(t),
      stderr: (t: string) => err.push(t),
      env: { ...env, LOG_LEVEL: 'silent' as const, VERDICT_DB_PATH: join(dir, 'cli.sqlite') },
      isTty: false,
    };
    const before = seen.length;
    const args = ['--cases', PLANTED, '--concurrency', '1', '--json', '--init'];
    const code = await runCli(
      ['testlab', 'run', '--provider', 'openai', '--model', 'gpt-4o-mini', '--samples', '2', ...args],
      io,
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    const live = JSON.parse(out.pop()!).record;
    expect(live).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', mode: 'live' });
    expect(live.scores).toMatchObject({ samples: 2, recall: 1, caught: 1 });
    expect(live.cases[0].samples.map((x: { calls: unknown[] }) => x.calls.length)).toEqual([
      (seen.length - before) / 2,
      (seen.length - before) / 2,
    ]);
    expect(await runCli(['testlab', 'run', '--from-record', live.id, '--json'], io)).toBe(0);
    const replayed = JSON.parse(out.pop()!).record;
    expect(replayed).toMatchObject({
      provider: 'replay',
      model: `recorded:${live.id}`,
      mode: 'recorded',
      refusals: [],
    });
    expect(replayed.scores).toMatchObject({ recall: 1, caught: 1 });
    expect(seen.length - before).toBe(2 * live.cases[0].samples[0].calls.length);
    expect(await runCli(['testlab', 'run', '--from-record', replayed.id, '--json'], io)).toBe(1);
    expect(err.pop()).toMatch(/recorded no answers \(it is not a live run\)/);
  });
});
