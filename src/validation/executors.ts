/**
 * Executor selection by NAMES.md name (`validation.provider`): `local`, `bubblewrap`, `e2b`, `shadow`.
 * Anything else, the spec placeholders `executor_a`/`executor_b` included, is `unknown_executor`.
 */
import { createBubblewrapExecutor, type BubblewrapOptions } from './bubblewrap.js';
import { createLocalExecutor, type LocalOptions } from './local.js';
import { createShadowExecutor, DEFAULT_SHADOW_TIMEOUT_MS } from './shadow.js';
import type { Executor, ExecutorName, ValidationOutcome } from './types.js';
import { EXECUTOR_NAMES, simpleOutcome } from './types.js';

export const UNKNOWN_EXECUTOR = 'unknown_executor';
export const E2B_SDK_UNAVAILABLE = 'SKIPPED e2b: SDK unavailable';

export interface ExecutorDeps {
  bubblewrap?: BubblewrapOptions;
  local?: LocalOptions;
  /** The e2b executor is built elsewhere; without it, `e2b` answers `SKIPPED e2b: SDK unavailable`. */
  e2b?: () => Executor;
  /** For `shadow`: the primary and the shadow (defaults `bubblewrap` and `e2b`), and the shadow's timeout. */
  shadow?: {
    primary?: Exclude<ExecutorName, 'shadow'>;
    secondary?: Exclude<ExecutorName, 'shadow'>;
    timeoutMs?: number;
  };
}

export function isExecutorName(name: string): name is ExecutorName {
  return (EXECUTOR_NAMES as readonly string[]).includes(name);
}

export type ExecutorSelection = { ok: true; executor: Executor } | { ok: false; outcome: ValidationOutcome };

function unavailableE2b(): Executor {
  return { name: 'e2b', run: async () => simpleOutcome('e2b', 'skipped', E2B_SDK_UNAVAILABLE) };
}

export function selectExecutor(name: string, deps: ExecutorDeps = {}): ExecutorSelection {
  if (!isExecutorName(name)) return { ok: false, outcome: simpleOutcome(name, 'refused', UNKNOWN_EXECUTOR) };
  const make = (n: Exclude<ExecutorName, 'shadow'>): Executor => {
    if (n === 'bubblewrap') return createBubblewrapExecutor(deps.bubblewrap);
    if (n === 'local') return createLocalExecutor(deps.local);
    return deps.e2b ? deps.e2b() : unavailableE2b();
  };
  if (name !== 'shadow') return { ok: true, executor: make(name) };
  return {
    ok: true,
    executor: createShadowExecutor({
      primary: make(deps.shadow?.primary ?? 'bubblewrap'),
      shadow: make(deps.shadow?.secondary ?? 'e2b'),
      shadowTimeoutMs: deps.shadow?.timeoutMs ?? DEFAULT_SHADOW_TIMEOUT_MS,
    }),
  };
}
