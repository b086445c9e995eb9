import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jest } from '@jest/globals';
import { loadConfig } from '../../src/config/index.js';
import { reviewPolicySchema } from '../../src/policy/policy.schema.js';
import {
  budgetGate,
  decideValidation,
  gateE2b,
  OUTCOMES,
  selectValidation,
  SERVER_SWITCH_OFF,
  serverOffOutcome,
  storedValidation,
  type E2bGateInput,
  type ValidationInput,
} from '../../src/validation/decide.js';

const execution = (raw: unknown) => reviewPolicySchema.parse({ execution: raw }).execution;
const docsOnly = {
  conditions: [{ field: 'path', operator: 'is', values: ['src/**'] }],
};
const pr = { paths: ['src/a.ts'], labels: [], title: 'Fix', draft: false };

function input(overrides: Partial<ValidationInput> = {}): ValidationInput {
  return { execution: execution({}), provider: undefined, pr, ...overrides };
}
const decide = (overrides: Partial<ValidationInput> = {}) => decideValidation(input(overrides));

describe('decideValidation: policy, filters, executor name', () => {
  test('the default policy and no provider run the default sandbox', () => {
    expect(decide()).toEqual({ run: true, primary: 'bubblewrap', shadow: null, notes: [] });
  });

  test('execution.mode never: NOT RUN execution_disabled, whatever the provider', () => {
    for (const provider of ['e2b', 'executor_a', undefined]) {
      expect(decide({ execution: execution({ mode: 'never' }), provider })).toEqual({
        run: false,
        code: 'execution_disabled',
        outcome: 'NOT RUN repo-native validation: execution_disabled',
      });
    }
  });

  test('execution.mode filters: a PR outside the filters is execution_filters_not_matched', () => {
    const filters = execution({ mode: 'filters', filters: [docsOnly] });
    expect(decide({ execution: filters, pr: { ...pr, paths: ['docs/x.md'] } })).toEqual({
      run: false,
      code: 'execution_filters_not_matched',
      outcome: 'NOT RUN repo-native validation: execution_filters_not_matched',
    });
    expect(decide({ execution: filters })).toMatchObject({
      run: true,
      primary: 'bubblewrap',
    });
  });

  test('execution.mode filters with an empty list matches every PR; filters are ignored under always', () => {
    expect(decide({ execution: execution({ mode: 'filters' }) })).toMatchObject({
      run: true,
    });
    const always = execution({ mode: 'always', filters: [docsOnly] });
    expect(decide({ execution: always, pr: { paths: ['docs/x.md'] } })).toMatchObject({
      run: true,
    });
  });

  test('missing facts defer the filters, and deferred is not denied: it runs with a note', () => {
    const filters = execution({ mode: 'filters', filters: [docsOnly] });
    expect(decide({ execution: filters, pr: { paths: null } })).toEqual({
      run: true,
      primary: 'bubblewrap',
      shadow: null,
      notes: ['execution_filters_deferred: missing paths'],
    });
  });

  test("each of NAMES.md's names selects its executor; shadow is bubblewrap with e2b beside it", () => {
    expect(decide({ provider: 'local' })).toMatchObject({ primary: 'local', shadow: null });
    expect(decide({ provider: 'bubblewrap' })).toMatchObject({ primary: 'bubblewrap' });
    expect(decide({ provider: 'e2b' })).toMatchObject({ primary: 'e2b', shadow: null });
    expect(decide({ provider: 'shadow' })).toMatchObject({
      primary: 'bubblewrap',
      shadow: 'e2b',
    });
  });

  test('the spec placeholders and anything else are unknown_executor', () => {
    for (const [provider, detail] of [
      ['executor_a', 'use "bubblewrap"'],
      ['executor_b', 'use "e2b"'],
      ['E2B', '"E2B"'],
      ['cloud', '"cloud"'],
      [42, 'a number value'],
      [{}, 'a object value'],
    ] as const) {
      const decision = decide({ provider });
      expect(decision).toMatchObject({
        run: false,
        code: 'unknown_executor',
        outcome: 'NOT RUN repo-native validation: unknown_executor',
      });
      expect(decision.run === false && decision.detail).toContain(detail);
    }
  });

  test('storedValidation reads the validation section (and its provider) of the operator configuration', () => {
    expect(storedValidation(null)).toEqual({});
    expect(storedValidation({ enabled: true })).toEqual({});
    expect(storedValidation({ validation: 'e2b' })).toEqual({});
    expect(storedValidation({ validation: ['e2b'] })).toEqual({});
    expect(storedValidation({ validation: { provider: 'e2b' } }).provider).toBe('e2b');
    expect(storedValidation({ validation: { provider: 'executor_b' } }).provider).toBe('executor_b');
  });
});

describe('the e2b gate: key, SDK, budget of the shadow', () => {
  const fine = (): E2bGateInput => ({
    role: 'shadow',
    apiKey: 'e2b_key',
    budgetUsd: 50,
    sdkAvailable: async () => true,
    readRecordedCostUsd: async () => 12.5,
  });

  test('enabled under the budget, with the recorded cost', async () => {
    expect(await gateE2b(fine())).toEqual({ enabled: true, notes: [], recordedCostUsd: 12.5 });
  });

  test('no API key (unset or blank): SKIPPED e2b: API key unavailable, nothing else asked', async () => {
    const sdk = jest.fn(async () => true);
    const read = jest.fn(async () => 0);
    for (const apiKey of [undefined, '', '  ']) {
      expect(await gateE2b({ ...fine(), apiKey, sdkAvailable: sdk, readRecordedCostUsd: read })).toEqual({
        enabled: false,
        outcome: 'SKIPPED e2b: API key unavailable',
        recordedCostUsd: null,
      });
    }
    expect(sdk).not.toHaveBeenCalled();
    expect(read).not.toHaveBeenCalled();
  });

  test('the SDK missing (or its probe failing): SKIPPED e2b: SDK unavailable', async () => {
    for (const sdkAvailable of [async () => false, async () => Promise.reject(new Error('boom'))]) {
      expect(await gateE2b({ ...fine(), sdkAvailable })).toMatchObject({
        enabled: false,
        outcome: 'SKIPPED e2b: SDK unavailable',
      });
    }
  });

  test('the shadow at or above the budget is withheld: executor_b_budget_exhausted', async () => {
    for (const cost of [50, 50.01, 1000]) {
      expect(await gateE2b({ ...fine(), readRecordedCostUsd: async () => cost })).toEqual({
        enabled: false,
        outcome: 'executor_b_budget_exhausted',
        detail: `recorded e2b cost $${cost.toFixed(2)}, budget $50.00`,
        recordedCostUsd: cost,
      });
    }
    expect(await gateE2b({ ...fine(), readRecordedCostUsd: async () => 49.99 })).toMatchObject({
      enabled: true,
    });
    expect(await gateE2b({ ...fine(), budgetUsd: 0, readRecordedCostUsd: async () => 0 })).toMatchObject({
      enabled: false,
      outcome: 'executor_b_budget_exhausted',
    });
  });

  test('a failed budget read leaves the shadow enabled: executor_b_budget_read_failed', async () => {
    for (const read of [
      async () => Promise.reject(new Error('db down')),
      async () => Number.NaN,
      async () => -1,
      async () => 'x' as unknown as number,
    ]) {
      expect(await budgetGate(50, read)).toEqual({
        enabled: true,
        notes: ['executor_b_budget_read_failed'],
        recordedCostUsd: null,
      });
    }
  });

  test('the primary e2b executor is never withheld by the budget (and the budget is not read)', async () => {
    const read = jest.fn(async () => 1e6);
    expect(await gateE2b({ ...fine(), role: 'primary', readRecordedCostUsd: read })).toEqual({
      enabled: true,
      notes: [],
      recordedCostUsd: null,
    });
    expect(read).not.toHaveBeenCalled();
  });
});

describe('selectValidation: the decision and the e2b gates together', () => {
  const deps = (over: Partial<E2bGateInput> = {}) => ({
    apiKey: 'k',
    budgetUsd: 50,
    sdkAvailable: async () => true,
    readRecordedCostUsd: async () => 0,
    ...over,
  });
  /** selectValidation for the provider, with deps(`over`). */
  const select = (provider: string, over: Partial<E2bGateInput> = {}) =>
    selectValidation(input({ provider }), deps(over));

  test('not run decisions pass through without touching e2b', async () => {
    const read = jest.fn(async () => 0);
    expect(
      await selectValidation(
        input({ execution: execution({ mode: 'never' }), provider: 'shadow' }),
        deps({ readRecordedCostUsd: read }),
      ),
    ).toMatchObject({ run: false, outcome: OUTCOMES.executionDisabled });
    expect(read).not.toHaveBeenCalled();
  });

  test('shadow under budget: bubblewrap with the e2b shadow', async () => {
    expect(await select('shadow')).toEqual({
      run: true,
      primary: 'bubblewrap',
      shadow: 'e2b',
      outcomes: [],
      notes: [],
    });
  });

  test('shadow over budget: only the e2b shadow is withheld, the primary still runs', async () => {
    expect(await select('shadow', { readRecordedCostUsd: async () => 50 })).toEqual({
      run: true,
      primary: 'bubblewrap',
      shadow: null,
      outcomes: [
        {
          role: 'shadow',
          executor: 'e2b',
          outcome: 'executor_b_budget_exhausted',
          detail: 'recorded e2b cost $50.00, budget $50.00',
        },
      ],
      notes: [],
    });
  });

  test('shadow with a failed budget read: the shadow runs, with the note', async () => {
    expect(
      await select('shadow', { readRecordedCostUsd: async () => Promise.reject(new Error('x')) }),
    ).toMatchObject({ primary: 'bubblewrap', shadow: 'e2b', notes: ['executor_b_budget_read_failed'] });
  });

  test('e2b as primary without a key or SDK: skipped with its outcome, no executor', async () => {
    expect(await select('e2b', { apiKey: undefined })).toEqual({
      run: true,
      primary: null,
      shadow: null,
      outcomes: [{ role: 'primary', executor: 'e2b', outcome: 'SKIPPED e2b: API key unavailable' }],
      notes: [],
    });
    expect(await select('e2b', { sdkAvailable: async () => false })).toMatchObject({
      primary: null,
      outcomes: [{ role: 'primary', executor: 'e2b', outcome: 'SKIPPED e2b: SDK unavailable' }],
    });
  });

  test('non-e2b executors are not gated here (their own refusals belong to the executors)', async () => {
    expect(await select('local', { apiKey: undefined })).toEqual({
      run: true,
      primary: 'local',
      shadow: null,
      outcomes: [],
      notes: [],
    });
  });
});

describe('the validation settings of the configuration', () => {
  test('validation is off without an executor and the switch unset; the switches and their defaults', () => {
    expect(loadConfig({}).validation).toMatchObject({
      enabled: false,
      switch: 'auto',
      timeoutMs: 2_700_000,
      evidenceWaitMs: 30_000,
      shadowTimeoutMs: 600_000,
      codeChangesOnly: 'true',
      trustedRepos: [],
      allowLocal: false,
      selfHostValidation: null,
      isolatedCommand: [],
    });
    const on = loadConfig({
      VERDICT_VALIDATION_ENABLED: '1',
      VERDICT_VALIDATION_TRUSTED_REPOS: 'Acme/Web, acme/api',
      VERDICT_VALIDATION_ISOLATED_COMMAND: ' docker run --rm  img ',
      VERDICT_VALIDATION_SHADOW_TIMEOUT_MS: '1000',
    }).validation;
    expect(on).toMatchObject({
      enabled: true,
      trustedRepos: ['acme/web', 'acme/api'],
      isolatedCommand: ['docker', 'run', '--rm', 'img'],
      shadowTimeoutMs: 1000,
    });
    expect(() => loadConfig({ VERDICT_VALIDATION_ENABLED: 'yes' })).toThrow(/VERDICT_VALIDATION_ENABLED/);
  });

  test('VERDICT_E2B_BUDGET_USD defaults to 50 and takes a non-negative amount; E2B_API_KEY is optional', () => {
    expect(loadConfig({}).validation).toMatchObject({ e2bApiKey: null, e2bBudgetUsd: 50 });
    expect(loadConfig({ VERDICT_E2B_BUDGET_USD: '12.5', E2B_API_KEY: ' k ' }).validation).toMatchObject({
      e2bApiKey: 'k',
      e2bBudgetUsd: 12.5,
      e2bCostPerSecondUsd: null,
    });
    expect(loadConfig({ REVIEWBOT_E2B_BUDGET_USD: '0' }).validation.e2bBudgetUsd).toBe(0);
    for (const bad of ['-1', 'fifty', '1e3']) {
      expect(() => loadConfig({ VERDICT_E2B_BUDGET_USD: bad })).toThrow(
        `VERDICT_E2B_BUDGET_USD must be a non-negative number of USD like 50 or 12.5 (got "${bad}")`,
      );
    }
  });

  test('VERDICT_E2B_COST_PER_SECOND_USD overrides the recorded e2b rate with a positive amount', () => {
    expect(loadConfig({ VERDICT_E2B_COST_PER_SECOND_USD: '0.00003025' }).validation.e2bCostPerSecondUsd).toBe(
      0.00003025,
    );
    for (const bad of ['0', '-0.1', 'cheap', '1e-5']) {
      expect(() => loadConfig({ VERDICT_E2B_COST_PER_SECOND_USD: bad })).toThrow(
        /VERDICT_E2B_COST_PER_SECOND_USD/,
      );
    }
  });
});

describe('serverOffOutcome: what a review says when the server runs no validator', () => {
  const missing = { bwrap: 'SKIPPED bubblewrap: binary unavailable', local: 'local_execution_not_allowed' };
  const off = (serverSwitch: 'off' | 'auto', overrides: Partial<ValidationInput> = {}) =>
    serverOffOutcome(serverSwitch, input(overrides), missing);

  test('the policy speaks first, whatever the switch, as a missing validation (not_run)', () => {
    const notMatching = {
      execution: execution({ mode: 'filters', filters: [docsOnly] }),
      pr: { ...pr, paths: ['README.md'] },
    };
    for (const sw of ['off', 'auto'] as const) {
      expect(off(sw, { execution: execution({ mode: 'never' }) })).toEqual({
        status: 'not_run',
        line: OUTCOMES.executionDisabled,
      });
      expect(off(sw, notMatching)).toEqual({ status: 'not_run', line: OUTCOMES.filtersNotMatched });
      expect(off(sw, { provider: 'executor_a' }).line).toMatch(
        /^NOT RUN repo-native validation: unknown_executor \(/,
      );
    }
  });

  test("the operator's switch off: skipped, disabled_by_operator", () => {
    expect(off('off')).toEqual({ status: 'skipped', line: SERVER_SWITCH_OFF });
    expect(SERVER_SWITCH_OFF).toBe(
      'SKIPPED repo-native validation: disabled_by_operator (VERDICT_VALIDATION_ENABLED=0)',
    );
  });

  test('switch unset and no executor here: the 7.4 outcome of the executor the repository selects', () => {
    expect(off('auto')).toEqual({ status: 'skipped', line: 'SKIPPED bubblewrap: binary unavailable' });
    expect(off('auto', { provider: 'shadow' }).line).toBe('SKIPPED bubblewrap: binary unavailable');
    expect(off('auto', { provider: 'e2b' }).line).toBe('SKIPPED e2b: API key unavailable');
    expect(off('auto', { provider: 'local' }).line).toBe('local_execution_not_allowed');
  });
});

describe("VERDICT_VALIDATION_ENABLED: the operator's switch", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-bwrap-'));
  fs.writeFileSync(path.join(dir, 'bwrap'), '#!/bin/sh\n', { mode: 0o755 });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const v = (env: Record<string, string>) => {
    const { enabled, switch: sw } = loadConfig(env).validation;
    return { enabled, switch: sw };
  };

  test('unset: on when an executor is available (bwrap on PATH, an e2b key, local allowed)', () => {
    expect(v({ PATH: dir })).toEqual({ enabled: true, switch: 'auto' });
    expect(v({ PATH: '/nonexistent' })).toEqual({ enabled: false, switch: 'auto' });
    expect(v({ E2B_API_KEY: 'e2b_x' })).toEqual({ enabled: true, switch: 'auto' });
    expect(v({ VERDICT_VALIDATION_ALLOW_LOCAL: '1' })).toEqual({ enabled: true, switch: 'auto' });
  });

  test('set, it decides: 0 is a kill switch even with an executor, 1 turns it on without one', () => {
    expect(v({ PATH: dir, VERDICT_VALIDATION_ENABLED: '0' })).toEqual({ enabled: false, switch: 'off' });
    expect(v({ VERDICT_VALIDATION_ENABLED: '1' })).toEqual({ enabled: true, switch: 'on' });
  });
});
