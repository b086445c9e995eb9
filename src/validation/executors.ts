/**
 * The executor of a name that runs a plan: `local`, `bubblewrap` or `e2b` (NAMES.md). Which name a
 * repository gets, `shadow` (two of them side by side) and `unknown_executor` are decided in decide.ts and
 * review.ts; this only builds the executor.
 */
import type { ValidationConfig } from '../config/validation.js';
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

/** Builds the executor of a name for a repository the operator does or does not trust. */
export type ExecutorFactory = (name: ExecutorName, opts: { trusted: boolean }) => Executor;

/** The executors of this process as the validation configuration sets them up (the server, the sandbox). */
export function configuredExecutors(
  v: Pick<ValidationConfig, 'install' | 'registry' | 'allowLocal' | 'selfHostValidation' | 'isolatedCommand'>,
  e2b?: () => Executor,
): ExecutorFactory {
  return (name, { trusted }) =>
    createExecutor(name, {
      bubblewrap: { trusted, install: { mode: v.install, registry: v.registry } },
      local: {
        allowLocal: v.allowLocal,
        selfHostValidation: v.selfHostValidation ?? undefined,
        isolatedExecutorCommand: v.isolatedCommand,
      },
      ...(e2b ? { e2b } : {}),
    });
}
