/**
 * How alike two findings are, for folding feedback into clusters (NAMES.md "Memory": "how alike is
 * measured is Verdict's decision, documented and deterministic"). No network, no model, no randomness:
 * the same two texts always give the same score.
 *
 * 1. **Normalise**: lower-case; keep runs of letters and digits (`store.delete()` gives `store`,
 *    `delete`); drop tokens of one character and a short list of English function words.
 * 2. **Stem**: keep the first 5 characters of each token, a crude stemmer that needs no dictionary:
 *    `eviction`, `evicted` and `evicts` all become `evict`, `concatenated` and `concatenation` both
 *    `conca`. Rewordings change the form of a word far more often than the word.
 * 3. **Shingle**: the set of these stems (1-token shingles) of the title and body together. Longer
 *    shingles (adjacent pairs) were tried and dropped: a rewording reorders a sentence, so pairs lower
 *    the score of real rewordings about as much as that of different findings.
 * 4. **Compare**: the Jaccard index of the two sets, |A ∩ B| / |A ∪ B|, from 0 (nothing shared) to 1 —
 *    and 0 when the two titles share no stem. A finding's title names its issue: two findings whose
 *    titles have no word in common are different issues, whatever their bodies share (short findings
 *    with a stock body such as "Why it matters." would otherwise be joined by the body alone).
 *
 * Two findings are alike when the index is at least `ALIKE_THRESHOLD` (0.25). On the pairs of
 * test/unit/memory-similarity.test.ts (real rewordings of one issue, against different issues of the
 * same file or topic) rewordings score from 0.29 up and different issues at most 0.17; 0.25 sits
 * between them with room on both sides. docs/memory.md says the same to an operator.
 */

/** Function words that carry no meaning for telling findings apart. */
const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'been',
  'but',
  'by',
  'can',
  'could',
  'does',
  'for',
  'from',
  'has',
  'have',
  'if',
  'in',
  'into',
  'is',
  'it',
  'its',
  'of',
  'on',
  'or',
  'so',
  'should',
  'than',
  'that',
  'the',
  'then',
  'there',
  'these',
  'this',
  'those',
  'to',
  'was',
  'were',
  'when',
  'which',
  'while',
  'will',
  'with',
  'would',
]);

/** The index at or above which two findings are alike. */
export const ALIKE_THRESHOLD = 0.25;

/** How many leading characters of a token are kept (the stem). */
export const STEM_LENGTH = 5;

/** The text of a finding (or a cluster's exemplar) that similarity reads. */
export type SimilarText = { title: string; body?: string | null };

/** The normalised, stemmed tokens of a text, in order. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (raw.length < 2 || STOP_WORDS.has(raw)) continue;
    out.push(raw.slice(0, STEM_LENGTH));
  }
  return out;
}

/** The shingles (stems) of a finding's title and body. */
export function shingles(finding: SimilarText): Set<string> {
  return new Set(tokens(`${finding.title}\n${finding.body ?? ''}`));
}

/** What similarity reads of a finding: the stems of its title, and of its title and body. */
type Prepared = { title: Set<string>; all: Set<string> };

function prepare(finding: SimilarText): Prepared {
  return { title: new Set(tokens(finding.title)), all: shingles(finding) };
}

function shareAny(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const s of a) if (b.has(s)) return true;
  return false;
}

function score(a: Prepared, b: Prepared): number {
  return shareAny(a.title, b.title) ? jaccard(a.all, b.all) : 0;
}

/** The Jaccard index of two shingle sets (0 when both are empty). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const s of small) if (large.has(s)) shared++;
  return shared / (a.size + b.size - shared);
}

/** How alike two findings are, from 0 to 1 (0 when their titles share no stem). */
export function similarity(a: SimilarText, b: SimilarText): number {
  return score(prepare(a), prepare(b));
}

/**
 * The candidate most like `finding` at or above `threshold`, or null; ties go to the earlier candidate,
 * so the answer does not depend on anything but the order given.
 */
export function mostAlike<T extends SimilarText>(
  finding: SimilarText,
  candidates: Iterable<T>,
  threshold: number = ALIKE_THRESHOLD,
): { match: T; score: number } | null {
  const mine = prepare(finding);
  let best: { match: T; score: number } | null = null;
  for (const candidate of candidates) {
    const value = score(mine, prepare(candidate));
    if (value >= threshold && (best === null || value > best.score))
      best = { match: candidate, score: value };
  }
  return best;
}
