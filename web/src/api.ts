/**
 * The dashboard's only door to data: `/operator/auth/*` for the session and `/api/*`, the proxy to the
 * operator API (`/api/<rest>` is `/operator/api/<rest>`). Every answer that is not 2xx becomes an
 * `ApiError` carrying the status, the error code and the message of the body; a 401 also tells the app
 * to show the sign-in screen again.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown = null,
  ) {
    super(message);
  }
}

export type Session = { ok: true; login: string; via: string; expiresAt: string | number | null };

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called whenever any call answers 401: the app goes back to the sign-in screen. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function errorFrom(status: number, body: unknown): ApiError {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const code = typeof b.error === 'string' ? b.error : typeof b.code === 'string' ? b.code : `http_${status}`;
  const message =
    typeof b.message === 'string'
      ? b.message
      : typeof b.error === 'string'
        ? b.error
        : typeof body === 'string' && body.length < 300
          ? body
          : `Request failed with status ${status}`;
  return new ApiError(status, code, message, body);
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  opts: { signal?: AbortSignal; quiet401?: boolean } = {},
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network_error', 'The dashboard server could not be reached');
  }
  const data = await readBody(res);
  if (!res.ok) {
    const error = errorFrom(res.status, data);
    if (res.status === 401 && !opts.quiet401) for (const l of unauthorizedListeners) l();
    throw error;
  }
  return data as T;
}

/** A GET of the operator API through the proxy, with query parameters (empty ones left out). */
export function apiGet<T>(
  rest: string,
  query: Record<string, string | number | undefined | null> = {},
  signal?: AbortSignal,
): Promise<T> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return request<T>('GET', `/api/${rest}${qs ? `?${qs}` : ''}`, undefined, { signal });
}

export const apiSend = <T>(method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', rest: string, body: unknown) =>
  request<T>(method, `/api/${rest}`, body);

export const auth = {
  session: () => request<Session>('GET', '/operator/auth/session', undefined, { quiet401: true }),
  token: (token: string) => request<Session>('POST', '/operator/auth/token', { token }, { quiet401: true }),
  logout: () => request<unknown>('POST', '/operator/auth/logout', {}, { quiet401: true }),
};

/**
 * The field or parameter a 400 `invalid_request` names (`Invalid field paths.1: …`, `Invalid parameter
 * repo: …`, operator-api section 7), with the API's message; null for any other failure.
 */
export function invalidField(err: unknown): { path: string; message: string } | null {
  if (!(err instanceof ApiError) || err.status !== 400) return null;
  const named = /^Invalid (?:field|parameter) ([\w.-]+):/.exec(err.message);
  return named ? { path: named[1]!, message: err.message } : null;
}

/** The message to show for a failed call, with the code the proxy or the API gave. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    const hint = ERROR_HINTS[err.code];
    return `${err.message}${hint ? ` ${hint}` : ''} (${err.status || 'no answer'} ${err.code})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** What an operator can do about the proxy codes of operator-api section 7. */
const ERROR_HINTS: Record<string, string> = {
  backend_not_configured: "— set it in the server's environment (or .env) and restart Verdict.",
  admin_backend_not_configured: "— set it in the server's environment (or .env) and restart Verdict.",
  backend_unreachable: '— the operator API did not answer; try again shortly.',
  cross_origin_mutation: '— the request came from another origin.',
  json_required: '— the request was not JSON.',
};
