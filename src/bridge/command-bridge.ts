import type { Logger } from 'pino';
import type { Command, CommandKind } from '../store/commands.js';
import type { Store } from '../store/index.js';
import { systemClock, type Clock } from '../clock.js';
import { failureCode } from './command-rules.js';

/** Carries out one claimed command; resolves with its result, throws (CommandFailure or any error) to fail it. */
export type CommandExecutor = (command: Command) => Promise<Record<string, unknown>>;
export type CommandExecutors = Record<CommandKind, CommandExecutor>;

export type BridgeAuthority = 'live' | 'shadow';

/** Most commands one pass executes, so one pass ends well within its minute. */
const MAX_PER_PASS = 500;

type PlannedCommand = Pick<Command, 'id' | 'kind' | 'reviewKey' | 'repo' | 'prNumber' | 'deliveryId'>;
type Executed = { id: string; kind: CommandKind; status: 'succeeded' | 'failed' };

export type BridgePass =
  | {
      authority: 'live';
      dryRun: false;
      /** Commands this bridge claimed and finished, with their final status. */
      executed: Executed[];
      /** Commands another bridge claimed first (recorded as `skipped` events). */
      skipped: string[];
    }
  | {
      authority: 'shadow';
      /** Shadow authority plans only: nothing is claimed or executed, and these are not completion receipts. */
      dryRun: true;
      planned: PlannedCommand[];
    };

export type BridgeDeps = {
  store: Store;
  executors: CommandExecutors;
  authority: BridgeAuthority;
  /** Names this bridge in claims and events (`bridge:{host}:{pid}`). */
  id: string;
  log: Logger;
  /** Commands read per batch (default 50). */
  batch?: number;
  /** The clock each command's duration is measured on (default: the system's). */
  clock?: Clock;
};

/**
 * The command bridge (review-engine 3.5, operator-api 1.3): consumes queued operator commands. With
 * `live` authority it claims each one (`queued` → `running`, conditional, so two bridges never run the
 * same command: the loser records `skipped`), executes it and finishes it as `succeeded` with a result
 * or `failed` with an error. With `shadow` authority it only plans.
 */
export class CommandBridge {
  private running: Promise<BridgePass> | null = null;

  constructor(private readonly deps: BridgeDeps) {}

  /** One pass over the queued commands. Passes of one bridge never overlap: a second call joins the first. */
  runOnce(): Promise<BridgePass> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<BridgePass> {
    const { store, log } = this.deps;
    const batch = this.deps.batch ?? 50;
    if (this.deps.authority === 'shadow') {
      const queued = await store.commands.queued(MAX_PER_PASS);
      const planned = queued.map((c) => ({
        id: c.id,
        kind: c.kind,
        reviewKey: c.reviewKey,
        repo: c.repo,
        prNumber: c.prNumber,
        deliveryId: c.deliveryId,
      }));
      if (planned.length > 0) {
        log.info(
          { event: 'command-bridge-planned', dryRun: true, planned: planned.map((p) => p.id) },
          `command bridge (shadow authority) planned ${planned.length} command(s); none executed`,
        );
      }
      return { authority: 'shadow', dryRun: true, planned };
    }
    const executed: Executed[] = [];
    const skipped: string[] = [];
    const seen = new Set<string>();
    while (executed.length + skipped.length < MAX_PER_PASS) {
      const queued = (await store.commands.queued(batch)).filter((c) => !seen.has(c.id));
      if (queued.length === 0) break;
      for (const candidate of queued) {
        seen.add(candidate.id);
        const command = await store.commands.claim(candidate.id, this.deps.id);
        if (!command) {
          skipped.push(candidate.id);
          log.info(
            { event: 'command-skipped', commandId: candidate.id, bridge: this.deps.id },
            'command claimed by another bridge: skipped',
          );
          continue;
        }
        executed.push({ id: command.id, kind: command.kind, status: await this.execute(command) });
        if (executed.length + skipped.length >= MAX_PER_PASS) break;
      }
    }
    return { authority: 'live', dryRun: false, executed, skipped };
  }

  private async execute(command: Command): Promise<'succeeded' | 'failed'> {
    const { store, log } = this.deps;
    const clock = this.deps.clock ?? systemClock;
    const started = clock.now();
    let outcome:
      | { status: 'succeeded'; result: Record<string, unknown> }
      | { status: 'failed'; error: string; result: Record<string, unknown> };
    try {
      const result = await this.deps.executors[command.kind](command);
      outcome = { status: 'succeeded', result };
    } catch (error) {
      const code = failureCode(error);
      const message = (error as Error)?.message ?? String(error);
      outcome = { status: 'failed', error: message, result: { code } };
    }
    const finished = await store.commands.finish(command.id, this.deps.id, outcome);
    log[outcome.status === 'succeeded' ? 'info' : 'warn'](
      {
        event: 'command-finished',
        commandId: command.id,
        kind: command.kind,
        status: outcome.status,
        error: outcome.status === 'failed' ? outcome.error : undefined,
        ms: clock.now() - started,
        recorded: finished,
      },
      finished
        ? `command ${command.kind} ${outcome.status}`
        : `command ${command.kind} ${outcome.status}, but it was moved meanwhile: the outcome is not recorded`,
    );
    return outcome.status;
  }
}
