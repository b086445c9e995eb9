import { createHash } from 'node:crypto';

/**
 * Finding fingerprints: the identity of a concern across reviews of a pull request, used by
 * `priorFindingDispositions` (review-engine 2.4). A fingerprint survives the code moving (line numbers
 * in the title) and cosmetic changes of whitespace, case and punctuation; it changes with the path, the
 * category or the words of the title.
 */

/** Trimmed, `/`-separated, without leading `./` segments or doubled slashes. Case is kept. */
export function normaliseFindingPath(path: string): string {
  let p = path
    .trim()
    .replace(/\\/g, '/')
    .replace(/\/{2,}/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  return p;
}

export function normaliseCategory(category: string): string {
  return category.trim().toLowerCase().replace(/\s+/g, ' ');
}

/** A preposition that introduces a line reference (`at line 42`, `on L7`) goes with it. */
const LEAD = String.raw`(?:\b(?:at|on|in|near|around|see)\s+)?`;

/**
 * Line references a title may carry: `line 42`, `lines 10-20`, `line 42, column 5`, `L42`, `#L42-L50`,
 * `foo.ts:42:7`, `(ln 3)`, with a leading `at`/`on`/`in`/`near`/`around`/`see`. Removed before
 * punctuation, so that `:` and `#` still delimit them.
 */
const LINE_REFERENCES: readonly RegExp[] = [
  new RegExp(
    LEAD +
      String.raw`\b(?:lines?|ln)\.?\s*#?\s*\d+(?:\s*(?:-|–|to|through|and)\s*\d+)?(?:\s*,?\s*col(?:umn)?s?\.?\s*\d+)?`,
    'giu',
  ),
  new RegExp(LEAD + String.raw`#?\bl\d+(?:\s*[-–]\s*l?\d+)?\b`, 'giu'),
  /:\d+(?::\d+)?(?![\p{L}\p{N}])/gu,
];

export function normaliseTitle(title: string): string {
  let t = title.toLowerCase();
  for (const pattern of LINE_REFERENCES) t = t.replace(pattern, ' ');
  return t
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** `fp_` and the first 20 hex characters of a SHA-256 over the normalised path, category and title. */
export function findingFingerprint(finding: { path: string; category: string; title: string }): string {
  const material = [
    normaliseFindingPath(finding.path),
    normaliseCategory(finding.category),
    normaliseTitle(finding.title),
  ].join('\u0000');
  return 'fp_' + createHash('sha256').update(material, 'utf8').digest('hex').slice(0, 20);
}
