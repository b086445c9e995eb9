import { z } from 'zod';

/**
 * The string rules of operator-api 2.10 in one place: every client-supplied string (bodies, query
 * parameters, headers that end up in logs) is bounded and free of control characters.
 */

/** Every C0 control character and DEL. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** C0 control characters and DEL except tab, newline and carriage return (text that may span lines). */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTERS_EXCEPT_WHITESPACE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export const CONTROL_CHARACTER_MESSAGE = 'must not contain control characters';

/** True when `value` holds a control character (`whitespace`: tab, newline and CR allowed). */
export function hasControlCharacter(value: string, opts: { whitespace?: boolean } = {}): boolean {
  return (opts.whitespace ? CONTROL_CHARACTERS_EXCEPT_WHITESPACE : CONTROL_CHARACTERS).test(value);
}

/**
 * A string of at most `max` characters (at least `min`) without control characters; `whitespace` allows
 * tab, newline and CR; `message` replaces the control-character message.
 */
export function plainText(
  max: number,
  opts: { min?: number; whitespace?: boolean; message?: string; trim?: boolean } = {},
) {
  let schema = z.string();
  if (opts.trim) schema = schema.trim();
  if (opts.min !== undefined && opts.min > 0) schema = schema.min(opts.min);
  return schema
    .max(max)
    .refine((s) => !hasControlCharacter(s, opts), opts.message ?? CONTROL_CHARACTER_MESSAGE);
}
