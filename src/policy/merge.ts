import type { z } from 'zod';
import { reviewPolicySchema, type ReviewPolicy } from './policy.schema.js';
import { CONTROL_CHARACTERS } from '../http/text.js';

/**
 * Validation and the merge rule of `PATCH /operator/api/settings` (operator-api 2.9, 7; NAMES.md).
 *
 * Merge rule: objects are merged deeply; a key missing from the patch keeps the stored value, and a key
 * missing from both takes the default. Arrays (`filters`, `autoApprove.filters`, `execution.filters`,
 * `pausedAuthors`) and scalars in the patch replace the stored value whole; `null` is a value (it clears
 * `monthlyModelBudgetUsd`, and is invalid elsewhere). The merged document is validated strictly, so an
 * unknown or invalid field of the patch is reported with its dotted path under `settings.`.
 *
 * A stored document that is itself invalid (an older shape, a hand edit) must not make every patch fail,
 * so it is repaired first (`sanitizeStoredPolicy`): every invalid or unknown stored field is dropped and
 * falls back to its default. A field is the smallest part of the document that is not inside a list, so
 * one bad stored filter rule drops that whole list (dropping a single rule or condition would silently
 * widen or narrow what it selects). When `autoApprove.filters` is dropped, `autoApprove.enabled` is set to
 * false as well, so a lost filter list never widens auto approval to every pull request.
 */

export type PolicyValidation =
  { ok: true; policy: ReviewPolicy } | { ok: false; path: string; message: string };

export const POLICY_PATH_ROOT = 'settings';
export const INVALID_FIELD_MESSAGE = 'Unknown or invalid field';

type PathSegment = PropertyKey;
type Issue = z.core.$ZodIssue;

const MAX_SEGMENT_DISPLAY = 100;
const ANY_CONTROL_CHARACTER = new RegExp(CONTROL_CHARACTERS.source, 'g');

function displaySegment(segment: PathSegment): string {
  const text = typeof segment === 'symbol' ? (segment.description ?? 'symbol') : String(segment);
  // Keys come from the client: keep the message printable and short.
  const printable = text.replace(
    ANY_CONTROL_CHARACTER,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return printable.length > MAX_SEGMENT_DISPLAY ? `${printable.slice(0, MAX_SEGMENT_DISPLAY)}...` : printable;
}

function displayPath(segments: readonly PathSegment[]): string {
  return [POLICY_PATH_ROOT, ...segments.map(displaySegment)].join('.');
}

/** The full path of an issue: an unknown key is named itself, not by its parent object. */
function issuePath(issue: Issue): PathSegment[] {
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) return [...issue.path, issue.keys[0]!];
  return [...issue.path];
}

function invalid(issue: Issue | undefined): PolicyValidation {
  if (!issue)
    return { ok: false, path: POLICY_PATH_ROOT, message: `${INVALID_FIELD_MESSAGE}: ${POLICY_PATH_ROOT}` };
  const path = displayPath(issuePath(issue));
  const reason = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
  return { ok: false, path, message: `${INVALID_FIELD_MESSAGE}: ${path}: ${reason}` };
}

/** Validates a whole (possibly partial: missing keys take their defaults) policy document, strictly. */
export function validatePolicyDocument(doc: unknown): PolicyValidation {
  const parsed = reviewPolicySchema.safeParse(doc);
  if (parsed.success) return { ok: true, policy: parsed.data };
  return invalid(parsed.error.issues[0]);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Sets an own property, even one named `__proto__` (so that validation sees and rejects it). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Deep merge of plain objects; anything else in `patch` (arrays, scalars, null) replaces. */
export function mergeDeep(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch) || !isPlainObject(base)) return patch;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(base)) setOwn(out, key, base[key]);
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === undefined) continue;
    setOwn(out, key, Object.prototype.hasOwnProperty.call(base, key) ? mergeDeep(base[key], value) : value);
  }
  return out;
}

function cloneJson(value: unknown): unknown {
  try {
    if (typeof value === 'string') return JSON.parse(value) as unknown;
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

/** The stored field an issue belongs to: its path up to the first list index. */
function storedFieldOf(path: readonly PathSegment[]): string[] {
  const index = path.findIndex((segment) => typeof segment === 'number');
  return (index === -1 ? path : path.slice(0, index)).map(String);
}

function deleteAt(root: Record<string, unknown>, path: readonly string[]): boolean {
  let node: unknown = root;
  for (const segment of path.slice(0, -1)) {
    if (!isPlainObject(node) || !Object.prototype.hasOwnProperty.call(node, segment)) return false;
    node = node[segment];
  }
  const last = path[path.length - 1];
  if (last === undefined || !isPlainObject(node) || !Object.prototype.hasOwnProperty.call(node, last))
    return false;
  delete node[last];
  return true;
}

export type SanitizedPolicy = { policy: ReviewPolicy; dropped: string[] };

/**
 * The stored document made valid: null/undefined (nothing saved yet) gives the defaults; each invalid or
 * unknown field is dropped to its default and its dotted path listed in `dropped`. A JSON string is parsed
 * first; a document that is not an object at all gives the defaults.
 */
export function sanitizeStoredPolicy(stored: unknown): SanitizedPolicy {
  if (stored === null || stored === undefined) return { policy: reviewPolicySchema.parse({}), dropped: [] };
  const doc = cloneJson(stored);
  if (!isPlainObject(doc)) return { policy: reviewPolicySchema.parse({}), dropped: [POLICY_PATH_ROOT] };
  const dropped: string[] = [];
  // Every pass drops at least one field, and a document has finitely many: the bound is only a guard.
  for (let pass = 0; pass < 50; pass += 1) {
    const parsed = reviewPolicySchema.safeParse(doc);
    if (parsed.success) {
      if (
        dropped.some((path) => path === 'settings.autoApprove.filters' || path === 'settings.autoApprove')
      ) {
        parsed.data.autoApprove.enabled = false;
      }
      return { policy: parsed.data, dropped };
    }
    let progressed = false;
    for (const issue of parsed.error.issues) {
      const paths =
        issue.code === 'unrecognized_keys' ? issue.keys.map((key) => [...issue.path, key]) : [issue.path];
      for (const path of paths) {
        const field = storedFieldOf(path);
        if (field.length === 0) continue;
        if (deleteAt(doc, field)) {
          progressed = true;
          dropped.push(displayPath(field));
        }
      }
    }
    if (!progressed) break;
  }
  return { policy: reviewPolicySchema.parse({}), dropped: [POLICY_PATH_ROOT] };
}

/**
 * Merges the `settings` object of a PATCH body over the stored document (null when none was saved) and
 * validates the result. The stored document is repaired first (see `sanitizeStoredPolicy`), so an error
 * always names a field of the patch.
 */
export function mergePolicy(stored: unknown, patch: unknown): PolicyValidation {
  if (!isPlainObject(patch)) {
    return {
      ok: false,
      path: POLICY_PATH_ROOT,
      message: `${INVALID_FIELD_MESSAGE}: ${POLICY_PATH_ROOT}: expected an object`,
    };
  }
  const { policy } = sanitizeStoredPolicy(stored);
  return validatePolicyDocument(mergeDeep(policy, patch));
}
