import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import { authorize, type AccessRule, type Principal, type ServiceTokens } from '../http/auth.js';
import { readJsonValue } from '../http/json.js';
import { parseLimit } from '../http/query.js';
import { sendJson, sendJsonText, type Params, type Router } from '../http/router.js';
import type { Store } from '../store/index.js';
import type { ReadCache, StampedCache } from './read-cache.js';
import { plainText } from '../http/text.js';

/**
 * One operator service, written once and served twice: by its REST route and by the tRPC facade. It names
 * the access rule (token classes and API-key scope), the input schema, and what it does. Everything a
 * route checks lives here, so the two transports cannot disagree.
 */
export type Operation<S extends z.ZodType = z.ZodType, O = unknown> = {
  rule: AccessRule;
  type: 'query' | 'mutation';
  input: S;
  run(ctx: OperationContext, input: z.output<S>): Promise<O>;
  /**
   * The output already serialized as a JSON object (what `run` resolves with, as text): REST sends it
   * without parsing or serializing again. For reads served from a serialized cache.
   */
  runSerialized?: (ctx: OperationContext, input: z.output<S>) => Promise<string>;
  /** REST status of a success (default 200). */
  status?: (output: O) => number;
  /** REST wording of an input error (default `Invalid parameter|field <path>: <message>`). */
  describe?: (error: z.ZodError) => string;
};

export function defineOperation<S extends z.ZodType, O>(op: Operation<S, O>): Operation<S, O> {
  return op;
}

/** What every operation can use. */
export type OperatorDeps = {
  store: Store;
  tokens: ServiceTokens;
  log: Logger;
  now: () => number;
  newId: (prefix: string) => string;
  publicUrl: string | null;
  /** Short-lived cache of the snapshot reads. */
  cache: ReadCache;
  /** Stamp-validated cache of PR-detail reads. */
  prCache: StampedCache;
};

export type OperationContext = OperatorDeps & {
  principal: Principal;
  /** The `Idempotency-Key` request header: null when absent, `invalid` when malformed. */
  idempotencyKey: string | null | 'invalid';
  /** `proto://host` of the request, for URLs handed back to the caller. */
  origin: string;
};

/** A refusal with the HTTP status and `error` code the spec names; extra fields join the body. */
export class OperatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'OperatorError';
  }
}

export const notFound = (message: string) => new OperatorError(404, 'not_found', message);
export const badRequest = (message: string) => new OperatorError(400, 'invalid_request', message);

export const REPO_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;
export const ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** A bounded string without control characters. */
export const text = (max: number) => plainText(max);

/** A search or filter parameter: at most 300 characters (operator-api 8). */
export const searchParam = z.string().max(300, 'at most 300 characters');

/** List `limit`: default 50, clamped to 1..100; a non-integer falls back to 50 (operator-api 4.1). */
export const limitParam = z
  .union([z.number(), z.string()])
  .optional()
  .transform((v) => parseLimit(v === undefined ? null : String(v)));

/** A positive integer given as a number (tRPC) or digits (query string). */
export const positiveIntParam = z.union([
  z.number().int().min(1).max(2_147_483_647),
  z
    .string()
    .regex(/^[1-9]\d{0,9}$/, 'must be a positive integer')
    .transform(Number)
    .pipe(z.number().max(2_147_483_647)),
]);

/** The request's `Idempotency-Key`: null when absent, `invalid` when malformed. */
export function idempotencyKeyOf(req: IncomingMessage): string | null | 'invalid' {
  const raw = req.headers['idempotency-key'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return null;
  return ID_PATTERN.test(value) ? value : 'invalid';
}

export function originOf(req: IncomingMessage): string {
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() || 'http';
  return `${proto}://${req.headers.host ?? 'localhost'}`;
}

export function describeInput(error: z.ZodError, noun: 'parameter' | 'field', strip?: string): string {
  const issue = error.issues[0];
  if (!issue) return `Invalid ${noun}`;
  let path = issue.path.map(String);
  if (strip !== undefined && path[0] === strip) path = path.slice(1);
  if (issue.code === 'unrecognized_keys' && issue.keys[0]) path = [...path, issue.keys[0]];
  const name = path.length > 0 ? path.join('.') : 'body';
  return `Invalid ${noun} ${name}: ${issue.message}`;
}

export type RestInput =
  /** Query parameters (first value of each) and path parameters, as one object. */
  | { from: 'query' }
  /** The JSON body as the input (no path parameters). */
  | { from: 'body'; limit: number }
  /** `{...pathParams, body}`; a body that is empty reads as `{}`. */
  | { from: 'params+body'; limit: number }
  /** Path parameters only; any body is drained unread. */
  | { from: 'params' };

/**
 * Serves an operation as a REST route: authenticate by its rule, build its input from the request,
 * validate (400 `invalid_request` / `invalid_json`, 413 `payload_too_large`), run, and answer
 * `{ok: true, ...output}`, or `{ok: false, error, message, ...extra}` with the operation's status.
 */
export function restOperation<S extends z.ZodType, O>(
  router: Router,
  method: string,
  path: string,
  op: Operation<S, O>,
  deps: OperatorDeps,
  source: RestInput,
): void {
  const auth = { tokens: deps.tokens, apiKeys: deps.store.apiKeys };
  const meta = { input: op.input, source: source.from };
  router.add(
    method,
    path,
    async (req, res, params, url) => {
      const access = await authorize(req, auth, op.rule);
      if (!access.ok) {
        req.resume();
        const headers: Record<string, string> =
          access.refusal.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
        return sendJson(res, access.refusal.status, access.refusal.body, headers);
      }
      try {
        const idempotencyKey = idempotencyKeyOf(req);
        const raw = await restInput(req, params, url, source);
        const parsed = op.input.safeParse(raw);
        if (!parsed.success) {
          const message = op.describe
            ? op.describe(parsed.error)
            : describeInput(parsed.error, source.from === 'query' ? 'parameter' : 'field', 'body');
          return sendJson(res, 400, { ok: false, error: 'invalid_request', message });
        }
        const ctx: OperationContext = {
          ...deps,
          principal: access.principal,
          idempotencyKey,
          origin: originOf(req),
        };
        if (op.runSerialized && !op.status) {
          const json = await op.runSerialized(ctx, parsed.data);
          return sendJsonText(res, 200, json === '{}' ? '{"ok":true}' : `{"ok":true,${json.slice(1)}`);
        }
        const output = await op.run(ctx, parsed.data);
        sendJson(res, op.status?.(output) ?? 200, { ok: true, ...(output as object) });
      } catch (error) {
        if (!(error instanceof OperatorError)) throw error;
        req.resume();
        sendJson(res, error.status, { ok: false, error: error.code, message: error.message, ...error.extra });
      }
    },
    meta,
  );
}

async function restInput(
  req: IncomingMessage,
  params: Params,
  url: URL,
  source: RestInput,
): Promise<unknown> {
  if (source.from === 'query' || source.from === 'params') {
    req.resume();
    if (source.from === 'params') return { ...params };
    const query: Record<string, string> = {};
    for (const [key, value] of url.searchParams) if (!(key in query)) query[key] = value;
    return { ...query, ...params };
  }
  const read = await readJsonValue(req, source.limit);
  if (!read.ok) throw new OperatorError(read.status, read.error, read.message);
  const body = read.value;
  return source.from === 'body' ? body : { ...params, body };
}
