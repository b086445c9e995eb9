import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { numberOrNull, parseJson } from './db.js';

export const TRACE_STATUSES = ['running', 'ok', 'error'] as const;
export type TraceStatus = (typeof TRACE_STATUSES)[number];
export const SPAN_KINDS = ['stage', 'model', 'chat', 'tool', 'publish'] as const;
export type SpanKind = (typeof SPAN_KINDS)[number];

/** Trace summary (operator-api 2.6): identity, timing, status, attributes; no cost or token totals, no span count. */
export type TraceSummary = {
  traceId: string;
  runId: string | null;
  reviewKey: string | null;
  repo: string | null;
  prNumber: number | null;
  name: string;
  status: TraceStatus;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
  attributes: Record<string, unknown>;
};

export type SpanRecord = {
  spanId: string;
  parentSpanId: string | null;
  kind: SpanKind;
  name: string;
  status: string;
  provider: string | null;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
  attributes: Record<string, unknown>;
};

export type NewTrace = {
  id: string;
  runId?: string | null;
  reviewKey?: string | null;
  repo?: string | null;
  prNumber?: number | null;
  name: string;
  attributes?: Record<string, unknown>;
  startedAt?: number;
};

export type NewSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string | null;
  kind: SpanKind;
  name: string;
  status: 'ok' | 'error';
  provider?: string | null;
  model?: string | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  costUsd?: number | null;
  startedAt: number;
  endedAt?: number | null;
  attributes?: Record<string, unknown>;
};

export type TraceFilter = {
  repo?: string;
  prNumber?: number;
  reviewKey?: string;
  runId?: string;
  status?: TraceStatus;
  limit: number;
};

/** Attribute keys that could carry model input or output: never stored (operator-api 2.6). */
const BODY_KEYS = new Set([
  'input',
  'output',
  'prompt',
  'response',
  'body',
  'messages',
  'completion',
  'content',
]);

function safeAttributes(attributes: Record<string, unknown> | undefined): string | null {
  if (!attributes) return null;
  const kept = Object.fromEntries(
    Object.entries(attributes).filter(([k]) => !BODY_KEYS.has(k.toLowerCase())),
  );
  return Object.keys(kept).length === 0 ? null : JSON.stringify(kept);
}

/** The timing and attributes a trace and a span share. */
function timed(
  r: Record<string, unknown>,
): Pick<SpanRecord, 'startedAt' | 'endedAt' | 'durationMs' | 'attributes'> {
  const started = Number(r.started_at);
  const ended = numberOrNull(r.ended_at);
  return {
    startedAt: new Date(started).toISOString(),
    endedAt: ended === null ? null : new Date(ended).toISOString(),
    durationMs: ended === null ? null : Math.max(0, ended - started),
    attributes: parseJson(r.attributes, {}),
  };
}

function mapTrace(r: Record<string, unknown>): TraceSummary {
  return {
    traceId: String(r.id),
    runId: (r.run_id as string | null) ?? null,
    reviewKey: (r.review_key as string | null) ?? null,
    repo: (r.repo as string | null) ?? null,
    prNumber: numberOrNull(r.pr_number),
    name: String(r.name),
    status: r.status as TraceStatus,
    ...timed(r),
  };
}

function mapSpan(r: Record<string, unknown>): SpanRecord {
  return {
    spanId: String(r.span_id),
    parentSpanId: (r.parent_span_id as string | null) ?? null,
    kind: r.kind as SpanKind,
    name: String(r.name),
    status: String(r.status),
    provider: (r.provider as string | null) ?? null,
    model: (r.model as string | null) ?? null,
    inputTokens: numberOrNull(r.input_tokens),
    outputTokens: numberOrNull(r.output_tokens),
    costUsd: numberOrNull(r.cost_usd),
    ...timed(r),
  };
}

/** Traces of review runs and their spans. */
export class TraceStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  async start(trace: NewTrace): Promise<void> {
    await this.knex('traces').insert({
      id: trace.id,
      run_id: trace.runId ?? null,
      review_key: trace.reviewKey ?? null,
      repo: trace.repo ?? null,
      pr_number: trace.prNumber ?? null,
      name: trace.name,
      status: 'running',
      started_at: trace.startedAt ?? this.clock.now(),
      ended_at: null,
      attributes: safeAttributes(trace.attributes),
    });
  }

  /** Ends a running trace; an ended trace is left as it is (returns false). */
  async finish(id: string, status: 'ok' | 'error', attributes?: Record<string, unknown>): Promise<boolean> {
    const values: Record<string, unknown> = { status, ended_at: this.clock.now() };
    if (attributes) values.attributes = safeAttributes(attributes);
    const n = await this.knex('traces').where({ id, status: 'running' }).update(values);
    return n > 0;
  }

  /**
   * Ends the traces of a run that are still `running` from an earlier attempt (its worker was killed
   * mid-run and the run was taken over), as errors marked `abandoned`. Returns how many were ended.
   */
  async abandonRunning(runId: string, exceptId: string): Promise<number> {
    const rows: Array<{ id: string; attributes: unknown }> = await this.knex('traces')
      .where({ run_id: runId, status: 'running' })
      .whereNot('id', exceptId)
      .select('id', 'attributes');
    let ended = 0;
    for (const row of rows) {
      const attributes = {
        ...parseJson<Record<string, unknown>>(row.attributes, {}),
        outcome: 'abandoned',
        error: 'abandoned: the worker running this attempt stopped, and the run was taken over',
      };
      const n = await this.knex('traces')
        .where({ id: row.id, status: 'running' })
        .update({ status: 'error', ended_at: this.clock.now(), attributes: safeAttributes(attributes) });
      ended += n;
    }
    return ended;
  }

  async addSpan(span: NewSpan): Promise<void> {
    await this.knex('spans').insert({
      trace_id: span.traceId,
      span_id: span.spanId,
      parent_span_id: span.parentSpanId ?? null,
      kind: span.kind,
      name: span.name,
      status: span.status,
      provider: span.provider ?? null,
      model: span.model ?? null,
      input_tokens: span.inputTokens ?? null,
      output_tokens: span.outputTokens ?? null,
      cost_usd: span.costUsd ?? null,
      started_at: span.startedAt,
      ended_at: span.endedAt ?? this.clock.now(),
      attributes: safeAttributes(span.attributes),
    });
  }

  /** Trace summaries, newest first, filtered on indexed columns. */
  async list(filter: TraceFilter): Promise<TraceSummary[]> {
    let query = this.knex('traces')
      .select(
        'id',
        'run_id',
        'review_key',
        'repo',
        'pr_number',
        'name',
        'status',
        'started_at',
        'ended_at',
        'attributes',
      )
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit);
    if (filter.repo !== undefined) query = query.where('repo', filter.repo);
    if (filter.prNumber !== undefined) query = query.where('pr_number', filter.prNumber);
    if (filter.reviewKey !== undefined) query = query.where('review_key', filter.reviewKey);
    if (filter.runId !== undefined) query = query.where('run_id', filter.runId);
    if (filter.status !== undefined) query = query.where('status', filter.status);
    return (await query).map(mapTrace);
  }

  /** One trace with its spans in the order they were recorded, or null. */
  async get(id: string): Promise<{ trace: TraceSummary; spans: SpanRecord[] } | null> {
    const row = await this.knex('traces').where({ id }).first();
    if (!row) return null;
    const spans = await this.knex('spans').where({ trace_id: id }).orderBy('seq');
    return { trace: mapTrace(row), spans: spans.map(mapSpan) };
  }
}
