import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { BodyTooLargeError, readBody, sendJson } from './router.js';

export const DEFAULT_JSON_LIMIT = 1024 * 1024;

export type JsonResult<T> = { ok: true; value: T } | { ok: false };

/**
 * Reads and validates a JSON request body. On failure it has already answered: 413 `payload_too_large`,
 * 400 `invalid_json`, or 400 `invalid_request` with a message naming the first bad field.
 */
export async function readJsonBody<S extends z.ZodType>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: S,
  limit = DEFAULT_JSON_LIMIT,
): Promise<JsonResult<z.infer<S>>> {
  let raw: Buffer;
  try {
    raw = await readBody(req, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      sendJson(res, 413, { ok: false, error: 'payload_too_large', message: 'Request body is too large' });
      return { ok: false };
    }
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    sendJson(res, 400, { ok: false, error: 'invalid_json', message: 'Request body is not valid JSON' });
    return { ok: false };
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    sendJson(res, 400, { ok: false, error: 'invalid_request', message: describeIssue(result.error) });
    return { ok: false };
  }
  return { ok: true, value: result.data };
}

export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request body';
  const path = issue.path.length > 0 ? issue.path.join('.') : 'body';
  return `Invalid field ${path}: ${issue.message}`;
}
