import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { BodyTooLargeError, readBody, sendJson } from './router.js';

/** Why a request body is not a JSON value Verdict reads: the status, `error` code and message to answer. */
export type JsonRefusal = {
  status: 413 | 400;
  error: 'payload_too_large' | 'invalid_json' | 'invalid_request';
  message: string;
};

/**
 * Reads a request body as JSON (an empty body is `{}`): the value, or the refusal: 413
 * `payload_too_large` past `limit`, 400 `invalid_json`, 400 `invalid_request` when nested too deep.
 */
export async function readJsonValue(
  req: IncomingMessage,
  limit: number,
): Promise<{ ok: true; value: unknown } | ({ ok: false } & JsonRefusal)> {
  let raw: Buffer;
  try {
    raw = await readBody(req, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      return { ok: false, status: 413, error: 'payload_too_large', message: 'Request body is too large' };
    }
    throw error;
  }
  let value: unknown;
  try {
    value = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    return { ok: false, status: 400, error: 'invalid_json', message: 'Request body is not valid JSON' };
  }
  if (nestedDeeperThan(value))
    return { ok: false, status: 400, error: 'invalid_request', message: TOO_DEEP_MESSAGE };
  return { ok: true, value };
}

/**
 * Reads and validates a JSON request body. On failure it has already answered: 413 `payload_too_large`,
 * 400 `invalid_json`, or 400 `invalid_request` with a message naming the first bad field.
 */
export async function readJsonBody<S extends z.ZodType>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: S,
  limit = 1024 * 1024,
): Promise<{ ok: true; value: z.infer<S> } | { ok: false }> {
  const read = await readJsonValue(req, limit);
  if (!read.ok) {
    sendJson(res, read.status, { ok: false, error: read.error, message: read.message });
    return { ok: false };
  }
  const result = schema.safeParse(read.value);
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

/**
 * The path of the first string (key or value) holding a NUL byte, or null. PostgreSQL text cannot store
 * one (SQLite can), so both faces refuse it before any query: the same 400 on both dialects.
 */
export function nulBytePath(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return path || 'body';
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      const at = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return at;
      stack.push([child, at]);
    }
  }
  return null;
}

export const NUL_BYTE_MESSAGE = 'must not contain a NUL byte';

export const TOO_DEEP_MESSAGE = `Request body is nested deeper than ${MAX_JSON_DEPTH} levels`;

/**
 * `Invalid field <path>: <message>` for the first issue of a body schema (`body` for the body itself),
 * without a leading `strip` segment (for an input `{<param>, body}`).
 */
export function describeIssue(error: z.ZodError, strip?: string): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request body';
  const path = strip !== undefined && issue.path[0] === strip ? issue.path.slice(1) : issue.path;
  return `Invalid field ${path.length > 0 ? path.join('.') : 'body'}: ${issue.message}`;
}
