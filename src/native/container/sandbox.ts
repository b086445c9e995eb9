/**
 * Validation in the review container (review-engine 4.2, 7.4): the container runs no command itself. With
 * `VERDICT_CF_SANDBOX_ENABLED=1` the `bubblewrap` and `local` executors are this one, which packs the
 * checkout into a gzip'd tar and sends the plan to `sandbox.internal/run`; the outer worker hands it to the
 * run's sandbox, whose executor of that name runs it (src/native/sandbox/). Without the flag the executor
 * cannot be built, and the review reports "no sandbox binding available" (src/validation/review.ts).
 */
import * as tar from 'tar';
import { OUTCOMES } from '../../validation/decide.js';
import type { ExecutorFactory } from '../../validation/executors.js';
import { NO_SANDBOX_BINDING } from '../../validation/review.js';
import type { Executor, ValidationOutcome } from '../../validation/types.js';
import { outcomeFromPlan, simpleOutcome } from '../../validation/types.js';
import {
  SANDBOX_ARCHIVE_MAX_BYTES,
  SANDBOX_EXECUTORS,
  validationOutcomeSchema,
  type SandboxJob,
} from '../protocol.js';
import { InternalCallError, type InternalClient } from './internal.js';

/** The checkout as a gzip'd tar of its files (paths relative to it); null when larger than the cap. */
async function pack(dir: string): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of tar.c({ gzip: true, cwd: dir, portable: true }, ['.'])) {
    size += (chunk as Buffer).length;
    if (size > SANDBOX_ARCHIVE_MAX_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The executor of `name` that runs in the run's sandbox through `sandbox.internal`. */
function sandboxExecutor(
  name: (typeof SANDBOX_EXECUTORS)[number],
  trusted: boolean,
  internal: InternalClient,
  leased: () => { runId: string; leaseToken: string; leaseName?: string },
): Executor {
  return {
    name,
    async run(plan, dir, opts): Promise<ValidationOutcome> {
      if (plan.kind !== 'run') return outcomeFromPlan(name, plan);
      const archive = await pack(dir);
      if (!archive) {
        const mib = SANDBOX_ARCHIVE_MAX_BYTES / 1024 / 1024;
        return simpleOutcome(name, 'error', `ERROR ${name}: the checkout is larger than ${mib} MiB packed`);
      }
      const job: SandboxJob = {
        executor: name,
        trusted,
        plan,
        timeoutMs: Math.max(1, Math.floor(opts.timeoutMs)),
        archive: archive.toString('base64'),
      };
      try {
        return await internal(
          'sandbox.internal',
          '/run',
          { ...leased(), ...job },
          validationOutcomeSchema,
          opts.signal,
        );
      } catch (error) {
        if (error instanceof InternalCallError && error.code === 'no_sandbox')
          return simpleOutcome(name, 'not_run', `${NO_SANDBOX_BINDING} for ${name}`);
        if (opts.signal?.aborted)
          return simpleOutcome(name, 'not_run', `NOT RUN ${name}: cancelled (sandbox request aborted)`);
        return simpleOutcome(name, 'error', `ERROR ${name}: ${(error as Error).message}`);
      }
    },
  };
}

/**
 * The container's executor factory (ReviewValidationDeps.executor): the sandbox's executors when the
 * sandbox is enabled; e2b is never provisioned here (its key is not forwarded: review-engine 8).
 */
export function containerExecutors(
  sandboxEnabled: boolean,
  internal: InternalClient,
  leased: () => { runId: string; leaseToken: string; leaseName?: string },
): ExecutorFactory {
  return (name, { trusted }) => {
    if (name === 'e2b')
      return { name, run: async () => simpleOutcome('e2b', 'skipped', OUTCOMES.e2bKeyUnavailable) };
    if (!sandboxEnabled) throw new Error('VERDICT_CF_SANDBOX_ENABLED is not 1 in the container');
    return sandboxExecutor(name, trusted, internal, leased);
  };
}
