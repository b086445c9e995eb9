/**
 * Whether two findings are alike: the one measure Verdict uses wherever it asks whether two findings are
 * the same issue in other words (NAMES.md "Memory": "how alike is measured is Verdict's decision,
 * documented and deterministic"): folding feedback into clusters and withholding findings like a
 * suppressing cluster (memory), findings of independent review passes (`review.samples`), and a still-open
 * finding the model rewords on the next push (cross-push matching). No network, no model, no randomness:
 * the same two texts always give the same score. docs/memory.md says the same to an operator.
 *
 * 1. **Normalise**: lower-case; keep runs of letters and digits (`resp.Body.Close()` gives `resp`, `body`,
 *    `close`); drop tokens of one character and a short list of English function words.
 * 2. **Stem**: keep the first 4 characters of each token, a crude stemmer that needs no dictionary:
 *    `eviction`, `evicted` and `evicts` all become `evic`, `query` and `queries` both `quer`,
 *    `deserialized` and `deserialization` both `dese`. A model rewording a finding changes the form of a
 *    word far more often than the word.
 * 3. **Shingle**: the set of these stems (1-token shingles) of the title and body together. Pairs of
 *    adjacent stems were tried and dropped: a rewording reorders the sentence, so pairs lower the score
 *    of real rewordings about as much as that of different findings.
 * 4. **Compare**: the Jaccard index of the two sets, |A ∩ B| / |A ∪ B|, from 0 (nothing shared) to 1 —
 *    and 0 when the two titles share no stem. A title names the issue: two findings whose titles have no
 *    word in common are different issues, whatever their bodies share (short findings with a stock body
 *    such as "Why it matters." would otherwise be joined by the body alone). This gate also makes
 *    matching against many candidates cheap: only those sharing a title stem are scored (`AlikeIndex`).
 *
 * Two findings are alike at or above `ALIKE_THRESHOLD` (0.24). On the pairs of test/unit/alike.test.ts —
 * findings recorded from review models with the same issue reworded as a model rewords it on the next
 * push, against different issues of the same file and the same kind of issue in other code (two SQL
 * injections, two N+1 queries) — rewordings score from 0.254 up and different issues at most 0.224; 0.24
 * sits between them. A stem length of 5, camel-case splitting, weights for identifiers, the overlap
 * coefficient and Dice were measured on the same pairs and separated them less well.
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
  'may',
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

/** The score at or above which two findings are alike. */
export const ALIKE_THRESHOLD = 0.24;

/** How many leading characters of a token are kept (the stem). */
export const STEM_LENGTH = 4;

/** The text of a finding (or a cluster's exemplar) that the measure reads. */
export type AlikeText = { title: string; body?: string | null };

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
export function shingles(finding: AlikeText): Set<string> {
  return new Set(tokens(`${finding.title}\n${finding.body ?? ''}`));
}

/** The Jaccard index of two shingle sets (0 when both are empty). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const s of small) if (large.has(s)) shared++;
  return shared / (a.size + b.size - shared);
}

/** What the measure reads of a finding: the stems of its title, and (when first needed) of it all. */
class Prepared {
  readonly title: Set<string>;
  private everything: Set<string> | null = null;
  constructor(private readonly text: AlikeText) {
    this.title = new Set(tokens(text.title));
  }
  get all(): Set<string> {
    return (this.everything ??= shingles(this.text));
  }
}

function shareAny(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const s of a) if (b.has(s)) return true;
  return false;
}

function score(a: Prepared, b: Prepared): number {
  return shareAny(a.title, b.title) ? jaccard(a.all, b.all) : 0;
}

/** How alike two findings are, from 0 to 1 (0 when their titles share no stem). */
export function similarity(a: AlikeText, b: AlikeText): number {
  return score(new Prepared(a), new Prepared(b));
}

/** Whether two findings are alike: their similarity reaches ALIKE_THRESHOLD. */
export function alike(a: AlikeText, b: AlikeText): boolean {
  return similarity(a, b) >= ALIKE_THRESHOLD;
}

/** A text's stems as sorted ids of an index's dictionary (title stems as a set for the gate). */
type Coded = { title: readonly number[]; all: Uint32Array };

/**
 * Many candidates, prepared once, for matching many findings against them. The same score as
 * `similarity`, computed faster: stems are numbered once (a dictionary per index) and a text is the sorted
 * array of its stem ids; a finding is scored only against the candidates whose title shares a stem with
 * its own (the others score 0) and whose number of stems allows the threshold (a Jaccard index is at most
 * the smaller set's size over the larger's); shared stems are counted by merging two sorted arrays.
 */
export class AlikeIndex<T extends AlikeText> {
  private readonly ids = new Map<string, number>();
  private readonly list: T[] = [];
  private readonly coded: Coded[] = [];
  private readonly byStem = new Map<number, number[]>();

  constructor(items: readonly T[] = []) {
    for (const item of items) this.add(item);
  }

  /** The candidates, in the order they were given. */
  get items(): readonly T[] {
    return this.list;
  }

  /** One more candidate, after the others. */
  add(item: T): void {
    const i = this.list.length;
    const coded = this.code(item, true);
    this.list.push(item);
    this.coded.push(coded);
    for (const stem of coded.title) {
      const list = this.byStem.get(stem);
      if (list) list.push(i);
      else this.byStem.set(stem, [i]);
    }
  }

  /**
   * A text's stem ids. A candidate's new stems join the dictionary (`learn`); a finding's stems unknown
   * to it get ids past it, which no candidate shares.
   */
  private code(text: AlikeText, learn: boolean): Coded {
    let local: Map<string, number> | null = null;
    const ids = this.ids;
    const idOf = (stem: string): number => {
      const known = ids.get(stem);
      if (known !== undefined) return known;
      if (learn) {
        ids.set(stem, ids.size);
        return ids.size - 1;
      }
      local ??= new Map();
      let n = local.get(stem);
      if (n === undefined) local.set(stem, (n = ids.size + local.size));
      return n;
    };
    const titleStems = tokens(text.title);
    const bodyStems = tokens(text.body ?? '');
    const all = new Uint32Array(titleStems.length + bodyStems.length);
    const title: number[] = [];
    let k = 0;
    for (const stem of titleStems) {
      const id = idOf(stem);
      all[k++] = id;
      if (!title.includes(id)) title.push(id);
    }
    for (const stem of bodyStems) all[k++] = idOf(stem);
    all.sort();
    let n = 0;
    for (let i = 0; i < all.length; i++) if (n === 0 || all[n - 1] !== all[i]) all[n++] = all[i]!;
    return { title, all: all.subarray(0, n) };
  }

  /**
   * The candidate most like `finding` at or above ALIKE_THRESHOLD, or null; ties go to the earlier
   * candidate, so the answer depends on nothing but the candidates and their order. `accept` skips
   * candidates a caller cannot use (one already matched).
   */
  best(
    finding: AlikeText,
    opts: { accept?: (item: T, index: number) => boolean } = {},
  ): { match: T; index: number; score: number } | null {
    const threshold = ALIKE_THRESHOLD;
    const mine = this.code(finding, false);
    const size = mine.all.length;
    const seen = new Uint8Array(this.list.length);
    let best: { match: T; index: number; score: number } | null = null;
    for (const stem of mine.title) {
      for (const i of this.byStem.get(stem) ?? []) {
        if (seen[i]) continue;
        seen[i] = 1;
        const other = this.coded[i]!.all;
        const [small, large] = size <= other.length ? [size, other.length] : [other.length, size];
        if (large === 0 || small < threshold * large) continue;
        // The shared stems a score of at least the threshold (or the best so far) needs.
        const floor = Math.max(threshold, best?.score ?? 0);
        const need = (floor * (size + other.length)) / (1 + floor) - 1e-9;
        const shared = sharedCount(mine.all, other, need);
        if (shared < 0) continue;
        const value = shared / (size + other.length - shared);
        if (value < threshold) continue;
        // The higher score wins; of two equal ones, the earlier candidate.
        if (best !== null && (value < best.score || (value === best.score && i > best.index))) continue;
        if (opts.accept && !opts.accept(this.list[i]!, i)) continue;
        best = { match: this.list[i]!, index: i, score: value };
      }
    }
    return best;
  }
}

/** How many ids two sorted arrays share; -1 as soon as they cannot share `need`. */
function sharedCount(a: Uint32Array, b: Uint32Array, need: number): number {
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    if (shared + Math.min(a.length - i, b.length - j) < need) return -1;
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      shared++;
      i++;
      j++;
    }
  }
  return shared < need ? -1 : shared;
}

/**
 * The candidate most like `finding` at or above ALIKE_THRESHOLD, or null; ties go to the earlier candidate
 * (one finding against a few candidates; `AlikeIndex` for many findings against many).
 */
export function mostAlike<T extends AlikeText>(
  finding: AlikeText,
  candidates: Iterable<T>,
): { match: T; score: number } | null {
  const found = new AlikeIndex([...candidates]).best(finding);
  return found ? { match: found.match, score: found.score } : null;
}
