import { bucketLabel, bucketStart, DAY_MS, formatDay, nextBucket, startOfDay } from './calendar.js';
import { tooLarge } from './errors.js';
import type { ReportLimits } from './limits.js';
import type { ReportFilters } from './params.js';
import type { Period } from './summary.js';
import { entryOf, isAnalysed, prKeyOf, zeroSeverities } from './tally.js';
import type { SeriesPoint, Window } from './types.js';

/** Series: buckets of the granularity (UTC; ISO weeks from Monday) over the period. */
export function buildSeries(
  current: Period,
  filters: ReportFilters,
  window: Window,
  limits: Readonly<ReportLimits>,
): { series: SeriesPoint[]; from: number | null; to: number | null; clipped: boolean } {
  const { from: seriesFrom, to: seriesTo } = seriesRange(current, window);
  let seriesClipped = false;
  const series: SeriesPoint[] = [];
  const bucketIndex = new Map<number, number>();
  if (seriesFrom !== null && seriesTo !== null && seriesFrom <= seriesTo) {
    const lo = seriesFrom;
    const hi = seriesTo;
    const g = filters.granularity;
    for (let start = bucketStart(g, lo); start <= hi; start = nextBucket(g, start)) {
      if (series.length >= limits.seriesBuckets) {
        let count = series.length;
        for (let s = start; s <= hi && count <= limits.seriesBuckets * 4; s = nextBucket(g, s)) count++;
        throw tooLarge(
          'seriesBuckets',
          count,
          limits.seriesBuckets,
          { repo: filters.repo },
          'use granularity=week or month, or a shorter from/to range',
        );
      }
      const end = nextBucket(g, start) - DAY_MS;
      if (start < lo || end > hi) seriesClipped = true;
      bucketIndex.set(start, series.length);
      series.push({
        bucket: bucketLabel(g, start),
        from: formatDay(Math.max(start, lo)),
        to: formatDay(Math.min(end, hi)),
        reviewedPrs: 0,
        runs: 0,
        reviews: 0,
        findings: 0,
        bySeverity: zeroSeverities(),
        comments: 0,
      });
    }
    const pointAt = (ms: number) => {
      const i = bucketIndex.get(bucketStart(g, ms));
      return i === undefined ? null : series[i]!;
    };
    fillSeries(current, pointAt);
  }
  return { series, from: seriesFrom, to: seriesTo, clipped: seriesClipped };
}

/** The days the series covers: the window, or where not bounded the days of the period's events. */
function seriesRange(current: Period, window: Window): { from: number | null; to: number | null } {
  const eventTimes: number[] = [];
  for (const r of current.runs) eventTimes.push(r.createdAt);
  for (const c of current.findings) eventTimes.push(c.firstSeen);
  for (const c of current.comments) eventTimes.push(c.createdAt);
  let seriesFrom: number | null = Number.isFinite(window.from) ? window.from : null;
  let seriesTo: number | null = Number.isFinite(window.to) ? window.to - DAY_MS : null;
  if (seriesFrom === null || seriesTo === null) {
    let min = Infinity;
    let max = -Infinity;
    for (const t of eventTimes) {
      if (t < min) min = t;
      if (t > max) max = t;
    }
    if (seriesFrom === null) seriesFrom = Number.isFinite(min) ? startOfDay(min) : seriesTo;
    if (seriesTo === null) seriesTo = Number.isFinite(max) ? startOfDay(max) : seriesFrom;
  }
  return { from: seriesFrom, to: seriesTo };
}

function fillSeries(current: Period, pointAt: (ms: number) => SeriesPoint | null): void {
  const reviewedInBucket = new Map<SeriesPoint, Set<string>>();
  for (const r of current.runs) {
    const point = pointAt(r.createdAt);
    if (!point) continue;
    point.runs++;
    if (!isAnalysed(r.analysisStatus)) continue;
    point.reviews++;
    entryOf(reviewedInBucket, point, () => new Set()).add(prKeyOf(r.repo, r.prNumber));
  }
  for (const [point, set] of reviewedInBucket) point.reviewedPrs = set.size;
  for (const c of current.findings) {
    const point = pointAt(c.firstSeen);
    if (!point) continue;
    point.findings++;
    point.bySeverity[c.finding.severity]++;
  }
  for (const c of current.comments) {
    const point = pointAt(c.createdAt);
    if (point) point.comments++;
  }
}
