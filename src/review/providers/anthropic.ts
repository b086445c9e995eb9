import Anthropic from '@anthropic-ai/sdk';
import { refusesTemperature, sdkError } from './openai-compatible.js';
import { priced, tokenCount } from './prices.js';
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
  type SchemaName,
} from './types.js';

/**
 * `anthropic`: `POST {base}/messages` with the `anthropic-version` header, through the official
 * `@anthropic-ai/sdk`. The configured base URL includes the API version (`https://api.anthropic.com/v1`)
 * while the SDK appends `/v1/messages` to its own base, so a small fetch wrapper maps the SDK's
 * `{base}/v1/...` back to `{base}/...`: requests land on `{base}/messages` for any base.
 */

export type AnthropicOptions = {
  model: string;
  modelVariable?: string;
  apiKey: string | null;
  apiKeyVariable: string;
  /** Without a trailing slash, e.g. `https://api.anthropic.com/v1`. */
  baseURL: string;
  /** `anthropic-version` header. */
  version: string;
  /** `max_tokens` of every call. */
  maxTokens: number;
  prices: PriceTable;
  fetch?: typeof fetch;
  now?: () => number;
};

type SdkMessage = {
  content?: Array<{ type?: unknown; text?: unknown; name?: unknown; input?: unknown }> | null;
  stop_reason?: unknown;
  usage?: {
    input_tokens?: unknown;
    output_tokens?: unknown;
    cache_read_input_tokens?: unknown;
    cache_creation_input_tokens?: unknown;
  } | null;
};

/**
 * The tool an answer is forced through is named after its structured output (NAMES.md): `review` for a
 * review part, `synthesis`, `verification`; its input schema is that output's schema.
 */
export const REVIEW_TOOL = 'review';

/**
 * Anthropic models that refuse a sampling temperature ("`temperature` is deprecated for this model"):
 * Opus 4.7 and later 4.x, and generation 5 and later. They get none; so does every model under API version
 * 2026-10-21 or later, which refuses the parameter altogether. Any other refusal is caught at run time.
 */
const FIXED_TEMPERATURE_MODELS = /claude-(?:opus-4-(?:[7-9]|1\d)|[a-z]+-(?:[5-9]|[1-9]\d))(?![0-9])/i;
const SAMPLING_REMOVED_VERSION = '2026-10-21';

/** Whether calls of this model under this `anthropic-version` may carry the review temperature. */
export function acceptsTemperature(model: string, version: string): boolean {
  return version < SAMPLING_REMOVED_VERSION && !FIXED_TEMPERATURE_MODELS.test(model);
}

const TOOL_DESCRIPTIONS: Record<SchemaName, string> = {
  review: 'Submit the review of the pull request as one object.',
  synthesis: 'Submit the combined review of the parts as one object.',
  verification: 'Submit the verdict on each candidate finding as one object.',
};

/** The forced tool call carries the answer as its input; a plain text answer is read as before. */
function answerText(message: SdkMessage, tool: string): string {
  const blocks = Array.isArray(message?.content) ? message.content : [];
  const used = blocks.find((block) => block?.type === 'tool_use' && block.name === tool);
  if (used && used.input !== undefined) return JSON.stringify(used.input);
  return blocks
    .filter((block) => block?.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('');
}

/** Anthropic's input_tokens leaves out the tokens read from or written to the cache. */
function inputTokens(usage: SdkMessage['usage']): number | undefined {
  if (typeof usage?.input_tokens !== 'number') return undefined;
  const counts = [usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens];
  return counts.reduce<number>((sum, n) => sum + (tokenCount(n) ?? 0), 0);
}

/** A fetch that sends the SDK's `{base}/v1/<path>` to `{base}/<path>`. */
export function versionlessFetch(baseURL: string, custom?: typeof fetch): typeof fetch {
  const sdkPrefix = `${baseURL}/v1/`;
  return ((input: string | URL | Request, init?: RequestInit) => {
    const inner = custom ?? globalThis.fetch;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.startsWith(sdkPrefix)) return inner(`${baseURL}/${url.slice(sdkPrefix.length)}`, init);
    return inner(input, init);
  }) as typeof fetch;
}

export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic' as const;
  readonly model: string;
  private client: Anthropic | null = null;
  /** Set once the model refused the temperature: later calls send none. */
  private temperatureRefused: boolean;

  constructor(private readonly opts: AnthropicOptions) {
    this.model = opts.model;
    this.temperatureRefused = !acceptsTemperature(opts.model, opts.version);
  }

  get maxTokens(): number {
    return this.opts.maxTokens;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const now = this.opts.now ?? Date.now;
    const startedAt = now();
    if (this.model.trim() === '') throw missingModelError(this.name, this.opts.modelVariable);
    return withDeadline(req, this.name, async (signal) => {
      const client = this.sdk();
      const tool = req.schemaName ?? REVIEW_TOOL;
      const create = (temperature: boolean) =>
        client.messages.create(
          {
            model: this.model,
            max_tokens: this.opts.maxTokens,
            // The same low, fixed temperature as the other providers' review calls.
            ...(temperature ? { temperature: REVIEW_TEMPERATURE } : {}),
            // The same system block first in every call, marked for the prompt cache (tools come
            // before it in the cached prefix, so the schema is cached too).
            system: [{ type: 'text', text: req.system, cache_control: { type: 'ephemeral' } }],
            ...(req.jsonSchema
              ? {
                  tools: [
                    {
                      name: tool,
                      description: TOOL_DESCRIPTIONS[tool],
                      input_schema: req.jsonSchema as { type: 'object'; [key: string]: unknown },
                    },
                  ],
                  tool_choice: { type: 'tool' as const, name: tool },
                }
              : {}),
            messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
          },
          { signal, timeout: Math.max(1, Math.ceil(req.timeoutMs)) + 1000, maxRetries: 0 },
        ) as unknown as Promise<SdkMessage>;
      let message: SdkMessage;
      try {
        try {
          message = await create(!this.temperatureRefused);
        } catch (error) {
          // A model that accepts only its default temperature: once more without one, remembered.
          if (this.temperatureRefused || refusesTemperature(error) === null) throw error;
          this.temperatureRefused = true;
          message = await create(false);
        }
      } catch (error) {
        // Our own deadline (withDeadline) reports timeouts; the SDK's timeout is set later than it.
        throw sdkError('anthropic', error);
      }
      const text = answerText(message, tool);
      if (text.trim() === '' || text === '{}') {
        throw new ModelCallError('empty', EMPTY_ANSWER_MESSAGE, { retryable: false, provider: this.name });
      }
      const usage = message.usage;
      const response = priced(
        this.name,
        this.model,
        text,
        {
          input: inputTokens(usage),
          output: usage?.output_tokens,
          cached: usage?.cache_read_input_tokens,
          written: usage?.cache_creation_input_tokens,
        },
        this.opts.prices,
        now() - startedAt,
      );
      return {
        ...response,
        ...(req.jsonSchema ? { structuredOutput: 'tool' } : {}),
        ...(message.stop_reason === 'max_tokens' ? { truncated: true } : {}),
      };
    });
  }

  private sdk(): Anthropic {
    if (this.client) return this.client;
    if (!this.opts.apiKey) throw missingKeyError(this.name, this.opts.apiKeyVariable);
    this.client = new Anthropic({
      apiKey: this.opts.apiKey,
      baseURL: this.opts.baseURL,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-version': this.opts.version },
      fetch: versionlessFetch(this.opts.baseURL, this.opts.fetch) as never,
    });
    return this.client;
  }
}
