import {
  FINDING_STATUSES,
  REPORT_SEVERITIES,
  type FindingStatus,
  type ReportFilters,
  type ReportSeverity,
} from './params.js';
import { RANKING_SIZE, type Counts, type Page, type Ranking } from './types.js';

export const isAnalysed = (status: string) => status === 'analysed' || status === 'degraded';
export const prKeyOf = (repo: string, number: number) => `${repo}#${number}`;
export const iso = (ms: number) => new Date(ms).toISOString();
/** Code-unit order: fast and the same everywhere (no locale). */
export const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const zeroSeverities = (): Counts<ReportSeverity> =>
  Object.fromEntries(REPORT_SEVERITIES.map((s) => [s, 0])) as Counts<ReportSeverity>;
export const zeroStatuses = (): Counts<FindingStatus> =>
  Object.fromEntries(FINDING_STATUSES.map((s) => [s, 0])) as Counts<FindingStatus>;
export const inc = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};
/** A security class as the `security` filter and the summary name it. */
export const securityKey = (security: boolean | null) =>
  security === null ? 'unknown' : security ? 'true' : 'false';
export const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);

export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** One page of `items` (every item when not paginating), each shown item made by `show`. */
export function paginate<T, U = T>(
  items: T[],
  filters: ReportFilters,
  paginate: boolean,
  show: (item: T) => U = (item) => item as unknown as U,
): Page<U> {
  if (!paginate) return { page: 1, pageSize: items.length, total: items.length, items: items.map(show) };
  const start = (filters.page - 1) * filters.pageSize;
  return {
    page: filters.page,
    pageSize: filters.pageSize,
    total: items.length,
    items: items.slice(start, start + filters.pageSize).map(show),
  };
}

/** The value of `key`, made by `make` and stored the first time it is asked for. */
export function entryOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

export function ranking<T>(items: T[]): Ranking<T> {
  return { total: items.length, items: items.slice(0, RANKING_SIZE) };
}
