/**
 * The executor of a name that runs a plan: `local`, `bubblewrap` or `e2b` (NAMES.md). Which name a
 * repository gets, `shadow` (two of them side by side) and `unknown_executor` are decided in decide.ts and
 * review.ts; this only builds the executor.
 */
import { createBubblewrapExecutor, type BubblewrapOptions } from './bubblewrap.js';
import type { ExecutorName } from './decide.js';
import { OUTCOMES } from './decide.js';
import { createLocalExecutor, type LocalOptions } from './local.js';
import type { Executor } from './types.js';
import { simpleOutcome } from './types.js';

export interface ExecutorDeps {
  bubblewrap?: BubblewrapOptions;
  local?: LocalOptions;
  /** The e2b executor (src/validation/e2b.ts); without it, `e2b` answers `SKIPPED e2b: SDK unavailable`. */
  e2b?: () => Executor;
}

export function createExecutor(name: ExecutorName, deps: ExecutorDeps = {}): Executor {
  if (name === 'bubblewrap') return createBubblewrapExecutor(deps.bubblewrap);
  if (name === 'local') return createLocalExecutor(deps.local);
  if (deps.e2b) return deps.e2b();
  return { name: 'e2b', run: async () => simpleOutcome('e2b', 'skipped', OUTCOMES.e2bSdkUnavailable) };
}
