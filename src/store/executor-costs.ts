import type { Knex } from 'knex';
import type { Clock, IdGenerator } from '../clock.js';

/** One recorded executor run's cost. */
export type ExecutorCost = {
  id: string;
  executor: string;
  runId: string | null;
  seconds: number;
  costUsd: number;
  recordedAt: number;
};

export type ExecutorCostInput = Pick<ExecutorCost, 'executor' | 'seconds' | 'costUsd'> &
  Partial<Pick<ExecutorCost, 'runId'>>;

type Raw = Record<string, unknown>;

function mapCost(row: Raw): ExecutorCost {
  return {
    id: String(row.id),
    executor: String(row.executor),
    runId: row.run_id === null || row.run_id === undefined ? null : String(row.run_id),
    seconds: Number(row.seconds),
    costUsd: Number(row.cost_usd),
    recordedAt: Number(row.recorded_at),
  };
}

function finiteNonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new Error(`executor cost: ${name} must be a finite non-negative number (got ${String(value)})`);
  }
  return value;
}

/**
 * The recorded cost of paid validation executors (e2b bills per second of sandbox time): one row per run,
 * and the cumulative total per executor that the e2b budget gate reads (src/validation/decide.ts).
 */
export class ExecutorCostStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Records one run's cost; refuses negative or non-finite amounts (they would corrupt the total). */
  async record(input: ExecutorCostInput): Promise<ExecutorCost> {
    const cost: ExecutorCost = {
      id: this.ids('xcost'),
      executor: input.executor,
      runId: input.runId ?? null,
      seconds: finiteNonNegative('seconds', input.seconds),
      costUsd: finiteNonNegative('costUsd', input.costUsd),
      recordedAt: this.clock.now(),
    };
    await this.knex('executor_costs').insert({
      id: cost.id,
      executor: cost.executor,
      run_id: cost.runId,
      seconds: cost.seconds,
      cost_usd: cost.costUsd,
      recorded_at: cost.recordedAt,
    });
    return cost;
  }

  /** The cumulative recorded cost of an executor in USD (0 when nothing is recorded). */
  async totalUsd(executor: string): Promise<number> {
    const row = (await this.knex('executor_costs').where({ executor }).sum({ total: 'cost_usd' }).first()) as
      Raw | undefined;
    const total = row?.total;
    return total === null || total === undefined ? 0 : Number(total);
  }

  /** The recorded runs of an executor, newest first. */
  async list(executor: string, limit = 100): Promise<ExecutorCost[]> {
    const rows = (await this.knex('executor_costs')
      .where({ executor })
      .orderBy([
        { column: 'recorded_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)) as Raw[];
    return rows.map(mapCost);
  }
}
