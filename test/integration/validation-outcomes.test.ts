import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_REVIEW_POLICY, type ReviewPolicy } from '../../src/policy/policy.schema.js';
import { findBinary } from '../../src/validation/bubblewrap.js';
import { createExecutor, type ExecutorDeps } from '../../src/validation/executors.js';
import { validationFindings } from '../../src/validation/report.js';
import {
  NO_SANDBOX_BINDING,
  validateReview,
  type ReviewValidationDeps,
  type ReviewValidationInput,
} from '../../src/validation/review.js';
import { simpleOutcome } from '../../src/validation/types.js';

/**
 * Every outcome of review-engine 7.4, produced by the validation of a review (src/validation/review.ts)
 * with the real executors; the checkout copies a fixture repository instead of downloading a tarball.
 */
const FIXTURES = path.resolve('fixtures/validation');
const hasBwrap = findBinary('bwrap') !== undefined || Boolean(process.env.CI);
const itBwrap = hasBwrap ? test : test.skip;

let scratchRoot: string;
beforeAll(() => {
  scratchRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-outcomes-'));
});
afterAll(() => fs.rmSync(scratchRoot, { recursive: true, force: true }));

function deps(over: Partial<ReviewValidationDeps> & { executors?: ExecutorDeps } = {}): ReviewValidationDeps {
  const { executors, ...rest } = over;
  const fixtureOf: Record<string, string> = { head: 'passing', base: 'passing' };
  return {
    apiKey: undefined,
    budgetUsd: 50,
    sdkAvailable: async () => true,
    readRecordedCostUsd: async () => 0,
    timeoutMs: 30_000,
    shadowTimeoutMs: 30_000,
    codeChangesOnly: 'true',
    trustedRepos: [],
    scratchRoot,
    now: () => Date.now(),
    executor: (name, { trusted }) =>
      createExecutor(name, { ...executors, bubblewrap: { ...executors?.bubblewrap, trusted } }),
    checkout: async (ref, dir) => {
      await fs.promises.cp(path.join(FIXTURES, fixtureOf[ref] ?? ref), dir, { recursive: true });
    },
    ...rest,
  };
}

function input(over: Partial<ReviewValidationInput> & { policy?: Partial<ReviewPolicy['execution']> } = {}) {
  const { policy, ...rest } = over;
  return {
    repo: 'acme/web',
    headSha: 'head',
    baseSha: 'base',
    changedPaths: ['sum.js'],
    execution: { ...DEFAULT_REVIEW_POLICY.execution, ...policy },
    operatorConfig: null,
    repoCommands: [],
    pr: { labels: ['backend'], paths: ['sum.js'], repository: 'acme/web' },
    signal: new AbortController().signal,
    ...rest,
  } satisfies ReviewValidationInput;
}

/** The report of a review's validation with deps(`d`) and input(`i`). */
async function validate(d: Parameters<typeof deps>[0] = {}, i: Parameters<typeof input>[0] = {}) {
  return (await validateReview(deps(d), input(i))).report;
}

describe('validation outcomes of review-engine 7.4, through a review', () => {
  test('execution.mode never: NOT RUN repo-native validation: execution_disabled', async () => {
    const report = await validate({}, { policy: { mode: 'never' } });
    expect(report).toMatchObject({ status: 'not_run', commands: [] });
    expect(report.notRun).toEqual(['NOT RUN repo-native validation: execution_disabled']);
  });

  test('execution.mode filters without a match: execution_filters_not_matched', async () => {
    const filters = [{ conditions: [{ field: 'label', operator: 'is', values: ['run-ci'] }] }];
    const report = await validate(
      {},
      { policy: { mode: 'filters', filters: filters as ReviewPolicy['execution']['filters'] } },
    );
    expect(report.notRun).toEqual(['NOT RUN repo-native validation: execution_filters_not_matched']);
  });

  test('a validation.provider that is not an executor name: unknown_executor', async () => {
    const report = await validate({}, { operatorConfig: { validation: { provider: 'executor_a' } } });
    expect(report.status).toBe('not_run');
    expect(report.notRun[0]).toMatch(/^NOT RUN repo-native validation: unknown_executor \(.*"executor_a"/);
  });

  test('e2b without a key, and e2b without its SDK: SKIPPED e2b', async () => {
    const provider = { validation: { provider: 'e2b' } };
    const noKey = await validate({}, { operatorConfig: provider });
    expect(noKey.notRun).toEqual(['SKIPPED e2b: API key unavailable']);
    const noSdk = await validate(
      { apiKey: 'e2b_key', sdkAvailable: async () => false },
      { operatorConfig: provider },
    );
    expect(noSdk.notRun).toEqual(['SKIPPED e2b: SDK unavailable']);
  });

  test('an executor with no binding in this process: no sandbox binding available', async () => {
    const report = await validate({
      executor: () => {
        throw new Error('not wired');
      },
    });
    expect(report.evidence).toBe(NO_SANDBOX_BINDING);
    expect(report.notRun).toEqual([`${NO_SANDBOX_BINDING} for bubblewrap (not wired)`]);
  });

  test('local: local_execution_not_allowed, then self_host_not_configured', async () => {
    const provider = { validation: { provider: 'local' } };
    const refused = await validate({}, { operatorConfig: provider });
    expect(refused).toMatchObject({ status: 'refused', evidence: 'local_execution_not_allowed' });
    expect(refused.notRun).toEqual(['npm run test: not run (local_execution_not_allowed)']);
    const allowed = await validate(
      { executors: { local: { allowLocal: true } } },
      { operatorConfig: provider },
    );
    expect(allowed).toMatchObject({ status: 'refused', evidence: 'self_host_not_configured' });
  });

  test('bubblewrap missing: SKIPPED bubblewrap: binary unavailable', async () => {
    const report = await validate({ executors: { bubblewrap: { bwrapPath: '/nonexistent/bwrap' } } });
    expect(report).toMatchObject({ status: 'skipped', evidence: 'SKIPPED bubblewrap: binary unavailable' });
    expect(report.notRun).toEqual(['npm run test: not run (SKIPPED bubblewrap: binary unavailable)']);
  });

  itBwrap(
    'repository-committed commands of an untrusted repository: REFUSED; trusted: they run',
    async () => {
      const repoCommands = [{ check: 'test' as const, run: ['node', '--test'] }];
      const untrusted = await validate({}, { repoCommands });
      expect(untrusted).toMatchObject({
        status: 'refused',
        evidence: 'REFUSED bubblewrap: repo-committed config untrusted',
      });
      expect(untrusted.notRun).toHaveLength(1);
      const trusted = await validate({ trustedRepos: ['acme/web'] }, { repoCommands });
      expect(trusted).toMatchObject({ status: 'passed', commands: [{ command: 'node --test' }] });
    },
  );

  test('a repository without standard scripts: no standard test/typecheck/lint/build scripts', async () => {
    const bare = path.join(scratchRoot, 'bare');
    fs.mkdirSync(bare, { recursive: true });
    fs.writeFileSync(path.join(bare, 'main.c'), 'int main(void) { return 0; }\n');
    const report = await validate(
      { checkout: (_r, dir) => fs.promises.cp(bare, dir, { recursive: true }) },
      { changedPaths: ['main.c'] },
    );
    expect(report).toMatchObject({
      status: 'not_run',
      evidence: 'no standard test/typecheck/lint/build scripts',
    });
    expect(report.notRun).toEqual(['no standard test/typecheck/lint/build scripts']);
  });

  itBwrap(
    'a docs-only change is skipped and is not missing; VERDICT_VALIDATION_CODE_CHANGES_ONLY=false runs it',
    async () => {
      const docs = { changedPaths: ['README.md', 'docs/guide.md'] };
      expect(await validate({}, docs)).toMatchObject({ status: 'skipped', notRun: [] });
      expect((await validate({ codeChangesOnly: 'false' }, docs)).status).toBe('passed');
      // The repository's own operator setting wins over the environment.
      const repoForced = await validate(
        {},
        { ...docs, operatorConfig: { validation: { codeChangesOnly: false } } },
      );
      expect(repoForced.status).toBe('passed');
    },
  );

  itBwrap('a head that cannot be checked out is an error outcome, said in notRun', async () => {
    const report = await validate({
      checkout: async () => {
        throw new Error('HTTP 404');
      },
    });
    expect(report.status).toBe('error');
    expect(report.notRun).toEqual(['ERROR validation: the head could not be checked out (HTTP 404)']);
  });

  itBwrap(
    'shadow: the e2b shadow withheld at the budget is a note, and the primary still validates',
    async () => {
      const report = await validate(
        { apiKey: 'e2b_key', readRecordedCostUsd: async () => 50 },
        { operatorConfig: { validation: { provider: 'shadow' } } },
      );
      expect(report.status).toBe('passed');
      expect(report.shadow).toBeNull();
      expect(report.notes).toContain('executor_b_budget_exhausted (recorded e2b cost $50.00, budget $50.00)');
    },
  );

  itBwrap('shadow: a failing shadow is shown but is never evidence that validation failed', async () => {
    const failing = {
      name: 'e2b',
      run: async () => simpleOutcome('e2b', 'failed', 'FAILED e2b: npm run test (exit 1)'),
    };
    const report = await validate(
      {
        apiKey: 'e2b_key',
        executor: (name, { trusted }) => {
          if (name === 'e2b') return failing;
          return createExecutor(name, { bubblewrap: { trusted } });
        },
      },
      { operatorConfig: { validation: { provider: 'shadow' } } },
    );
    expect(report.status).toBe('passed');
    expect(report.shadow).toEqual({
      executor: 'e2b',
      status: 'failed',
      evidence: 'FAILED e2b: npm run test (exit 1)',
    });
    expect(validationFindings(report, ['sum.js'])).toEqual([]);
  });

  itBwrap(
    'a failure the PR introduced is a high finding; one whose base cannot be read is medium',
    async () => {
      const checkout = (fixtures: Record<string, string>) => async (ref: string, dir: string) => {
        if (!fixtures[ref]) throw new Error('HTTP 404');
        await fs.promises.cp(path.join(FIXTURES, fixtures[ref]), dir, { recursive: true });
      };
      const introduced = await validate({
        checkout: checkout({ head: 'failing-after', base: 'failing-before' }),
      });
      expect(introduced.commands[0]).toMatchObject({ passed: false, introduced: true });
      const [finding] = validationFindings(introduced, ['test/sum.test.js', 'sum.js']);
      expect(finding).toMatchObject({
        severity: 'high',
        category: 'validation',
        validationCommand: 'npm run test',
      });
      expect(finding!.body).toMatch(/6 !== 5/);

      const unknownBase = await validate({ checkout: checkout({ head: 'failing-after' }) });
      expect(unknownBase.commands[0]).toMatchObject({ introduced: null });
      expect(unknownBase.commands[0]!.baseNote).toMatch(/base commit could not be checked out \(HTTP 404\)/);
      expect(validationFindings(unknownBase, ['sum.js'])[0]).toMatchObject({ severity: 'medium' });
    },
  );
});
