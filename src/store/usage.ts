import type { Knex } from 'knex';

const DAY_MS = 86_400_000;

/**
 * The UTC days a usage report covers (operator-api 4.6): the given `from`/`to` (midnight UTC, inclusive),
 * else the start of the current month through today; a lone `to` before the month start starts there,
 * a lone `from` after today ends there. Answers the instants to pass to `usageReport`.
 */
export function usageWindow(
  now: number,
  given: { from?: number; to?: number },
): { from: number; to: number; toExclusive: number } {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
  const to = given.to ?? Math.max(today, given.from ?? today);
  const from = given.from ?? Math.min(monthStart, to);
  return { from, to, toExclusive: to + DAY_MS };
}

/** Most telemetry rows one usage report reads (operator-api 8). */
export const MAX_USAGE_SOURCE_ROWS = 50_000;

export class UsageTooLargeError extends Error {
  constructor(readonly rows: number) {
    super(
      `The usage report would read ${rows} telemetry rows (at most ${MAX_USAGE_SOURCE_ROWS}); narrow the date range`,
    );
  }
}

/** A token or cost total: null when any contributing call did not report it (unknown, never 0). */
export type UsageTotals = {
  calls: number;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
};

export type UsageLine = UsageTotals & { provider: string | null; model: string | null };

export type UsageSection = UsageTotals & {
  /** Every call reported its tokens and cost, and no analysed run is missing its telemetry. */
  complete: boolean;
  /** How many calls did not report each value. */
  unreported: { inputTokens: number; outputTokens: number; costUsd: number };
  byModel: UsageLine[];
};

export type UsageReport = {
  sourceRows: number;
  model: UsageSection & { runsWithoutTelemetry: number };
  chat: UsageSection;
};

type Group = {
  kind: string;
  provider: string | null;
  model: string | null;
  calls: number;
  inputSum: number;
  inputKnown: number;
  outputSum: number;
  outputKnown: number;
  costSum: number;
  costKnown: number;
};

const roundUsd = (v: number) => Math.round(v * 1e6) / 1e6;

function totals(groups: Group[]): UsageTotals & { unreported: UsageSection['unreported'] } {
  const calls = groups.reduce((s, g) => s + g.calls, 0);
  const sum = (key: 'inputSum' | 'outputSum' | 'costSum') => groups.reduce((s, g) => s + g[key], 0);
  const known = (key: 'inputKnown' | 'outputKnown' | 'costKnown') => groups.reduce((s, g) => s + g[key], 0);
  const unreported = {
    inputTokens: calls - known('inputKnown'),
    outputTokens: calls - known('outputKnown'),
    costUsd: calls - known('costKnown'),
  };
  return {
    calls,
    inputTokens: unreported.inputTokens === 0 ? sum('inputSum') : null,
    outputTokens: unreported.outputTokens === 0 ? sum('outputSum') : null,
    costUsd: unreported.costUsd === 0 ? roundUsd(sum('costSum')) : null,
    unreported,
  };
}

function section(groups: Group[], extraUnknown: number): UsageSection {
  const { unreported, ...all } = totals(groups);
  const complete =
    extraUnknown === 0 &&
    unreported.inputTokens === 0 &&
    unreported.outputTokens === 0 &&
    unreported.costUsd === 0;
  return {
    ...all,
    // Analysed runs without telemetry make the totals unknown: a partial sum would read as a true figure.
    ...(extraUnknown > 0 ? { inputTokens: null, outputTokens: null, costUsd: null } : {}),
    complete,
    unreported,
    byModel: groups
      .map((g) => {
        const { unreported: _u, ...line } = totals([g]);
        return { provider: g.provider, model: g.model, ...line };
      })
      .sort((a, b) => b.calls - a.calls || String(a.model).localeCompare(String(b.model))),
  };
}

/**
 * Model and chat telemetry (spans of kind `model` and `chat`) between two instants, aggregated in SQL on
 * the `(kind, started_at)` index. Throws `UsageTooLargeError` over 50,000 source rows.
 */
export async function usageReport(knex: Knex, fromMs: number, toMsExclusive: number): Promise<UsageReport> {
  const inRange = (q: Knex.QueryBuilder) =>
    q
      .whereIn('kind', ['model', 'chat'])
      .where('started_at', '>=', fromMs)
      .where('started_at', '<', toMsExclusive);
  const countRow = await inRange(knex('spans')).count({ n: '*' }).first();
  const sourceRows = Number(countRow?.n ?? 0);
  if (sourceRows > MAX_USAGE_SOURCE_ROWS) throw new UsageTooLargeError(sourceRows);
  const rows: Array<Record<string, unknown>> = await inRange(knex('spans'))
    .select('kind', 'provider', 'model')
    .count({ calls: '*' })
    .sum({ input_sum: 'input_tokens', output_sum: 'output_tokens', cost_sum: 'cost_usd' })
    .count({ input_known: 'input_tokens', output_known: 'output_tokens', cost_known: 'cost_usd' })
    .groupBy('kind', 'provider', 'model');
  const groups: Group[] = rows.map((r) => ({
    kind: String(r.kind),
    provider: (r.provider as string | null) ?? null,
    model: (r.model as string | null) ?? null,
    calls: Number(r.calls),
    inputSum: Number(r.input_sum ?? 0),
    inputKnown: Number(r.input_known),
    outputSum: Number(r.output_sum ?? 0),
    outputKnown: Number(r.output_known),
    costSum: Number(r.cost_sum ?? 0),
    costKnown: Number(r.cost_known),
  }));
  // Analysed runs of the period whose trace recorded no model call: their spend is unknown.
  const missing = await knex('runs as r')
    .where('r.analysis_status', 'analysed')
    .where('r.updated_at', '>=', fromMs)
    .where('r.updated_at', '<', toMsExclusive)
    .whereNotExists(function () {
      this.select(knex.raw('1'))
        .from('traces as t')
        .join('spans as s', 's.trace_id', 't.id')
        .whereRaw('t.run_id = r.id')
        .where('s.kind', 'model');
    })
    .count({ n: '*' })
    .first();
  const runsWithoutTelemetry = Number(missing?.n ?? 0);
  return {
    sourceRows,
    model: {
      ...section(
        groups.filter((g) => g.kind === 'model'),
        runsWithoutTelemetry,
      ),
      runsWithoutTelemetry,
    },
    chat: section(
      groups.filter((g) => g.kind === 'chat'),
      0,
    ),
  };
}
