import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { analysisOf, mergeStatus } from '../../src/publish/status.js';
import { runResultSchema, type RunResult } from '../../src/review/run-result.js';
import type { Store } from '../../src/store/index.js';
import { findBinary } from '../../src/validation/bubblewrap.js';
import {
  API,
  HEAD,
  OPENAI,
  REPO,
  completion,
  github,
  pull,
  review,
  reviewHarness,
} from '../helpers/review-harness.js';
import { githubTarball } from '../helpers/tarball.js';

/**
 * Validation inside a review, end to end: the real server and worker, GitHub and the model nock'd, the
 * repository's checks run for real in bubblewrap over GitHub-shaped tarballs of the head and the base.
 */
const BASE = 'c'.repeat(40);
const FIXTURES = path.resolve('fixtures/validation');
const CODELOAD = 'https://codeload.github.com';
const hasBwrap = findBinary('bwrap') !== undefined || Boolean(process.env.CI);

const SUM_PATCH =
  "@@ -1,3 +1,4 @@\n export function sum(a, b) {\n-  return a + b;\n+  // The PR's change: an off-by-one that breaks the existing test.\n+  return a + b + 1;\n }";
const FILES = [
  { filename: 'sum.js', status: 'modified', additions: 2, deletions: 1, changes: 3, patch: SUM_PATCH },
];

/** GitHub's tarball route answers 302 to codeload, which serves the archive. */
async function tarballs(commits: Record<string, string>) {
  const api = nock(API);
  const codeload = nock(CODELOAD);
  for (const [sha, fixture] of Object.entries(commits)) {
    api.get(`/repos/${REPO}/tarball/${sha}`).reply(302, '', {
      location: `${CODELOAD}/${REPO}/legacy.tar.gz/${sha}`,
    });
    codeload
      .get(`/${REPO}/legacy.tar.gz/${sha}`)
      .reply(200, await githubTarball(path.join(FIXTURES, fixture), `acme-web-${sha.slice(0, 7)}`), {
        'content-type': 'application/x-gzip',
      });
  }
  return { api, codeload };
}

const ENV = {
  VERDICT_VALIDATION_ENABLED: '1',
  VERDICT_VALIDATION_EVIDENCE_WAIT_MS: '60000',
  VERDICT_VALIDATION_TIMEOUT_MS: '60000',
};

/** The pull request: `sum.js` changed, its base commit BASE. */
const githubPull = () => github(pull({ base: { ref: 'main', sha: BASE }, changed_files: 1 }), FILES);

/** The model answers a clear review without findings. */
function clearModel() {
  nock(OPENAI)
    .post('/v1/chat/completions')
    .reply(
      200,
      completion(JSON.stringify(review({ verdict: 'clear', findings: [], mergeVerdict: 'Fine.' }))),
    );
}

/** The review body published (shadow mode: in the ledger). */
async function publishedBody(store: Store): Promise<string> {
  return (await store.publications.listForPr(REPO, 7)).find((p) => p.kind === 'review')!.body!;
}

(hasBwrap ? describe : describe.skip)('validation in a review (bubblewrap)', () => {
  const h = reviewHarness();
  const { start, reviewRun, setPolicy } = h;
  /** A scratch evidence directory. */
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-evidence-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Reviews the pull request (its commits served from `commits`) with a clear model answer. */
  async function reviewClear(commits: Record<string, string> = {}) {
    githubPull();
    await tarballs(commits);
    clearModel();
    const run = await reviewRun();
    return { run, result: runResultSchema.parse(run.result) };
  }

  test('a PR whose change breaks a test gets a BLOCK review citing the failing output; the model saw it', async () => {
    const store = await start(ENV);
    const gh = githubPull();
    const archives = await tarballs({ [HEAD]: 'failing-after', [BASE]: 'failing-before' });
    let prompt = '';
    const model = nock(OPENAI)
      .post('/v1/chat/completions', (body: { messages: Array<{ content: string }> }) => {
        prompt = body.messages.map((m) => m.content).join('\n');
        return true;
      })
      .reply(
        200,
        completion(
          JSON.stringify(
            review({
              verdict: 'clear',
              mergeVerdict: 'Looks fine.',
              findings: [],
              importantFiles: [{ path: 'sum.js', overview: 'sum' }],
            }),
          ),
        ),
      );

    const run = await reviewRun();
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
    expect(gh.pendingMocks()).toEqual([]);
    expect(archives.api.pendingMocks()).toEqual([]);
    expect(archives.codeload.pendingMocks()).toEqual([]);
    expect(model.pendingMocks()).toEqual([]);

    // The model had the results as evidence: the failing command and its output.
    expect(prompt).toContain('## Validation results');
    expect(prompt).toContain('FAILED `npm run test`');
    expect(prompt).toMatch(/6 !== 5/);

    const result = runResultSchema.parse(run.result) as RunResult;
    expect(result.validation).toMatchObject({
      status: 'failed',
      executor: 'bubblewrap',
      seenByModel: true,
      commands: [{ command: 'npm run test', passed: false, exitCode: 1, introduced: true }],
    });
    expect(result.validation!.commands[0]!.baseNote).toMatch(/at the base commit c{12} it passes/);
    expect(result.coverage.validation).toEqual({
      status: 'failed',
      executor: 'bubblewrap',
      ran: 1,
      passed: 0,
      failed: 1,
      notRun: 0,
    });

    // The failing test the PR introduced is a finding, its output the evidence.
    const findings = await store.findings.listForRun(run.id);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ severity: 'high', category: 'validation', path: 'sum.js' });
    expect(findings[0]!.body).toMatch(/6 !== 5/);
    expect(mergeStatus(analysisOf(result))).toBe('BLOCK');

    // The published body (shadow mode: in the ledger) says BLOCK and shows the failing command and output.
    const body = await publishedBody(store);
    expect(body).toContain('BLOCK');
    expect(body).toMatch(/### Validation Status[\s\S]*RAN: FAILED `npm run test` \(exit 1/);
    expect(body).toMatch(/Output of <code>npm run test<\/code>[\s\S]*6 !== 5/);
  }, 60_000);

  test('a passing suite: PASSED in the Validation Status, no validation finding, nothing missing', async () => {
    const store = await start(ENV);
    const { run, result } = await reviewClear({ [HEAD]: 'passing' });
    expect(result.validation).toMatchObject({
      status: 'passed',
      commands: [{ passed: true, introduced: null }],
    });
    expect(result.output.missingValidations.join('\n')).not.toMatch(/validation|sandbox/i);
    expect(await store.findings.listForRun(run.id)).toEqual([]);
    expect(await publishedBody(store)).toMatch(/RAN: PASSED `npm run test`/);
  }, 60_000);

  test('a failure the base has too is reported, not turned into a finding; the merge status is CAUTION', async () => {
    const store = await start(ENV);
    const { run, result } = await reviewClear({ [HEAD]: 'failing-after', [BASE]: 'failing-after' });
    expect(result.validation!.commands[0]).toMatchObject({ passed: false, introduced: false });
    expect(await store.findings.listForRun(run.id)).toEqual([]);
    expect(mergeStatus(analysisOf(result))).toBe('CAUTION');
    const body = await publishedBody(store);
    expect(body).toMatch(/validation failed: npm run test/);
    expect(body).toMatch(/fails at the base commit too/);
  }, 60_000);

  test('execution.mode never: nothing is downloaded or run, and the Validation Status says why', async () => {
    const store = await start(ENV);
    await setPolicy({ execution: { mode: 'never' } });
    const { result } = await reviewClear();
    expect(result.validation).toMatchObject({ status: 'not_run', executor: null, commands: [] });
    expect(result.output.missingValidations).toContain('NOT RUN repo-native validation: execution_disabled');
    expect(await publishedBody(store)).toContain(
      'MISSING: NOT RUN repo-native validation: execution_disabled',
    );
    expect(mergeStatus(analysisOf(result))).toBe('CAUTION');
  }, 60_000);

  test('evidence artifacts: the failing output is stored and attached to the finding; the body shows its key', async () => {
    const store = await start({ ...ENV, VERDICT_EVIDENCE_ARTIFACTS: '1', VERDICT_EVIDENCE_DIR: dir });
    const { run, result } = await reviewClear({ [HEAD]: 'failing-after', [BASE]: 'failing-before' });
    const key = `runs/${run.id}/bubblewrap-1-test.log`;
    expect(result.evidence!.failed).toBeNull();
    expect(result.evidence!.artifacts).toEqual([
      { id: 'bubblewrap-1-test', key, url: null, kind: 'command_output' },
    ]);
    expect(fs.readFileSync(path.join(dir, key), 'utf8')).toMatch(/6 !== 5/);
    expect(result.evidence!.findings).toHaveLength(1);
    expect(result.evidence!.findings[0]!.artifacts.map((a) => a.key)).toEqual([key]);
    expect(await publishedBody(store)).toContain(`- command_output: \`${key}\``);
  }, 60_000);

  test('evidence required: a model claim of a run with no artifact is unverified, kept at its severity', async () => {
    const store = await start({
      VERDICT_EVIDENCE_ARTIFACTS: '1',
      VERDICT_EVIDENCE_REQUIRE_ARTIFACTS: '1',
      VERDICT_EVIDENCE_DIR: dir,
    });
    githubPull();
    const claim = {
      severity: 'high',
      category: 'tests',
      path: 'sum.js',
      title: 'The test suite fails',
      body: 'I ran npm test and the sum test fails with 6 !== 5.',
      contextIds: [],
    };
    nock(OPENAI)
      .post('/v1/chat/completions')
      .reply(200, completion(JSON.stringify(review({ findings: [claim] }))));
    const run = await reviewRun();
    const result = runResultSchema.parse(run.result);
    expect(result.output.findings).toMatchObject([{ severity: 'high', title: 'The test suite fails' }]);
    expect(result.evidence!.findings).toMatchObject([{ status: 'unverified', artifacts: [] }]);
    expect(result.evidence!.findings[0]!.downgradedReason).toBeTruthy();
    expect(await publishedBody(store)).toMatch(/The test suite fails[\s\S]*_Unverified: /);
  }, 60_000);

  test('evidence storage failing: evidence_artifacts_failed is recorded and the findings are kept', async () => {
    const notADir = path.join(dir, 'file');
    fs.writeFileSync(notADir, 'a file where the evidence folder should be');
    const store = await start({ ...ENV, VERDICT_EVIDENCE_ARTIFACTS: '1', VERDICT_EVIDENCE_DIR: notADir });
    const { run, result } = await reviewClear({ [HEAD]: 'failing-after', [BASE]: 'failing-before' });
    expect(result.evidence!.failed).toBeTruthy();
    expect(result.evidence!.artifacts).toEqual([]);
    expect(result.warnings.join('\n')).toMatch(/^evidence_artifacts_failed: /m);
    expect(await store.findings.listForRun(run.id)).toMatchObject([
      { severity: 'high', category: 'validation' },
    ]);
  }, 60_000);
});

/**
 * The server running no validator still says why in every review (issue 36 item 5): the policy first
 * (`execution_disabled`, `execution_filters_not_matched`), then the operator's switch or the missing
 * executor. The harness's environment has no PATH, so with the switch unset no executor is available.
 */
describe('validation not run: every review body states why (review-engine 7.4)', () => {
  const h = reviewHarness();
  const { start, reviewRun, setPolicy } = h;

  async function reviewedBody(env: Record<string, string>, policy?: Record<string, unknown>) {
    const store = await start(env);
    if (policy) await setPolicy(policy);
    githubPull();
    clearModel();
    const run = await reviewRun();
    expect(run).toMatchObject({ status: 'completed', analysisStatus: 'analysed' });
    return { body: await publishedBody(store), result: runResultSchema.parse(run.result) };
  }

  test('policy execution.mode never, default server settings: NOT RUN ... execution_disabled', async () => {
    const { body, result } = await reviewedBody({}, { execution: { mode: 'never' } });
    expect(body).toContain('MISSING: NOT RUN repo-native validation: execution_disabled');
    expect(body).not.toContain('Nothing was executed');
    expect(result.validation).toMatchObject({ status: 'not_run', commands: [] });
    // As when the validator runs: a validation the policy did not run is missing (CAUTION).
    expect(mergeStatus(analysisOf(result))).toBe('CAUTION');
  }, 60_000);

  test('policy filters that do not match: execution_filters_not_matched, even with the switch off', async () => {
    const filters = [{ conditions: [{ field: 'path', operator: 'is', values: ['docs/**'] }] }];
    const { body } = await reviewedBody(
      { VERDICT_VALIDATION_ENABLED: '0' },
      { execution: { mode: 'filters', filters } },
    );
    expect(body).toContain('MISSING: NOT RUN repo-native validation: execution_filters_not_matched');
  }, 60_000);

  test("the operator's switch off: disabled_by_operator, stated but not a missing validation", async () => {
    const { body, result } = await reviewedBody({ VERDICT_VALIDATION_ENABLED: '0' });
    expect(body).toContain(
      '- SKIPPED repo-native validation: disabled_by_operator (VERDICT_VALIDATION_ENABLED=0)',
    );
    expect(body).not.toContain('MISSING');
    expect(mergeStatus(analysisOf(result))).toBe('CLEAR');
  }, 60_000);

  test('switch unset and no executor on this machine: SKIPPED bubblewrap: binary unavailable', async () => {
    const { body, result } = await reviewedBody({});
    expect(body).toContain('- SKIPPED bubblewrap: binary unavailable');
    expect(result.validation).toMatchObject({ status: 'skipped', notRun: [] });
    expect(mergeStatus(analysisOf(result))).toBe('CLEAR');
  }, 60_000);
});
