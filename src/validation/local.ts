/**
 * `local` executor: host execution, refused unless the operator explicitly allows it, and even then only
 * through an operator-supplied isolated-executor command (a wrapper such as a container runner) with
 * VERDICT_SELF_HOST_VALIDATION=1. Verdict itself adds no isolation here beyond the time limit.
 */
import { runProcess } from './bubblewrap.js';
import type { Executor, RunOptions, ValidationOutcome, ValidationPlan } from './types.js';
import { commandArtifacts, outcomeFromPlan, runInTurn, simpleOutcome } from './types.js';

export const LOCAL_NOT_ALLOWED = 'local_execution_not_allowed';
export const SELF_HOST_NOT_CONFIGURED = 'self_host_not_configured';

export interface LocalOptions {
  /** Host execution explicitly allowed by the operator. */
  allowLocal?: boolean;
  /** The raw value of VERDICT_SELF_HOST_VALIDATION; only `1` enables it. */
  selfHostValidation?: string | undefined;
  /** argv prefix of the isolated-executor command; each planned command's argv is appended. */
  isolatedExecutorCommand?: string[];
  outputCapBytes?: number;
}

export function createLocalExecutor(o: LocalOptions = {}): Executor {
  return {
    name: 'local',
    async run(plan: ValidationPlan, checkoutDir: string, opts: RunOptions): Promise<ValidationOutcome> {
      if (!o.allowLocal) return simpleOutcome('local', 'refused', LOCAL_NOT_ALLOWED);
      const wrapper = o.isolatedExecutorCommand ?? [];
      if (o.selfHostValidation !== '1' || wrapper.length === 0) {
        return simpleOutcome('local', 'refused', SELF_HOST_NOT_CONFIGURED);
      }
      if (plan.kind !== 'run') return outcomeFromPlan('local', plan);
      const [bin, ...rest] = wrapper as [string, ...string[]];
      const cap = o.outputCapBytes ?? 64 * 1024;
      const results = await runInTurn(
        [],
        plan.commands,
        Date.now() + opts.timeoutMs,
        opts.signal,
        (cmd, left) => runProcess(bin, [...rest, ...cmd.argv], cmd, left, cap, opts.signal, checkoutDir),
      );
      const bad = results.find((r) => r.timedOut || r.exitCode !== 0);
      const status = bad
        ? bad.timedOut
          ? 'timed_out'
          : 'failed'
        : results.length < plan.commands.length
          ? 'not_run'
          : 'passed';
      const evidence = bad
        ? `${status === 'timed_out' ? 'TIMED OUT' : 'FAILED'} local: ${bad.command}`
        : `${status === 'passed' ? 'PASSED' : 'NOT RUN'} local: ${plan.commands.map((c) => c.argv.join(' ')).join(', ')}`;
      return {
        executor: 'local',
        status,
        evidence,
        commands: results,
        artifacts: commandArtifacts('local', results),
      };
    },
  };
}
