import { findBinary } from '../validation/bubblewrap.js';
import type { ProcessEnv, Settings } from './env.js';

/** The operator's validation switch: set on or off, or unset (on when an executor is available). */
export type ValidationSwitch = 'on' | 'off' | 'auto';

/** Repo-native validation settings (issue 26; docs/validation-policy.md). */
export type ValidationConfig = {
  /**
   * Whether the validator runs: `VERDICT_VALIDATION_ENABLED` when set, else whether an executor is
   * available (`switch: 'auto'`). Off, nothing is executed and the review body says why (validate.ts).
   */
  enabled: boolean;
  /** `VERDICT_VALIDATION_ENABLED` as set (`on`, `off`), or `auto` when unset. */
  switch: ValidationSwitch;
  /** `VERDICT_VALIDATION_TIMEOUT_MS`: the time limit of one validation run (all its commands). */
  timeoutMs: number;
  /** `VERDICT_VALIDATION_EVIDENCE_WAIT_MS`: how long the model call waits for validation results. */
  evidenceWaitMs: number;
  /** `VERDICT_VALIDATION_SHADOW_TIMEOUT_MS`. */
  shadowTimeoutMs: number;
  /** `VERDICT_VALIDATION_CODE_CHANGES_ONLY` as written (only exactly `false` turns the gate off). */
  codeChangesOnly: string;
  /** `VERDICT_VALIDATION_TRUSTED_REPOS`, lower case. */
  trustedRepos: string[];
  /** `VERDICT_VALIDATION_ALLOW_LOCAL`. */
  allowLocal: boolean;
  /** `VERDICT_SELF_HOST_VALIDATION` as written (only `1` enables it). */
  selfHostValidation: string | null;
  /** `VERDICT_VALIDATION_ISOLATED_COMMAND` as argv (empty: none). */
  isolatedCommand: string[];
  /** `E2B_API_KEY` (null: e2b is skipped with `SKIPPED e2b: API key unavailable`). */
  e2bApiKey: string | null;
  /** `VERDICT_E2B_BUDGET_USD`: recorded e2b cost at or above which the e2b shadow is withheld. */
  e2bBudgetUsd: number;
  /** `VERDICT_VALIDATION_INSTALL`: the bubblewrap executor's dependency install step (`off`: offline only). */
  install: 'off' | 'registry';
  /** `VERDICT_VALIDATION_REGISTRY`: the npm registry of the install step, with a trailing slash. */
  registry: string;
  /** `VERDICT_E2B_COST_PER_SECOND_USD` (null: the recorded price table of src/validation/e2b.ts). */
  e2bCostPerSecondUsd: number | null;
};

/**
 * `VERDICT_VALIDATION_ENABLED` is the operator's kill switch: set, it decides; unset (`auto`), validation
 * runs when an executor is available: `bwrap` on PATH (the default executor), an `E2B_API_KEY`, or the
 * `local` executor allowed. Off, reviews say why nothing ran (review-engine 7.4, docs/validation.md).
 */
export function validationConfig(s: Settings, env: ProcessEnv): ValidationConfig {
  const set = s.VERDICT_VALIDATION_ENABLED;
  const available =
    findBinary('bwrap', env.PATH ?? '') !== undefined ||
    Boolean(s.E2B_API_KEY) ||
    s.VERDICT_VALIDATION_ALLOW_LOCAL;
  return {
    enabled: set ?? available,
    switch: set === undefined ? 'auto' : set ? 'on' : 'off',
    timeoutMs: s.VERDICT_VALIDATION_TIMEOUT_MS,
    evidenceWaitMs: s.VERDICT_VALIDATION_EVIDENCE_WAIT_MS,
    shadowTimeoutMs: s.VERDICT_VALIDATION_SHADOW_TIMEOUT_MS,
    codeChangesOnly: s.VERDICT_VALIDATION_CODE_CHANGES_ONLY,
    trustedRepos: s.VERDICT_VALIDATION_TRUSTED_REPOS ?? [],
    allowLocal: s.VERDICT_VALIDATION_ALLOW_LOCAL,
    selfHostValidation: s.VERDICT_SELF_HOST_VALIDATION ?? null,
    isolatedCommand: (s.VERDICT_VALIDATION_ISOLATED_COMMAND ?? '').split(/\s+/).filter(Boolean),
    e2bApiKey: s.E2B_API_KEY ?? null,
    e2bBudgetUsd: s.VERDICT_E2B_BUDGET_USD,
    install: s.VERDICT_VALIDATION_INSTALL,
    registry: s.VERDICT_VALIDATION_REGISTRY,
    e2bCostPerSecondUsd: s.VERDICT_E2B_COST_PER_SECOND_USD ?? null,
  };
}
