/**
 * The model providers' shared vocabulary (NAMES.md "Model providers", review-engine 4.6 and 7.3). The
 * review engine only sees `ModelProvider.complete()`; everything provider specific stays in this folder.
 */

/** Exactly four provider values exist (review-engine 4.6); there is no other implementation. */
export const PROVIDER_NAMES = ['openrouter', 'openai', 'anthropic', 'codex'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];
/** Who answered a call: one of the four providers, or the Test Lab's `replay` of recorded answers. */
export type ProviderId = ProviderName | 'replay';

export type ModelMessage = { role: 'user' | 'assistant'; content: string };

export type ModelRequest = {
  system: string;
  messages: ModelMessage[];
  /** JSON schema of the expected answer (structured outputs where the provider supports it). */
  jsonSchema?: Record<string, unknown>;
  /**
   * The name of that structured output (NAMES.md "Verification of findings"): `review` for a review part
   * (the default), `synthesis`, `verification`. OpenAI-compatible requests send it as
   * `response_format.json_schema.name`, Anthropic as the name of the tool the answer is forced through.
   */
  schemaName?: SchemaName;
  timeoutMs: number;
  signal?: AbortSignal;
};

/** The structured outputs a review asks for, by name. */
export const SCHEMA_NAMES = ['review', 'synthesis', 'verification'] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

export type ModelUsage = {
  /** Every input token of the call, cached ones included. */
  inputTokens: number | null;
  outputTokens: number | null;
  /** Input tokens read from the provider's prompt cache (OpenAI `cached_tokens`, Anthropic cache reads). */
  cachedInputTokens?: number | null;
  /** Input tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`). */
  cacheWriteTokens?: number | null;
};

/** The fixed, low temperature of every review call (omitted for models that accept no other value). */
export const REVIEW_TEMPERATURE = 0.1;

export type ModelResponse = {
  /** The raw answer text (the engine parses it). */
  text: string;
  usage: ModelUsage;
  /** Null when the rate or the usage is unknown, never 0 for unknown. */
  costUsd: number | null;
  provider: ProviderId;
  model: string;
  durationMs: number;
  /** The answer was cut at the output token limit (`finish_reason: length`, `stop_reason: max_tokens`). */
  truncated?: boolean;
  /** How structured output was asked for: `json_schema` (strict), `json_object`, `tool`, `output_schema`. */
  structuredOutput?: string;
  /** Why a strict schema was given up for this call (the model or route refused it). */
  structuredOutputFallback?: string;
};

export interface ModelProvider {
  readonly name: ProviderId;
  readonly model: string;
  /** The output cap its calls send (`max_tokens`), or null when none is sent. */
  readonly maxTokens?: number | null;
  complete(req: ModelRequest): Promise<ModelResponse>;
}

export type ProviderSelection = {
  primary: ModelProvider;
  /** Only when `VERDICT_RUNNER_SHADOW_MODEL` is set. */
  shadow: ModelProvider | null;
  /** The verification calls' model (`VERDICT_VERIFIER_MODEL`); absent or null: the primary answers them. */
  verifier?: ModelProvider | null;
  shadowTimeoutMs?: never;
};

/** USD per million tokens; `cachedInput` for input read from the prompt cache, when the provider discounts it. */
export type PriceRate = { input: number; output: number; cachedInput?: number };
/** Keyed `provider/model` or a bare `model` (see prices.ts for the lookup order). */
export type PriceTable = Record<string, PriceRate>;

export type ModelCallErrorCode = 'timeout' | 'guard' | 'http' | 'empty' | 'unavailable' | 'config';

/**
 * Why a model call failed. `retryable` tells the job queue whether another attempt later can succeed
 * (timeouts, 408/409/429/5xx, network errors); configuration and guard failures never can.
 */
export class ModelCallError extends Error {
  readonly code: ModelCallErrorCode;
  readonly status?: number;
  readonly retryable: boolean;
  readonly provider?: ProviderName;

  constructor(
    code: ModelCallErrorCode,
    message: string,
    opts: { status?: number; retryable?: boolean; provider?: ProviderName; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ModelCallError';
    this.code = code;
    if (opts.status !== undefined) this.status = opts.status;
    this.retryable =
      opts.retryable ?? (code === 'timeout' || (code === 'http' && retryableStatus(opts.status)));
    if (opts.provider !== undefined) this.provider = opts.provider;
  }
}

/** 408, 409, 429 and 5xx are worth another attempt; so is a request that never got a status (network). */
export function retryableStatus(status: number | undefined): boolean {
  if (status === undefined) return true;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** A call without a model: a config error (the variable is the runner's or the shadow's model variable). */
export function missingModelError(provider: ProviderName, variable = 'VERDICT_RUNNER_MODEL'): ModelCallError {
  return new ModelCallError('config', `${variable} is required for provider ${provider}`, { provider });
}

/** A call without an API key: a config error at call time, never a start-up failure. */
export function missingKeyError(provider: ProviderName, variable: string): ModelCallError {
  return new ModelCallError('config', `${variable} is not set; provider ${provider} needs an API key`, {
    provider,
  });
}

export const EMPTY_ANSWER_MESSAGE = 'model call succeeded but returned no review text';

export function timeoutMessage(timeoutMs: number): string {
  return `chat completion timeout after ${timeoutMs} ms`;
}

/**
 * Runs `run` bounded by `req.timeoutMs` and `req.signal`. The signal handed to `run` aborts on either; the
 * returned promise rejects at once then (a timeout with the exact spec message, retryable), whatever `run`
 * does afterwards. An abort by the caller's signal is reported as code `timeout` too (retryable: the job
 * was cancelled, not refused), with the message `chat completion aborted`.
 */
export function withDeadline<T>(
  req: Pick<ModelRequest, 'timeoutMs' | 'signal'>,
  provider: ProviderName,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const controller = new AbortController();
    let stopped = false;
    const stop = (error: ModelCallError) => {
      if (stopped) return;
      stopped = true;
      controller.abort(error);
      reject(error);
    };
    const onSignal = () =>
      stop(new ModelCallError('timeout', 'chat completion aborted', { retryable: true, provider }));
    if (req.signal?.aborted) {
      onSignal();
      return;
    }
    const timer = setTimeout(
      () => stop(new ModelCallError('timeout', timeoutMessage(req.timeoutMs), { retryable: true, provider })),
      Math.max(0, req.timeoutMs),
    );
    req.signal?.addEventListener('abort', onSignal, { once: true });
    let settled: Promise<T>;
    try {
      settled = run(controller.signal);
    } catch (error) {
      settled = Promise.reject(error);
    }
    settled
      .then(
        (value) => {
          if (!stopped) resolve(value);
        },
        (error: unknown) => {
          if (!stopped) reject(error);
        },
      )
      .finally(() => {
        stopped = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onSignal);
      });
  });
}
