/**
 * `shadow` executor: runs a second executor beside the primary, with its own time limit. The combined
 * result is the primary's; the shadow's result rides along and its failure is never evidence that primary
 * validation failed (review-engine 7.4).
 */
import type { Executor, RunOptions, ValidationOutcome, ValidationPlan } from './types.js';
import { simpleOutcome } from './types.js';

export const DEFAULT_SHADOW_TIMEOUT_MS = 600000;
export const SHADOW_NOT_EVIDENCE = 'shadow validation failure is not evidence that primary validation failed';

export interface ShadowOptions {
  primary: Executor;
  shadow: Executor;
  /** The shadow's own time limit (default 600000). */
  shadowTimeoutMs?: number;
}

/** Runs the executor; a throw is its `error` outcome. */
export async function safeRun(
  ex: Executor,
  plan: ValidationPlan,
  dir: string,
  opts: RunOptions,
): Promise<ValidationOutcome> {
  try {
    return await ex.run(plan, dir, opts);
  } catch (err) {
    return simpleOutcome(ex.name, 'error', `ERROR ${ex.name}: ${(err as Error).message}`);
  }
}

export function createShadowExecutor(o: ShadowOptions): Executor {
  return {
    name: 'shadow',
    async run(plan, checkoutDir, opts): Promise<ValidationOutcome> {
      const ctl = new AbortController();
      const onAbort = () => ctl.abort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const [primary, shadow] = await Promise.all([
          safeRun(o.primary, plan, checkoutDir, opts),
          safeRun(o.shadow, plan, checkoutDir, {
            timeoutMs: o.shadowTimeoutMs ?? DEFAULT_SHADOW_TIMEOUT_MS,
            signal: ctl.signal,
          }),
        ]);
        return { ...primary, shadow, note: [primary.note, SHADOW_NOT_EVIDENCE].filter(Boolean).join('; ') };
      } finally {
        opts.signal?.removeEventListener('abort', onAbort);
      }
    },
  };
}
