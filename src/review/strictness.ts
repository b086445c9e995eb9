import { escapeRegExp } from '../memory/match.js';
import type { Finding } from './output.schema.js';

/** The policy's `strictness` (operator policy, default `low`). */
export type Strictness = 'low' | 'medium' | 'high';

/** Severities that are always published, whatever the strictness (review-engine 3.3). */
export const ALWAYS_KEPT_SEVERITIES = ['blocker', 'critical', 'high'] as const;

/** Terms whose presence in a finding's title, body or category always publishes it (review-engine 3.3). */
export const ALWAYS_KEPT_TERMS = [
  'security',
  'injection',
  'XSS',
  'CSRF',
  'SSRF',
  'memory leak',
  'infinite loop',
  'null dereference',
  'missing validation',
] as const;

/** Below this recognized confidence, `medium` strictness drops a medium-severity finding. */
export const MEDIUM_STRICTNESS_MIN_CONFIDENCE = 0.8;

/** Severities dropped by `high` strictness (`nit` and `info` rank below `low`). */
const HIGH_STRICTNESS_DROPS = new Set(['medium', 'low', 'nit', 'info']);

/** What the filter reads of a finding: `Finding & { confidence?: number | null }` fits. */
export type StrictnessCandidate = {
  severity: string;
  title: string;
  body: string;
  category: string;
  confidence?: number | null;
};

/**
 * Word-ish matching: case-insensitive, not inside a longer word (so `insecurity` does not match
 * `security`), words of a multi-word term joined by any run of spaces, hyphens or underscores, and a
 * plural `s`/`es` allowed (`memory leaks`, `SQL-injections`, `XSSes`).
 */
const TERM_PATTERNS: ReadonlyArray<{ term: string; pattern: RegExp }> = ALWAYS_KEPT_TERMS.map((term) => ({
  term,
  pattern: new RegExp(
    `(?<![\\p{L}\\p{N}])${term.split(/\s+/).map(escapeRegExp).join('[\\s_-]+')}(?:e?s)?(?![\\p{L}\\p{N}])`,
    'iu',
  ),
}));

/** The always-kept term a text matches first, or `null`. */
export function matchedAlwaysKeptTerm(text: string): string | null {
  for (const { term, pattern } of TERM_PATTERNS) if (pattern.test(text)) return term;
  return null;
}

/** True when strictness can never drop the finding: top severity or a protected term in its text. */
export function isAlwaysKept(finding: StrictnessCandidate): boolean {
  const severity = finding.severity.trim().toLowerCase();
  if ((ALWAYS_KEPT_SEVERITIES as readonly string[]).includes(severity)) return true;
  return [finding.title, finding.body, finding.category].some(
    (text) => typeof text === 'string' && matchedAlwaysKeptTerm(text) !== null,
  );
}

/** A confidence the filter recognizes: a finite number from 0 to 1. Anything else counts as missing. */
export function recognizedConfidence(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1 ? value : null;
}

function drops(finding: StrictnessCandidate, strictness: Strictness): boolean {
  if (strictness === 'low' || isAlwaysKept(finding)) return false;
  const severity = finding.severity.trim().toLowerCase();
  if (strictness === 'high') return HIGH_STRICTNESS_DROPS.has(severity);
  // medium: only medium-severity findings with a recognized confidence below the bar.
  if (severity !== 'medium') return false;
  const confidence = recognizedConfidence(finding.confidence);
  return confidence !== null && confidence < MEDIUM_STRICTNESS_MIN_CONFIDENCE;
}

/**
 * The strictness filter on published findings (review-engine 3.3). `low` keeps all; `medium` drops
 * medium-severity findings carrying a recognized confidence below 0.8 (a missing confidence is kept);
 * `high` drops medium and low severity findings. Findings ranked blocker, critical or high, or whose
 * title, body or category matches an `ALWAYS_KEPT_TERMS` term, are always kept. Order is preserved.
 */
export function applyStrictness<T extends StrictnessCandidate = Finding & { confidence?: number | null }>(
  findings: readonly T[],
  strictness: Strictness,
): { kept: T[]; dropped: T[] } {
  const kept: T[] = [];
  const dropped: T[] = [];
  for (const finding of findings) (drops(finding, strictness) ? dropped : kept).push(finding);
  return { kept, dropped };
}
