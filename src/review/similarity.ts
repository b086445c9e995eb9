/**
 * How alike two texts are, deterministically (no model, no randomness): both are normalised into words,
 * and their sets of shingles (each word, and each pair of neighbouring words) are compared by Jaccard
 * similarity, |A ∩ B| / |A ∪ B|, from 0 (nothing shared) to 1 (the same shingles).
 *
 * Normalising: lower case (Unicode-aware); every run of characters that are not letters or digits is a
 * separator (so `store.delete(key)` is `store delete key`); words of one character and a short list of
 * English glue words (the, a, is, of, ...) are dropped; a light suffix rule folds inflections (`fold`):
 * plurals as Harman's S-stemmer (`queries` → `query`, `races` → `race`, `class` stays), then `ing` or `ed`
 * when three characters remain, then a final `e` when three remain (`race`, `races`, `raced`, `racing` are
 * all `rac`; `caches`, `cached`, `caching` are `cach`). Identifiers keep their digits.
 *
 * Used to tell whether two findings of independent review passes are the same issue (samples.ts); a
 * finding's text is its title and its body.
 */

const STOP_WORDS = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'can',
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
  'may',
  'of',
  'on',
  'or',
  'so',
  'that',
  'the',
  'then',
  'this',
  'to',
  'was',
  'when',
  'which',
  'will',
  'with',
]);

/** One word with its inflection folded away (see the module comment). */
export function fold(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies') && !/[ae]ies$/.test(w)) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('es') && !/[aeo]es$/.test(w)) w = w.slice(0, -1);
  else if (w.length > 3 && w.endsWith('s') && !/[us]s$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length - 3 >= 3) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length - 2 >= 3) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length - 1 >= 3) w = w.slice(0, -1);
  return w;
}

/** The normalised words of a text, in order. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && !STOP_WORDS.has(w))
    .map(fold);
}

/** The shingles of a text: each normalised word, and each pair of neighbouring words. */
export function shingles(text: string): Set<string> {
  const list = words(text);
  const out = new Set<string>(list);
  for (let i = 1; i < list.length; i++) out.add(`${list[i - 1]} ${list[i]}`);
  return out;
}

/** Jaccard similarity of two sets: 1 for two empty sets. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const s of small) if (large.has(s)) shared++;
  return shared / (a.size + b.size - shared);
}

/** How alike two texts are, 0 to 1 (Jaccard of their shingles). */
export function textSimilarity(a: string, b: string): number {
  return jaccard(shingles(a), shingles(b));
}

/** A finding's text as it is compared: its title, then its body. */
export function findingText(f: { title: string; body: string }): string {
  return `${f.title}\n${f.body}`;
}

/**
 * Two findings' texts are the same issue at or above this similarity. Chosen on pairs of findings written
 * about the same bug in other words (0.3 to 0.5) and about different bugs of the same file, sharing words
 * such as `user` or `cache` (0 to 0.11): test/unit/similarity.test.ts pins them. A terse and a long
 * description of one bug can fall under it (0.12 in the tests): they then count as two findings, so an
 * agreement between samples errs on keeping fewer.
 */
export const ALIKE_THRESHOLD = 0.2;

/** Whether two findings' texts describe the same issue (their similarity reaches ALIKE_THRESHOLD). */
export function textsAlike(a: { title: string; body: string }, b: { title: string; body: string }): boolean {
  return textSimilarity(findingText(a), findingText(b)) >= ALIKE_THRESHOLD;
}
