import { matchRules, type PrFacts } from '../policy/matcher.js';
import type { ReviewPolicy } from '../policy/policy.schema.js';

/**
 * Whether repo-native validation runs for a pull request, and with which executor: pure decisions over the
 * review policy's `execution` (operator-api 2.9, 2.10), the repository's `validation.provider` (operator-api
 * 2.8 with NAMES.md's executor names) and the e2b provisioning and budget rules (review-engine 7.4, 8).
 * Nothing here runs anything or reads the environment: the caller passes what it knows, including the
 * recorded-cost reader and the SDK probe. The order and every outcome string: docs/validation-policy.md.
 */

/** NAMES.md's executor names, the only values `validation.provider` takes. */
export const VALIDATION_PROVIDERS = ['local', 'bubblewrap', 'e2b', 'shadow'] as const;
export type ValidationProvider = (typeof VALIDATION_PROVIDERS)[number];
/** An executor that runs a plan (`shadow` is a selection of two of them, not an executor). */
export type ExecutorName = Exclude<ValidationProvider, 'shadow'>;

/** The spec's placeholders, named in errors to point at the real executor; they are not accepted. */
export const SPEC_EXECUTOR_WORDS: Readonly<Record<string, ValidationProvider>> = {
  executor_a: 'bubblewrap',
  executor_b: 'e2b',
};

/** The executor of a repository without `validation.provider`: the sandbox that works on these machines. */
export const DEFAULT_VALIDATION_PROVIDER: ValidationProvider = 'bubblewrap';
/** `shadow` runs the default sandbox as the primary and e2b beside it (the spec's executor B shadow selector). */
export const SHADOW_SELECTION = { primary: 'bubblewrap', shadow: 'e2b' } as const;

/** The prefix of a validation that did not run at all (review-engine 7.4). */
export const NOT_RUN_PREFIX = 'NOT RUN repo-native validation: ';

/** Outcome texts, exactly as review-engine 7.4 and NAMES.md write them. */
export const OUTCOMES = {
  executionDisabled: `${NOT_RUN_PREFIX}execution_disabled`,
  filtersNotMatched: `${NOT_RUN_PREFIX}execution_filters_not_matched`,
  unknownExecutor: `${NOT_RUN_PREFIX}unknown_executor`,
  e2bKeyUnavailable: 'SKIPPED e2b: API key unavailable',
  e2bSdkUnavailable: 'SKIPPED e2b: SDK unavailable',
  e2bBudgetExhausted: 'executor_b_budget_exhausted',
  e2bBudgetReadFailed: 'executor_b_budget_read_failed',
} as const;

export type NotRunCode = 'execution_disabled' | 'execution_filters_not_matched' | 'unknown_executor';

export type ValidationDecision =
  | {
      run: true;
      /** The executor of the primary validation (its result is evidence). */
      primary: ExecutorName;
      /** An executor run beside the primary (its failure is never evidence that validation failed). */
      shadow: ExecutorName | null;
      /** What the caller should know but that does not stop the run (deferred filter facts). */
      notes: string[];
    }
  | { run: false; code: NotRunCode; outcome: string; detail?: string };

export type ValidationInput = {
  /** The review policy's `execution` section. */
  execution: Pick<ReviewPolicy['execution'], 'mode' | 'filters'>;
  /**
   * The repository's stored `validation.provider` as found (operator configuration); anything but
   * NAMES.md's names, including the spec's `executor_a`/`executor_b` stored before they were refused, is
   * `unknown_executor`. Absent (undefined or null) selects DEFAULT_VALIDATION_PROVIDER.
   */
  provider: unknown;
  /** What is known of the pull request, for `execution.filters`. */
  pr: PrFacts;
};

/** Whether a value is one of NAMES.md's executor names (exact, case-sensitive). */
export function isValidationProvider(value: unknown): value is ValidationProvider {
  return typeof value === 'string' && (VALIDATION_PROVIDERS as readonly string[]).includes(value);
}

/**
 * Step 1 (pure, synchronous): the policy, then the filters, then the executor name.
 * - `execution.mode: never` → not run, `execution_disabled`.
 * - `execution.mode: filters` and the PR does not match `execution.filters` → not run,
 *   `execution_filters_not_matched`. An empty list matches every PR. When facts a condition needs are
 *   missing the match is deferred, and deferred is not denied (operator-api 2.10): validation runs, with a
 *   note `execution_filters_deferred: missing <facts>`.
 * - a provider that is not one of NAMES.md's names → not run, `unknown_executor` (the outcome names it).
 */
export function decideValidation(input: ValidationInput): ValidationDecision {
  const { execution } = input;
  if (execution.mode === 'never') {
    return { run: false, code: 'execution_disabled', outcome: OUTCOMES.executionDisabled };
  }
  const notes: string[] = [];
  if (execution.mode === 'filters') {
    const match = matchRules(execution.filters, input.pr);
    if (match.decision === 'no_match') {
      return { run: false, code: 'execution_filters_not_matched', outcome: OUTCOMES.filtersNotMatched };
    }
    if (match.decision === 'deferred') {
      notes.push(`execution_filters_deferred: missing ${match.missing.join(', ')}`);
    }
  }
  const provider = input.provider ?? DEFAULT_VALIDATION_PROVIDER;
  if (!isValidationProvider(provider)) {
    return {
      run: false,
      code: 'unknown_executor',
      outcome: OUTCOMES.unknownExecutor,
      detail: `validation.provider ${describeProvider(provider)} is not one of ${VALIDATION_PROVIDERS.join(', ')}`,
    };
  }
  if (provider === 'shadow') return { run: true, ...SHADOW_SELECTION, notes };
  return { run: true, primary: provider, shadow: null, notes };
}

function describeProvider(value: unknown): string {
  if (typeof value !== 'string') return `a ${value === null ? 'null' : typeof value} value`;
  const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  const real = SPEC_EXECUTOR_WORDS[value];
  return real ? `${shown} is the spec's placeholder; use "${real}"` : shown;
}

/** The repository's stored `validation` section (operator configuration), `{}` when it has none. */
export function storedValidation(
  config: Record<string, unknown> | null | undefined,
): Record<string, unknown> {
  const validation = config?.validation;
  if (validation === null || typeof validation !== 'object' || Array.isArray(validation)) return {};
  return validation as Record<string, unknown>;
}

// --- e2b: provisioning and budget ----------------------------------------------------------------------

export type E2bGateInput = {
  /** Whether e2b is the primary executor or the shadow beside it; the budget applies to the shadow only. */
  role: 'primary' | 'shadow';
  /** `E2B_API_KEY` of the executing process (blank counts as missing). */
  apiKey: string | undefined;
  /** `VERDICT_E2B_BUDGET_USD`. */
  budgetUsd: number;
  /** Whether the `e2b` SDK can be loaded (in production: e2b.ts's loadE2bSdk found it). */
  sdkAvailable: () => Promise<boolean>;
  /**
   * The cumulative recorded e2b cost in USD. No store keeps it yet: the caller passes a reader (a thrown
   * error, or a value that is not a finite non-negative number, is a failed read).
   */
  readRecordedCostUsd: () => Promise<number>;
};

export type E2bGate =
  | { enabled: true; notes: string[]; recordedCostUsd: number | null }
  | { enabled: false; outcome: string; detail?: string; recordedCostUsd: number | null };

/**
 * Step 2 for e2b (as primary or shadow), in this order:
 * 1. no API key → `SKIPPED e2b: API key unavailable`;
 * 2. the SDK cannot be loaded → `SKIPPED e2b: SDK unavailable`;
 * 3. as the shadow only: the recorded cost at or above the budget withholds it
 *    (`executor_b_budget_exhausted`); a failed read leaves it enabled with the note
 *    `executor_b_budget_read_failed`. The primary e2b executor is never withheld by the budget.
 */
export async function gateE2b(input: E2bGateInput): Promise<E2bGate> {
  if (input.apiKey === undefined || input.apiKey.trim() === '') {
    return { enabled: false, outcome: OUTCOMES.e2bKeyUnavailable, recordedCostUsd: null };
  }
  let sdk = false;
  try {
    sdk = await input.sdkAvailable();
  } catch {
    sdk = false;
  }
  if (!sdk) return { enabled: false, outcome: OUTCOMES.e2bSdkUnavailable, recordedCostUsd: null };
  if (input.role === 'primary') return { enabled: true, notes: [], recordedCostUsd: null };
  return budgetGate(input.budgetUsd, input.readRecordedCostUsd);
}

/** The budget rule alone: withheld at or above the budget; a failed read leaves the shadow enabled. */
export async function budgetGate(budgetUsd: number, read: () => Promise<number>): Promise<E2bGate> {
  let cost: unknown = null;
  try {
    cost = await read();
  } catch {
    /* a failed read */
  }
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) {
    return { enabled: true, notes: [OUTCOMES.e2bBudgetReadFailed], recordedCostUsd: null };
  }
  if (cost >= budgetUsd) {
    return {
      enabled: false,
      outcome: OUTCOMES.e2bBudgetExhausted,
      detail: `recorded e2b cost ${formatUsd(cost)}, budget ${formatUsd(budgetUsd)}`,
      recordedCostUsd: cost,
    };
  }
  return { enabled: true, notes: [], recordedCostUsd: cost };
}

function formatUsd(value: number): string {
  return `$${value.toFixed(2)}`;
}

// --- The whole decision ----------------------------------------------------------------------------------

export type ValidationPlanDeps = Omit<E2bGateInput, 'role'>;

export type SkippedExecutor = {
  role: 'primary' | 'shadow';
  executor: ExecutorName;
  /** Exactly one of the OUTCOMES texts. */
  outcome: string;
  detail?: string;
};

export type ValidationSelection =
  | Extract<ValidationDecision, { run: false }>
  | {
      run: true;
      /** The primary executor, or null when it was skipped (the outcome is in `outcomes`). */
      primary: ExecutorName | null;
      /** The shadow executor, or null when there is none or it was withheld (the outcome says why). */
      shadow: ExecutorName | null;
      /** Skipped or withheld executors, in the words of review-engine 7.4 (for the Validation Status). */
      outcomes: SkippedExecutor[];
      /** What does not stop a run: deferred filters, a failed budget read. */
      notes: string[];
    };

/**
 * Steps 1 and 2 together: decideValidation, then the e2b gate for each e2b role. Other executors' own
 * refusals (`local_execution_not_allowed`, `self_host_not_configured`, a missing `bwrap`) belong to the
 * executors, which report them when they are asked to run.
 */
export async function selectValidation(
  input: ValidationInput,
  deps: ValidationPlanDeps,
): Promise<ValidationSelection> {
  const decision = decideValidation(input);
  if (!decision.run) return decision;
  const outcomes: SkippedExecutor[] = [];
  const notes = [...decision.notes];
  const gate = async (name: ExecutorName | null, role: 'primary' | 'shadow') => {
    if (name !== 'e2b') return name;
    const result = await gateE2b({ ...deps, role });
    if (!result.enabled) {
      const { outcome, detail } = result;
      outcomes.push({ role, executor: name, outcome, ...(detail !== undefined ? { detail } : {}) });
      return null;
    }
    notes.push(...result.notes);
    return name;
  };
  const primary = await gate(decision.primary, 'primary');
  const shadow = await gate(decision.shadow, 'shadow');
  return { run: true, primary, shadow, outcomes, notes };
}

// --- the server's switch off ----------------------------------------------------------------------------

/** The operator turned validation off on this server (`VERDICT_VALIDATION_ENABLED=0`). */
export const SERVER_SWITCH_OFF =
  'SKIPPED repo-native validation: disabled_by_operator (VERDICT_VALIDATION_ENABLED=0)';

/**
 * What a review says when the server runs no validator. The policy has its say first, exactly as when the
 * validator runs: `execution_disabled`, `execution_filters_not_matched` or `unknown_executor` are `not_run`
 * (a missing validation). Otherwise the server is why: the operator's switch set off, or, with the switch
 * unset, the 7.4 outcome of the executor the repository selects, none being available here. Those are
 * `skipped`: stated in the Validation Status, not a missing validation of the pull request (validation
 * off on a server is how Verdict ran before it had a sandbox, and it does not make every review CAUTION).
 */
export function serverOffOutcome(
  serverSwitch: 'off' | 'auto',
  input: ValidationInput,
  missing: { bwrap: string; local: string },
): { status: 'not_run' | 'skipped'; line: string } {
  const decision = decideValidation(input);
  if (!decision.run) {
    const line = decision.detail ? `${decision.outcome} (${decision.detail})` : decision.outcome;
    return { status: 'not_run', line };
  }
  if (serverSwitch === 'off') return { status: 'skipped', line: SERVER_SWITCH_OFF };
  if (decision.primary === 'e2b') return { status: 'skipped', line: OUTCOMES.e2bKeyUnavailable };
  if (decision.primary === 'local') return { status: 'skipped', line: missing.local };
  return { status: 'skipped', line: missing.bwrap };
}
