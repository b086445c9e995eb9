import type { Granularity } from './params.js';

/** UTC calendar arithmetic for report windows and series buckets. Weeks are ISO weeks (Monday first). */

export const DAY_MS = 86_400_000;

/** Midnight UTC of a `YYYY-MM-DD` day. */
export function parseDay(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

/** The `YYYY-MM-DD` (UTC) of an instant. */
export function formatDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Monday 00:00 UTC of the ISO week holding `ms`. */
export function startOfIsoWeek(ms: number): number {
  const day = startOfDay(ms);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return day - weekday * DAY_MS;
}

export function startOfMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the bucket holding `ms`. */
export function bucketStart(granularity: Granularity, ms: number): number {
  if (granularity === 'week') return startOfIsoWeek(ms);
  if (granularity === 'month') return startOfMonth(ms);
  return startOfDay(ms);
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucket(granularity: Granularity, start: number): number {
  if (granularity === 'day') return start + DAY_MS;
  if (granularity === 'week') return start + 7 * DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** ISO 8601 week label `YYYY-Www` of the week starting at `monday` (the year is the ISO week-year). */
export function isoWeekLabel(monday: number): string {
  const thursday = new Date(monday + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** The label of the bucket starting at `start`: `2026-03-01`, `2026-W09`, `2026-03`. */
export function bucketLabel(granularity: Granularity, start: number): string {
  if (granularity === 'week') return isoWeekLabel(start);
  if (granularity === 'month') return formatDay(start).slice(0, 7);
  return formatDay(start);
}
