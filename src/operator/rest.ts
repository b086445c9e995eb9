import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { authorize, sendRefusal, type Principal, type ServiceTokens } from '../http/auth.js';
import { NUL_BYTE_MESSAGE, nulBytePath, readJsonValue } from '../http/json.js';
import type { AuthThrottle } from '../http/throttle.js';
import { forwardedProto, sendJson, sendJsonText, type Params, type Router } from '../http/router.js';
import {
  describeInput,
  ID_PATTERN,
  OperatorError,
  type Operation,
  type OperationContext,
  type ServiceDeps,
} from '../services/operation.js';

/** What the network faces (REST, tRPC) serve the services with: the services and the static tokens. */
export type OperatorDeps = ServiceDeps & {
  tokens: ServiceTokens;
  /** Failed authentications per client address (429 past the limit); absent: none counted. */
  throttle?: AuthThrottle | null;
};

/**
 * The context an operation runs in for a network request: its `Idempotency-Key` (null when absent,
 * `invalid` when malformed) and its origin `proto://host`.
 */
export function requestContext(
  deps: OperatorDeps,
  principal: Principal,
  req: IncomingMessage,
): OperationContext {
  const raw = req.headers['idempotency-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  return {
    ...deps,
    principal,
    idempotencyKey: key === undefined ? null : ID_PATTERN.test(key) ? key : 'invalid',
    origin: `${forwardedProto(req) ?? 'http'}://${req.headers.host ?? 'localhost'}`,
  };
}

/** Where an operation's input comes from. */
export type RestSource =
  /** Query parameters (first value of each) and path parameters, as one object. */
  | { from: 'query' }
  /** The JSON body as the input (no path parameters). */
  | { from: 'body'; limit: number }
  /** `{...pathParams, body}`; a body that is empty reads as `{}`. */
  | { from: 'params+body'; limit: number }
  /** Path parameters only; any body is drained unread. */
  | { from: 'params' };

export type RestInput = RestSource & {
  /** The wording of an input error (default `Invalid parameter|field <path>: <message>`). */
  describe?: (error: z.ZodError) => string;
};

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
  /** Where the input comes from; the status of a success (default 200). */
  source: RestInput & { status?: (output: O) => number },
): void {
  const auth = { tokens: deps.tokens, apiKeys: deps.store.apiKeys, throttle: deps.throttle };
  const meta = { input: op.input, source: source.from };
  router.add(
    method,
    path,
    async (req, res, params, url) => {
      const access = await authorize(req, auth, op.rule);
      if (!access.ok) {
        req.resume();
        return sendRefusal(res, access.refusal);
      }
      try {
        const raw = await restInput(req, params, url, source);
        const nul = nulBytePath(raw);
        if (nul !== null) {
          const what = source.from === 'query' || source.from === 'params' ? 'parameter' : 'field';
          const message = `Invalid ${what} ${nul}: ${NUL_BYTE_MESSAGE}`;
          return sendJson(res, 400, { ok: false, error: 'invalid_request', message });
        }
        const parsed = op.input.safeParse(raw);
        if (!parsed.success) {
          const message = source.describe
            ? source.describe(parsed.error)
            : describeInput(parsed.error, source.from === 'query' ? 'parameter' : 'field', 'body');
          return sendJson(res, 400, { ok: false, error: 'invalid_request', message });
        }
        const ctx = requestContext(deps, access.principal, req);
        if (op.runSerialized && !source.status) {
          const json = await op.runSerialized(ctx, parsed.data);
          return sendJsonText(res, 200, json === '{}' ? '{"ok":true}' : `{"ok":true,${json.slice(1)}`);
        }
        const output = await op.run(ctx, parsed.data);
        sendJson(res, source.status?.(output) ?? 200, { ok: true, ...(output as object) });
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
  source: RestSource,
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
