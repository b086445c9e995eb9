import { COMPETITOR_ARRAY_FIELDS, COMPETITOR_WINNERS, VERDICTS } from './output.schema.js';

/**
 * Reading a model's answer, first half (the second is parse-output.ts): finding the JSON object in the
 * text, parsing it (leniently about trailing commas), and the shallow usability check of review-engine
 * 2.2. Nothing here looks inside a finding.
 */

/** How many unclosed `{` are passed over before giving up, so that hostile text stays linear-ish. */
const MAX_UNCLOSED_STARTS = 64;

/** `{` followed by a key or by `}`: what a JSON object, and not prose in braces, starts with. */
const JSON_OBJECT_START = /\{\s*(?:"|\})/y;

function looksLikeJsonObject(text: string, at: number): boolean {
  JSON_OBJECT_START.lastIndex = at;
  return JSON_OBJECT_START.test(text);
}

type Scan = {
  /** What `extractJsonCandidate` returns. */
  candidate: string | null;
  /** Offset of a JSON-looking `{` that never closes, met before any JSON-looking candidate. */
  unterminatedAt: number | null;
};

/**
 * Matches the object starting at `start` (a `{`), aware of JSON strings and their escapes. Returns the
 * offset just past the matching `}`, or -1 when the text ends first.
 */
function matchObject(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function scan(text: string): Scan {
  let first: string | null = null;
  let unclosed = 0;
  let from = 0;
  while (unclosed < MAX_UNCLOSED_STARTS) {
    const start = text.indexOf('{', from);
    if (start < 0) break;
    const jsonLike = looksLikeJsonObject(text, start);
    const end = matchObject(text, start);
    if (end < 0) {
      // A JSON-looking object that never closes holds the rest of the text (a truncated reply): an inner
      // object is no candidate. A prose brace that never closes is passed over.
      if (jsonLike) return { candidate: null, unterminatedAt: start };
      unclosed++;
      from = start + 1;
      continue;
    }
    const candidate = text.slice(start, end);
    if (jsonLike) return { candidate, unterminatedAt: null };
    first ??= candidate;
    from = end;
  }
  return { candidate: first, unterminatedAt: null };
}

/**
 * Finds the JSON object in a model reply: inside a ```json fence or surrounded by prose alike. Scans for
 * balanced top-level `{...}` (braces inside JSON strings do not count) and returns the first one that
 * starts like a JSON object (`{"` or `{}`), so that prose in braces is passed over; when there is none,
 * the first balanced one (the caller then reports its parse error). The candidate is not parsed here: an
 * invalid first object is returned as is, not passed over for a later valid one. `null` when there is no
 * balanced object, or when a JSON-looking object never closes (a truncated reply: the objects nested in
 * it are not candidates).
 */
export function extractJsonCandidate(text: string): string | null {
  return scan(text).candidate;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isOneToFive(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 5;
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.trim() === '' ? 'a blank string' : `the string ${clip(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return `a ${typeof value}`;
}

function clip(value: string): string {
  const json = JSON.stringify(value);
  return json.length > 40 ? `${json.slice(0, 37)}..."` : json;
}

export type Usability = { usable: true } | { usable: false; problems: string[] };

const ONE_TO_FIVE = 'an integer from 1 to 5';

/**
 * The shallow runtime usability check of review-engine 2.2, and nothing more: it does not look at nested
 * finding shapes, extra properties, array element types or the presence of `priorFindingDispositions`.
 */
export function isUsableReviewOutput(value: unknown): Usability {
  if (!isPlainObject(value)) {
    return { usable: false, problems: [`the payload must be a JSON object, got ${describeValue(value)}`] };
  }
  const problems: string[] = [];
  const check = (field: string, got: unknown, ok: boolean, wanted: string) => {
    if (!ok) problems.push(`\`${field}\` must be ${wanted}, got ${describeValue(got)}`);
  };
  const oneOf = (values: readonly string[]) => `one of ${quoteList(values)}`;
  for (const field of ['overview', 'summary', 'mergeVerdict'] as const) {
    const v = value[field];
    check(field, v, typeof v === 'string' && v.trim() !== '', 'a non-blank string');
  }
  for (const field of ['reasoning', 'sequenceDiagram'] as const) {
    check(field, value[field], typeof value[field] === 'string', 'a string');
  }
  check('verdict', value.verdict, (VERDICTS as readonly unknown[]).includes(value.verdict), oneOf(VERDICTS));
  check('confidenceScore', value.confidenceScore, isOneToFive(value.confidenceScore), ONE_TO_FIVE);
  for (const field of [
    'bulletHighlights',
    'importantFiles',
    'findings',
    'missingValidations',
    'crossRepoImpact',
  ] as const) {
    check(field, value[field], Array.isArray(value[field]), 'an array');
  }
  const comparison = value.competitorComparison;
  if (!isPlainObject(comparison)) {
    check('competitorComparison', comparison, false, 'an object');
  } else {
    const at = (field: string) => `competitorComparison.${field}`;
    const { available, summary, winner, confidence } = comparison;
    check(at('available'), available, typeof available === 'boolean', 'a boolean');
    check(at('summary'), summary, typeof summary === 'string', 'a string');
    const winners = COMPETITOR_WINNERS as readonly unknown[];
    check(at('winner'), winner, winners.includes(winner), oneOf(COMPETITOR_WINNERS));
    check(at('confidence'), confidence, isOneToFive(confidence), ONE_TO_FIVE);
    for (const field of COMPETITOR_ARRAY_FIELDS) {
      check(at(field), comparison[field], Array.isArray(comparison[field]), 'an array');
    }
  }
  return problems.length === 0 ? { usable: true } : { usable: false, problems };
}

function quoteList(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}

/**
 * Removes commas that stand right before a closing `}` or `]` outside JSON strings (a habit of models),
 * so that `{"a": 1,}` parses. Text inside strings is never changed.
 */
export function withoutTrailingCommas(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') {
        out += text[i + 1] ?? '';
        i++;
      } else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    if (ch === ',') {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') continue;
    }
    out += ch;
  }
  return out;
}

/** The JSON object of an answer, parsed; or the error to show the model (see `repairPrompt`). */
export type ReadJson = { ok: true; value: unknown; warnings: string[] } | { ok: false; error: string };

/**
 * Extracts the JSON object of a model reply and parses it; a parse error is retried once without
 * trailing commas (said in the warnings). The error is written to be shown to the model.
 */
export function readJsonObject(text: string): ReadJson {
  const { candidate, unterminatedAt } = scan(text);
  if (candidate === null) {
    const error =
      unterminatedAt !== null
        ? `The JSON object starting at character ${unterminatedAt} of the response is never closed (missing "}"; the response may have been cut off).`
        : text.trim() === ''
          ? 'The response is empty; it contains no JSON object.'
          : 'The response contains no JSON object.';
    return { ok: false, error };
  }
  let value: unknown;
  const warnings: string[] = [];
  try {
    value = JSON.parse(candidate);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const lenient = withoutTrailingCommas(candidate);
    try {
      if (lenient === candidate) throw err;
      value = JSON.parse(lenient);
      warnings.push('removed trailing commas from the JSON');
    } catch {
      return { ok: false, error: `The JSON object in the response is not valid JSON: ${reason}.` };
    }
  }
  return { ok: true, value, warnings };
}
