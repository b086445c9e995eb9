import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=` + hex HMAC-SHA-256 of the body, as GitHub sends in `x-hub-signature-256`. */
export function signPayload(secret: string, body: Buffer | string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

/**
 * Verifies `x-hub-signature-256` over the raw bytes, in constant time. GitHub sends lower-case hex;
 * anything else (missing, other algorithm, upper-case, wrong length) is simply false, never a throw.
 */
export function verifySignature(secret: string, body: Buffer, header: string | undefined | null): boolean {
  if (typeof header !== 'string' || !SIGNATURE.test(header)) return false;
  const expected = Buffer.from(signPayload(secret, body), 'utf8');
  const given = Buffer.from(header, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
