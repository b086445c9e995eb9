import { z } from 'zod';
import { PROVIDER_NAMES, type PriceTable } from '../review/providers/types.js';

// --- Schemas of the values: each reads a non-blank string; `describe` names the accepted values. -------

/** A value as written. */
export const text = z.string();
/** A value without surrounding whitespace. */
export const trimmed = z.string().trim();

export function integer(min: number, max: number) {
  const range = (iss: { input?: unknown }) =>
    `must be an integer from ${min} to ${max} (got "${String(iss.input)}")`;
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, { error: (iss) => `must be an integer (got "${String(iss.input)}")` })
    .transform(Number)
    .pipe(z.int({ error: range }).min(min, { error: range }).max(max, { error: range }))
    .describe(`integer from ${min} to ${max}`);
}

/**
 * The one boolean rule of the configuration: `1` or `true` is on, `0` or `false` is off (any case); unset
 * or blank is the variable's default; anything else stops start-up naming the variable.
 */
export const flag = z
  .string()
  .trim()
  .pipe(z.stringbool({ truthy: ['1', 'true'], falsy: ['0', 'false'], error: 'must be 0, 1, true or false' }))
  .describe('flag: 1 or true, 0 or false');

/** `VERDICT_OPENROUTER_REQUIRE_FREE`'s own rule: it fails closed, only exactly `0` turns it off. */
export const onUnlessZero = z
  .string()
  .transform((value) => value !== '0')
  .describe('0 turns it off, any other value keeps it on');

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z
    .string()
    .trim()
    .pipe(
      z.enum(values, { error: (iss) => `must be one of ${values.join(', ')} (got "${String(iss.input)}")` }),
    )
    .describe(`one of ${values.join(', ')}`);
}

/** The spec's neutral provider words, named in the error to point at the real value. */
export const SPEC_PROVIDER_WORDS: Record<string, string> = {
  gateway: 'openrouter',
  direct_a: 'openai',
  direct_b: 'anthropic',
  cli: 'codex',
};

/** A model provider (case-insensitive); the spec's neutral word gets a hint at the real value. */
export const provider = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(
    z.enum(PROVIDER_NAMES, {
      error: (iss) => {
        const hint = SPEC_PROVIDER_WORDS[String(iss.input)];
        return `must be one of ${PROVIDER_NAMES.join(', ')} (got "${String(iss.input)}"${hint ? `; use "${hint}"` : ''})`;
      },
    }),
  )
  .describe(`one of ${PROVIDER_NAMES.join(', ')}`);

export const httpUrl = z
  .string()
  .trim()
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), 'must be an http:// or https:// URL')
  .describe('http(s) URL');

/** An http(s) URL without its trailing slashes. */
export const baseUrl = httpUrl.transform((value) => value.replace(/\/+$/, '')).describe('http(s) URL');

/** An http(s) URL ending in exactly one slash (a registry's prefix: `https://r.example/npm/`). */
export const registryUrl = httpUrl
  .transform((value) => `${value.replace(/\/+$/, '')}/`)
  .describe('http(s) URL');

/** A comma-separated list; blank items are dropped. */
export function list<T extends z.ZodType<string, string>>(item: T) {
  return z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    )
    .pipe(z.array(item))
    .describe('comma-separated list');
}

export const DEFAULT_BOT_HANDLES = ['verdict', 'reviewbot'];
/** Comment handles: a leading `@` dropped, lower case; only blank items (`,`) mean the default. */
export const handles = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((h) => h.trim().replace(/^@/, '').toLowerCase())
      .filter((h) => h.length > 0),
  )
  .pipe(
    z.array(
      z.string().regex(/^[a-z0-9][a-z0-9-]*(\[bot\])?$/, {
        error: (iss) => `has an invalid handle "${String(iss.input)}"`,
      }),
    ),
  )
  .transform((items) => (items.length > 0 ? items : DEFAULT_BOT_HANDLES))
  .describe('comma-separated list');

/** A price in USD per million tokens; messages name the entry (the first element of the issue's path). */
function usd(field: string) {
  const error = (iss: { input?: unknown; path?: PropertyKey[] }) =>
    field === 'cachedInput'
      ? `entry "${String(iss.path?.[0])}" has "cachedInput" that is not a finite, non-negative number of USD per million tokens`
      : `entry "${String(iss.path?.[0])}" needs "${field}" as a finite, non-negative number of USD per million tokens (got ${JSON.stringify(iss.input) ?? 'nothing'})`;
  return z.number({ error }).min(0, { error });
}

/** `VERDICT_MODEL_PRICES`: `{ "<provider>/<model>" | "<model>": { input, output, cachedInput? } }`. */
export const priceOverrides: z.ZodType<PriceTable, string> = z
  .string()
  .transform((raw, ctx) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch (error) {
      ctx.issues.push({
        code: 'custom',
        input: raw,
        message: `must be a JSON object like {"openai/gpt-4o":{"input":2.5,"output":10}} (${(error as Error).message})`,
      });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .record(
        z.string(),
        z.object(
          { input: usd('input'), output: usd('output'), cachedInput: usd('cachedInput').optional() },
          { error: (iss) => `entry "${String(iss.path?.[0])}" must be an object {"input": n, "output": n}` },
        ),
        { error: 'must be a JSON object of {"<provider>/<model>": {"input": n, "output": n}}' },
      )
      .refine((table) => Object.keys(table).every((key) => key.trim() !== ''), 'has an empty model key'),
  )
  .describe('JSON object');

/** A non-negative amount of US dollars, written as digits with an optional fraction (`50`, `12.5`). */
export const dollars = z
  .string()
  .trim()
  .regex(/^\d{1,12}(\.\d{1,6})?$/, {
    error: (iss) => `must be a non-negative number of USD like 50 or 12.5 (got "${String(iss.input)}")`,
  })
  .transform(Number)
  .describe('non-negative number of USD');

/** A positive rate in US dollars, with up to 12 fraction digits (`0.00003025`). */
export const rateDollars = z
  .string()
  .trim()
  .regex(/^\d{1,6}(\.\d{1,12})?$/, {
    error: (iss) => `must be a non-negative number of USD like 0.00003025 (got "${String(iss.input)}")`,
  })
  .transform(Number)
  .refine((n) => n > 0, { error: 'must be above 0' })
  .describe('positive number of USD');

/** An S3 key prefix: surrounding slashes dropped (the storage adds the one separator). */
export const keyPrefix = trimmed
  .transform((value) => value.replace(/^\/+|\/+$/g, ''))
  .describe('key prefix, like verdict/evidence');

// --- The catalogue entry ------------------------------------------------------------------------------

export type Variable<S extends z.ZodType = z.ZodType, D extends string | undefined = string | undefined> = {
  /** One line of documentation (`.env.example`, docs/configuration.md). */
  readonly doc: string;
  /** Parses the non-blank value (or the default). */
  readonly schema: S;
  /** The value an unset or blank variable takes, parsed like a set one; none when the default is computed. */
  readonly default: D;
};

export function v<S extends z.ZodType<unknown, string>, const D extends string | undefined = undefined>(
  doc: string,
  schema: S,
  defaultValue?: D,
): Variable<S, D> {
  return { doc, schema, default: defaultValue as D };
}
