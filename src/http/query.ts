/**
 * List `limit` (operator-api 4.1, 8): default 50, clamped to 1..100; anything that is not an integer
 * falls back to the default.
 */
export function parseLimit(raw: string | null, fallback = 50, max = 100): number {
  if (raw === null || !/^-?\d+$/.test(raw.trim())) return fallback;
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n)) return n > 0 ? max : 1;
  return Math.min(max, Math.max(1, n));
}
