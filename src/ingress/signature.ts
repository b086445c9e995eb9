import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signature (review-engine 5.1): HMAC-SHA-256 of the raw body with the shared webhook secret, sent
 * by GitHub in `x-hub-signature-256` as `sha256=` followed by 64 lower-case hex digits.
 */

const PREFIX = 'sha256=';

/**
 * The accepted header form. Decision: only lower-case hex is accepted. GitHub always sends lower-case hex
 * (and its own reference implementations compare the header string exactly), so an upper-case digest did not
 * come from GitHub and is rejected rather than normalised.
 */
const HEADER = /^sha256=[0-9a-f]{64}$/;

function digest(secret: string, body: Buffer | string): Buffer {
  return createHmac('sha256', secret).update(body).digest();
}

/** `sha256=` + lower-case hex HMAC-SHA-256 of the body, exactly as GitHub sends it. */
export function signPayload(secret: string, body: Buffer | string): string {
  return PREFIX + digest(secret, body).toString('hex');
}

/**
 * Verifies `x-hub-signature-256` over the raw bytes of the body. The 32-byte digests are compared with
 * `crypto.timingSafeEqual`. Anything malformed (missing or empty header, another algorithm such as `sha1=`,
 * wrong length, upper-case or non-hex digits) is simply `false`; this never throws. An empty secret is also
 * `false`: anybody can compute an HMAC under an empty key, so it fails closed (5.1: never bypassed).
 */
export function verifySignature(secret: string, body: Buffer, header: string | undefined | null): boolean {
  if (typeof secret !== 'string' || secret.length === 0) return false;
  if (typeof header !== 'string' || !HEADER.test(header)) return false;
  const given = Buffer.from(header.slice(PREFIX.length), 'hex');
  const expected = digest(secret, body);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
