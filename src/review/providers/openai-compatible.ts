import OpenAI from 'openai';
import { OpenRouterFreeGuard } from './openrouter-guard.js';
import { priced } from './prices.js';
import {
  EMPTY_ANSWER_MESSAGE,
  ModelCallError,
  REVIEW_TEMPERATURE,
  missingKeyError,
  missingModelError,
  withDeadline,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type PriceTable,
} from './types.js';

/**
 * `openrouter` and `openai`: `POST {base}/chat/completions` through the official `openai` SDK
 * (NAMES.md "Model providers"). OpenRouter additionally gets the attribution headers and the free-only
 * guard (openrouter-guard.ts) before every call.
 */

export type OpenAICompatibleOptions = {
  name: 'openrouter' | 'openai';
  /** Empty when unset: openrouter's guard then answers "model is required", openai a config error. */
  model: string;
  /** The variable the model came from, for messages (`VERDICT_RUNNER_MODEL` or the shadow one). */
  modelVariable?: string;
  apiKey: string | null;
  /** Named in the error when the key is missing, e.g. `OPENAI_API_KEY (or VERDICT_OPENAI_API_KEY)`. */
  apiKeyVariable: string;
  /**
   * False: calls go without a key (and without an Authorization header) when none is set, for a local
   * OpenAI-compatible server (config `openAiKeyRequired`). Default true: a missing key is a config error.
   */
  keyRequired?: boolean;
  /** Without a trailing slash, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  /** `VERDICT_OPENROUTER_MAX_TOKENS` when set: `max_tokens` (openrouter) / `max_completion_tokens` (openai). */
  maxTokens?: number | null;
  prices: PriceTable;
  /**
   * The repository configuration's `model.reasoningEffort`: OpenAI's `reasoning_effort`, OpenRouter's
   * `reasoning.effort`. Absent: none is sent (the model's default).
   */
  reasoningEffort?: string;
  /** Extra headers on every completion call (OpenRouter's HTTP-Referer, X-Title, metadata header). */
  headers?: Record<string, string>;
  /** The free-only guard (openrouter only; null or absent turns it off). */
  guard?: OpenRouterFreeGuard | null;
  fetch?: typeof fetch;
  now?: () => number;
};

type SdkCompletion = {
  choices?: Array<{ message?: { content?: unknown } | null; finish_reason?: unknown } | null> | null;
  usage?: {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
  } | null;
  error?: { code?: unknown; message?: unknown } | null;
};

/** OpenAI reasoning models accept only the default temperature: none is sent to them. */
const FIXED_TEMPERATURE_MODELS = /^(?:openai\/)?(?:o\d|gpt-5)/i;

/**
 * A 400 that refuses the temperature (a model that accepts only its default): answered by sending the
 * call again without one, once, and remembered for the provider's later calls. Shared with anthropic.ts.
 */
export function refusesTemperature(error: unknown): string | null {
  const status = (error as { status?: unknown } | null)?.status;
  const message = (error as Error | null)?.message ?? '';
  if (status !== 400 && status !== 422) return null;
  return /temperature/i.test(message) ? message : null;
}

/**
 * A 400 that refuses the strict JSON schema (the model or the route has no structured outputs, or a
 * schema feature): answered by asking for a JSON object instead, once.
 */
export function refusesStrictSchema(error: unknown): string | null {
  const status = (error as { status?: unknown } | null)?.status;
  const message = (error as Error | null)?.message ?? '';
  if (status !== 400 && status !== 422) return null;
  return /response_format|json_schema|structured output|strict/i.test(message) ? message : null;
}

/** Maps an SDK or network failure to a ModelCallError (status and retryability kept). */
export function sdkError(provider: 'openrouter' | 'openai' | 'anthropic', error: unknown): ModelCallError {
  if (error instanceof ModelCallError) return error;
  const label = provider === 'anthropic' ? 'messages call' : 'chat completion';
  const reported = (error as { status?: unknown } | null)?.status;
  const status = typeof reported === 'number' ? reported : undefined;
  const message = (error as Error | null)?.message ?? String(error);
  // Retryable as the status says; without one (a network failure), retryable (ModelCallError's default).
  const what = status === undefined ? 'request failed' : `failed with status ${status}`;
  return new ModelCallError('http', `${provider} ${label} ${what}: ${message}`, {
    status,
    provider,
    cause: error,
  });
}

export class OpenAICompatibleProvider implements ModelProvider {
  readonly name: 'openrouter' | 'openai';
  readonly model: string;
  private client: OpenAI | null = null;
  /** Set once the model or route refused a strict schema: later calls ask for a JSON object at once. */
  private strictRefused: string | null = null;
  /** Set once the model refused the temperature: later calls send none. */
  private temperatureRefused = false;

  constructor(private readonly opts: OpenAICompatibleOptions) {
    this.name = opts.name;
    this.model = opts.model;
  }

  get maxTokens(): number | null {
    return this.opts.maxTokens ?? null;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const now = this.opts.now ?? Date.now;
    const startedAt = now();
    const guard = this.opts.guard ?? null;
    if (this.model.trim() === '' && !guard) throw missingModelError(this.name, this.opts.modelVariable);
    return withDeadline(req, this.name, async (signal) => {
      // Order: model required (guard), API key (config), then the catalog check (guard).
      if (guard && this.model.trim() === '') await guard.check(this.model, signal);
      const client = this.sdk();
      if (guard) await guard.check(this.model, signal);
      const body = this.body(req);
      let fallback = body.response_format?.type === 'json_object' ? this.strictRefused! : undefined;
      const send = async () =>
        (await client.chat.completions.create(body, {
          signal,
          // Our own deadline fires first; the SDK's would otherwise default to 10 minutes.
          timeout: Math.max(1, Math.ceil(req.timeoutMs)) + 1000,
          maxRetries: 0,
        })) as unknown as SdkCompletion;
      // A model that refuses the temperature is asked once more without one (remembered).
      const sendTemperate = async () => {
        try {
          return await send();
        } catch (error) {
          if (body.temperature === undefined || refusesTemperature(error) === null) throw error;
          this.temperatureRefused = true;
          delete body.temperature;
          return send();
        }
      };
      let completion: SdkCompletion;
      try {
        completion = await sendTemperate();
      } catch (error) {
        const refusal = body.response_format?.type === 'json_schema' ? refusesStrictSchema(error) : null;
        if (refusal === null) throw sdkError(this.name, error);
        // The model or route refuses strict schemas: once more with a JSON object, remembered.
        this.strictRefused = `strict json_schema refused (${refusal.slice(0, 300)})`;
        fallback = this.strictRefused;
        body.response_format = { type: 'json_object' };
        try {
          completion = await sendTemperate();
        } catch (retryError) {
          throw sdkError(this.name, retryError);
        }
      }
      const response = this.response(completion, now() - startedAt);
      const structuredOutput = body.response_format?.type;
      return {
        ...response,
        ...(structuredOutput ? { structuredOutput } : {}),
        ...(fallback ? { structuredOutputFallback: fallback } : {}),
      };
    });
  }

  /** The completion request: temperature, structured output, reasoning effort and token cap as configured. */
  private body(req: ModelRequest): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages: [
        { role: 'system', content: req.system },
        ...req.messages.map((m) => ({ role: m.role, content: m.content })),
      ],
    };
    if (!FIXED_TEMPERATURE_MODELS.test(this.model) && !this.temperatureRefused) {
      body.temperature = REVIEW_TEMPERATURE;
    }
    if (req.jsonSchema) {
      // Strict structured outputs: the schema is strict-compatible (every property required, optional
      // fields nullable, no additional properties).
      body.response_format = this.strictRefused
        ? { type: 'json_object' }
        : {
            type: 'json_schema',
            json_schema: { name: req.schemaName ?? 'review', schema: req.jsonSchema, strict: true },
          };
    }
    const effort = this.opts.reasoningEffort;
    if (effort) {
      if (this.name === 'openai') body.reasoning_effort = effort as OpenAI.ReasoningEffort;
      else Object.assign(body, { reasoning: { effort } });
    }
    const maxTokens = this.opts.maxTokens ?? null;
    if (maxTokens !== null) {
      // OpenAI's newer models refuse `max_tokens`; OpenRouter documents `max_tokens`.
      if (this.name === 'openai') body.max_completion_tokens = maxTokens;
      else body.max_tokens = maxTokens;
    }
    return body;
  }

  private response(completion: SdkCompletion, durationMs: number): ModelResponse {
    const content = completion?.choices?.[0]?.message?.content;
    const text = typeof content === 'string' ? content : '';
    if (text.trim() === '') {
      // OpenRouter can answer 200 with an error object instead of choices.
      const error = completion?.error;
      if (error && typeof error === 'object') {
        const status = typeof error.code === 'number' ? error.code : undefined;
        throw new ModelCallError(
          'http',
          `${this.name} chat completion failed${status === undefined ? '' : ` with status ${status}`}: ${String(error.message ?? 'unknown error')}`,
          { status, provider: this.name },
        );
      }
      throw new ModelCallError('empty', EMPTY_ANSWER_MESSAGE, { retryable: false, provider: this.name });
    }
    const response = priced(
      this.name,
      this.model,
      text,
      {
        input: completion.usage?.prompt_tokens,
        output: completion.usage?.completion_tokens,
        cached: completion.usage?.prompt_tokens_details?.cached_tokens,
      },
      this.opts.prices,
      durationMs,
    );
    return completion?.choices?.[0]?.finish_reason === 'length' ? { ...response, truncated: true } : response;
  }

  /** The SDK client, built on first use (a missing key is a call-time config error, never a start failure). */
  private sdk(): OpenAI {
    if (this.client) return this.client;
    const keyless = !this.opts.apiKey;
    if (keyless && this.opts.keyRequired !== false)
      throw missingKeyError(this.name, this.opts.apiKeyVariable);
    this.client = new OpenAI({
      // The SDK refuses to start without a key: a keyless client gets a placeholder it never sends (the
      // Authorization header is removed below).
      apiKey: keyless ? 'no-key' : this.opts.apiKey!,
      baseURL: this.opts.baseURL,
      maxRetries: 0,
      defaultHeaders: keyless ? { ...this.opts.headers, Authorization: null } : this.opts.headers,
      ...(this.name === 'openrouter' ? { organization: null, project: null } : {}),
      ...(this.opts.fetch ? { fetch: this.opts.fetch as never } : {}),
    });
    return this.client;
  }
}
