import type { z } from 'zod';
import { INTERNAL_HOST_HEADER, INTERNAL_TOKEN_HEADER, type InternalHost } from '../protocol.js';

/** A refused or failed call to an internal host: its status (0: no answer) and error code when it sent one. */
export class InternalCallError extends Error {
  constructor(
    readonly host: InternalHost,
    readonly path: string,
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'InternalCallError';
  }
}

export type InternalClient = <S extends z.ZodTypeAny>(
  host: InternalHost,
  path: string,
  body: unknown,
  schema: S,
  signal?: AbortSignal,
) => Promise<z.infer<S>>;

/**
 * Calls the internal hosts of the outer worker (`state.internal`, `broker.internal`): `http://<host>/...`
 * on Cloudflare, where the container's outbound requests are intercepted, or `origin` (local runs,
 * `VERDICT_INTERNAL_ORIGIN`) with the host named in `x-verdict-internal-host` and the local-run token
 * (`VERDICT_INTERNAL_TOKEN`) in `x-verdict-internal-token`. Every answer is parsed with its protocol schema.
 */
export function internalClient(
  origin: string | null,
  token: string | null = null,
  fetchImpl: typeof fetch = fetch,
): InternalClient {
  return async (host, path, body, schema, signal) => {
    const url = origin ? new URL(path, origin).toString() : `http://${host}${path}`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (origin) headers[INTERNAL_HOST_HEADER] = host;
    if (origin && token) headers[INTERNAL_TOKEN_HEADER] = token;
    let response: Response;
    try {
      response = await fetchImpl(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
    } catch (error) {
      throw new InternalCallError(
        host,
        path,
        0,
        null,
        `${host}${path} unreachable: ${(error as Error).message}`,
      );
    }
    const text = await response.text();
    let json: unknown = null;
    try {
      json = text === '' ? null : JSON.parse(text);
    } catch {
      json = null;
    }
    if (!response.ok) {
      const error = (json as { error?: { code?: unknown; message?: unknown } | string } | null)?.error;
      const code = typeof error === 'string' ? error : typeof error?.code === 'string' ? error.code : null;
      throw new InternalCallError(
        host,
        path,
        response.status,
        code,
        `${host}${path} answered ${response.status}${code ? ` ${code}` : ''}`,
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new InternalCallError(
        host,
        path,
        response.status,
        'invalid_answer',
        `${host}${path}: ${parsed.error.message}`,
      );
    }
    return parsed.data;
  };
}
