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
  if (nestedDeeperThan(parsed)) {
    sendJson(res, 400, { ok: false, error: 'invalid_request', message: TOO_DEEP_MESSAGE });
    return { ok: false };
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    sendJson(res, 400, { ok: false, error: 'invalid_request', message: describeIssue(result.error) });
    return { ok: false };
  }
  return { ok: true, value: result.data };
}

/** JSON nested deeper than this is refused (recursive code further on would overflow the stack). */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests arrays and objects deeper than `max` levels (checked without recursion). */
export function nestedDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

export const TOO_DEEP_MESSAGE = `Request body is nested deeper than ${MAX_JSON_DEPTH} levels`;

export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request body';
  const path = issue.path.length > 0 ? issue.path.join('.') : 'body';
  return `Invalid field ${path}: ${issue.message}`;
}
