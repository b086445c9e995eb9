import type { Clock } from '../clock.js';
import { callTokens, estimateTokens, inputBudget, modelWindow } from './budget.js';
import { reviewOutputJsonSchema } from './output.schema.js';
import { ModelCallError, type ModelMessage, type ModelProvider, type SchemaName } from './providers/index.js';
import { errorText, type RecordSpan } from './stage.js';

/** The strict-compatible review output schema, the same object first in every call (prompt caching). */
export const REVIEW_SCHEMA = reviewOutputJsonSchema() as unknown as Record<string, unknown>;

/** What every model call of a run shares: the clock, the job's signal, the trace and the window override. */
export type ModelCallEnv = {
  clock: Clock;
  signal: AbortSignal;
  span: RecordSpan;
  /** `VERDICT_MODEL_CONTEXT_TOKENS`, over the table of windows (null: the table). */
  contextTokens: number | null;
};

export type ModelCall = {
  provider: ModelProvider;
  /** The model span's name: `model`, `shadow-model`, `synthesis`. */
  spanName: string;
  system: string;
  messages: ModelMessage[];
  timeoutMs: number;
  /** The span's attributes besides those of the call (part, attempt, files...). */
  attributes: Record<string, unknown>;
  jsonSchema?: Record<string, unknown>;
  /** The structured output's name (`review` unless said): `synthesis`, `verification`. */
  schemaName?: SchemaName;
};

export type ModelAnswer =
  { ok: true; text: string; truncated: boolean } | { ok: false; error: string; retryable: boolean };

/** The entries with a value (not absent, null, 0, false or empty). */
function present(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => Boolean(value)));
}

/**
 * One model call as a span of kind `model` with its provider, model, tokens and cost. It never throws
 * for the call's failure (the answer says it, with whether trying again later can help); it throws only
 * when the job's signal aborted.
 */
export async function callModel(env: ModelCallEnv, call: ModelCall): Promise<ModelAnswer> {
  const { provider, spanName, system, messages, timeoutMs, attributes } = call;
  const jsonSchema = call.jsonSchema ?? REVIEW_SCHEMA;
  const startedAt = env.clock.now();
  // No call is sent over the model's window: the budget is checked on what the call really sends.
  const promptTokens = callTokens(provider.name, system, jsonSchema, messages);
  // The messages alone (the request: the pull request, its context and diff), without the system
  // prompt and schema every call repeats.
  const messageTokens = estimateTokens(provider.name, messages.map((m) => m.content).join('\n'));
  const limit = inputBudget(modelWindow(provider.model, env.contextTokens), provider.maxTokens ?? null);
  if (promptTokens > limit) {
    const error = `the prompt is ${promptTokens} tokens, over the input budget of ${limit} tokens of ${provider.model}; not sent`;
    await failedCallSpan(env, provider, spanName, startedAt, {
      ...attributes,
      promptTokens,
      inputBudget: limit,
      error,
      code: 'over_budget',
    });
    return { ok: false, error, retryable: false };
  }
  try {
    const response = await provider.complete({
      system,
      messages,
      jsonSchema,
      schemaName: call.schemaName ?? 'review',
      timeoutMs,
      signal: env.signal,
    });
    const { cachedInputTokens, cacheWriteTokens } = response.usage;
    const { structuredOutput, structuredOutputFallback, truncated } = response;
    const extras = {
      cachedInputTokens,
      cacheWriteTokens,
      structuredOutput,
      structuredOutputFallback,
      truncated,
    };
    await env.span({
      kind: 'model',
      name: spanName,
      status: 'ok',
      provider: response.provider,
      model: response.model,
      inputTokens: response.usage.inputTokens,
      outputTokens: response.usage.outputTokens,
      costUsd: response.costUsd,
      startedAt,
      endedAt: env.clock.now(),
      attributes: { ...attributes, promptTokens, messageTokens, ...present(extras) },
    });
    return { ok: true, text: response.text, truncated: response.truncated === true };
  } catch (error) {
    if (env.signal.aborted) throw error;
    const message = errorText(error);
    const retryable = error instanceof ModelCallError ? error.retryable : true;
    await failedCallSpan(env, provider, spanName, startedAt, {
      ...attributes,
      error: message,
      code: (error as ModelCallError)?.code ?? null,
    });
    return { ok: false, error: message, retryable };
  }
}

/** The model span of a call that failed or was not sent: no usage, no cost. */
async function failedCallSpan(
  env: ModelCallEnv,
  provider: ModelProvider,
  name: string,
  startedAt: number,
  attributes: Record<string, unknown>,
) {
  await env.span({
    kind: 'model',
    name,
    status: 'error',
    provider: provider.name,
    model: provider.model,
    inputTokens: null,
    outputTokens: null,
    costUsd: null,
    startedAt,
    endedAt: env.clock.now(),
    attributes,
  });
}
