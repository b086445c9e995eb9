import type { ReportSeverity } from './params.js';

/**
 * Report severities (operator-api 4.2) from the severities a finding is stored with. The review output
 * (review-engine 2.3) uses `blocker`, `high`, `medium`, `low`; stores written by other producers may hold
 * `critical`, `info` or the P-levels themselves. Anything else is `unknown`, never guessed.
 */
const SEVERITY_MAP: Record<string, ReportSeverity> = {
  blocker: 'P0',
  critical: 'P0',
  p0: 'P0',
  high: 'P1',
  p1: 'P1',
  medium: 'P2',
  p2: 'P2',
  low: 'P3',
  p3: 'P3',
  info: 'info',
  informational: 'info',
};

export function reportSeverity(stored: string | null | undefined): ReportSeverity {
  if (typeof stored !== 'string') return 'unknown';
  return SEVERITY_MAP[stored.trim().toLowerCase()] ?? 'unknown';
}
