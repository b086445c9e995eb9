import {
  COMPETITOR_ARRAY_FIELDS,
  COMPETITOR_WINNERS,
  FINDING_EXTENSION_FIELDS,
  REVIEW_OUTPUT_FIELDS,
  VERDICTS,
  competitorComparisonSchema,
  defaultCompetitorComparison,
  dispositionSchema,
  findingSchema,
  importantFileSchema,
  type CompetitorComparison,
  type Disposition,
  type Finding,
  type ImportantFile,
  type ReviewOutput,
} from './output.schema.js';

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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isOneToFive(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 5;
}

function describeValue(value: unknown): string {
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

export type ParsedReview =
  | {
      ok: true;
      output: ReviewOutput;
      warnings: string[];
      /** Findings the model gave that could not be used (no path, no title): counted, never silent. */
      unreadable: UnreadableFinding[];
    }
  | { ok: false; error: string; raw: string };

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

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Keeps the string elements of an array the usability check has already accepted as an array. */
function strings(field: string, value: unknown[], warnings: string[]): string[] {
  const kept = value.filter((item): item is string => typeof item === 'string');
  if (kept.length < value.length) {
    warnings.push(`dropped ${plural(value.length - kept.length, 'non-string element')} of \`${field}\``);
  }
  return kept;
}

function firstIssue(error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const at = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
  return `${at}${issue.message}`;
}

const FINDING_KEYS = new Set([
  'severity',
  'category',
  'path',
  'title',
  'body',
  'contextIds',
  ...FINDING_EXTENSION_FIELDS,
]);

/**
 * An extension key that is present but not of its type is removed (the finding stays); a `line` that is
 * not a line number takes `endLine` and `suggestion` with it, since they mean nothing without it.
 */
function extensionProblems(item: Record<string, unknown>): {
  cleaned: Record<string, unknown>;
  removed: string[];
} {
  const cleaned = { ...item };
  const removed: string[] = [];
  const isLine = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1;
  const present = (key: string) => cleaned[key] !== undefined && cleaned[key] !== null;
  const drop = (key: string) => {
    if (present(key)) removed.push(key);
    delete cleaned[key];
  };
  if (present('line') && !isLine(cleaned.line)) {
    drop('line');
    drop('endLine');
    drop('suggestion');
  }
  if (present('endLine') && !isLine(cleaned.endLine)) drop('endLine');
  if (present('suggestion') && typeof cleaned.suggestion !== 'string') drop('suggestion');
  const c = cleaned.confidence;
  if (present('confidence') && !(typeof c === 'number' && c >= 0 && c <= 1)) drop('confidence');
  return { cleaned, removed };
}

/**
 * Severity words real models use, read as the spec's four (case-insensitive). A word not listed here is
 * read as `medium`, with a warning: the finding is kept.
 */
export const SEVERITY_WORDS: Readonly<Record<string, Finding['severity']>> = {
  blocker: 'blocker',
  critical: 'blocker',
  high: 'high',
  major: 'high',
  medium: 'medium',
  moderate: 'medium',
  low: 'low',
  minor: 'low',
  nit: 'low',
  nitpick: 'low',
  info: 'low',
  informational: 'low',
  trivial: 'low',
};

/** A finding the model gave that cannot be used (no path, no title, not an object), and why. */
export type UnreadableFinding = { index: number; reason: string };

/**
 * Normalises one finding before validating it: unknown keys removed, invalid extension values removed,
 * the severity word mapped, a missing `contextIds` defaulted to `[]`, a missing category or body to an
 * empty string. What still cannot be used (no path, no title) is returned as unreadable.
 */
function normaliseFinding(
  item: unknown,
  index: number,
  warnings: string[],
  unknownKeys: Set<string>,
): { finding: Finding } | { unreadable: UnreadableFinding } {
  if (!isPlainObject(item)) {
    return { unreadable: { index, reason: `finding ${index} is ${describeValue(item)}, not an object` } };
  }
  for (const key of Object.keys(item)) if (!FINDING_KEYS.has(key)) unknownKeys.add(key);
  const { cleaned, removed } = extensionProblems(item);
  if (removed.length > 0) {
    warnings.push(`removed invalid ${removed.map((k) => `\`${k}\``).join(', ')} of finding ${index}`);
  }
  const missing = (['path', 'title'] as const).filter(
    (key) => typeof cleaned[key] !== 'string' || (cleaned[key] as string).trim() === '',
  );
  if (missing.length > 0) {
    return {
      unreadable: {
        index,
        reason: `finding ${index} has no ${missing.map((k) => `\`${k}\``).join(' and no ')}`,
      },
    };
  }
  const word = typeof cleaned.severity === 'string' ? cleaned.severity.trim().toLowerCase() : '';
  const severity = SEVERITY_WORDS[word];
  if (severity === undefined) {
    warnings.push(`read the severity ${describeValue(cleaned.severity)} of finding ${index} as "medium"`);
    cleaned.severity = 'medium';
  } else cleaned.severity = severity;
  cleaned.contextIds = Array.isArray(cleaned.contextIds)
    ? cleaned.contextIds.filter((id): id is string => typeof id === 'string')
    : [];
  if (typeof cleaned.category !== 'string') cleaned.category = '';
  if (typeof cleaned.body !== 'string') cleaned.body = cleaned.body === undefined ? '' : String(cleaned.body);
  const parsed = findingSchema.safeParse(cleaned);
  if (!parsed.success) {
    return { unreadable: { index, reason: `finding ${index}: ${firstIssue(parsed.error)}` } };
  }
  return { finding: parsed.data };
}

function normaliseFindings(
  value: unknown[],
  supplied: ReadonlySet<string>,
  warnings: string[],
  unreadable: UnreadableFinding[],
): Finding[] {
  const findings: Finding[] = [];
  let removedIds = 0;
  let touched = 0;
  const unknownKeys = new Set<string>();
  const mapped = new Map<string, number>();
  value.forEach((item, index) => {
    const word = isPlainObject(item) && typeof item.severity === 'string' ? item.severity : null;
    const result = normaliseFinding(item, index, warnings, unknownKeys);
    if ('unreadable' in result) {
      unreadable.push(result.unreadable);
      return;
    }
    const finding = result.finding;
    if (word !== null && word !== finding.severity && SEVERITY_WORDS[word.trim().toLowerCase()]) {
      const key = `"${word}" as "${finding.severity}"`;
      mapped.set(key, (mapped.get(key) ?? 0) + 1);
    }
    const contextIds = finding.contextIds.filter((id) => supplied.has(id));
    if (contextIds.length < finding.contextIds.length) {
      removedIds += finding.contextIds.length - contextIds.length;
      touched++;
    }
    findings.push({ ...finding, contextIds });
  });
  if (unknownKeys.size > 0) {
    warnings.push(`removed unknown finding key(s): ${[...unknownKeys].sort().join(', ')}`);
  }
  if (mapped.size > 0) {
    warnings.push(
      `read the severity ${[...mapped].map(([k, n]) => `${k}${n > 1 ? ` (${n})` : ''}`).join(', ')}`,
    );
  }
  if (removedIds > 0) {
    warnings.push(
      `removed ${plural(removedIds, 'unsupported contextId')} (not among the supplied memory-context ids) from ${plural(touched, 'finding')}`,
    );
  }
  return findings;
}

function normaliseDispositions(value: unknown, warnings: string[]): Disposition[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    warnings.push(`ignored \`priorFindingDispositions\`: expected an array, got ${describeValue(value)}`);
    return [];
  }
  const dispositions: Disposition[] = [];
  value.forEach((item, index) => {
    const parsed = dispositionSchema.safeParse(item);
    if (parsed.success) dispositions.push(parsed.data);
    else warnings.push(`dropped malformed prior-finding disposition ${index} (${firstIssue(parsed.error)})`);
  });
  return dispositions;
}

function normaliseImportantFiles(value: unknown[], warnings: string[]): ImportantFile[] {
  const files: ImportantFile[] = [];
  let dropped = 0;
  for (const raw of value) {
    // A bare path where `{path, overview}` belongs.
    const item = typeof raw === 'string' && raw.trim() !== '' ? { path: raw.trim(), overview: '' } : raw;
    const parsed = importantFileSchema.safeParse(item);
    if (parsed.success) files.push(parsed.data);
    else dropped++;
  }
  if (dropped > 0)
    warnings.push(
      `dropped ${plural(dropped, 'malformed `importantFiles` entry', 'malformed `importantFiles` entries')}`,
    );
  return files;
}

function normaliseComparison(value: Record<string, unknown>, warnings: string[]): CompetitorComparison {
  const candidate: Record<string, unknown> = {
    available: value.available,
    winner: value.winner,
    summary: value.summary,
    confidence: value.confidence,
  };
  for (const field of COMPETITOR_ARRAY_FIELDS) {
    const items = value[field];
    candidate[field] = Array.isArray(items)
      ? strings(`competitorComparison.${field}`, items, warnings)
      : items;
  }
  const parsed = competitorComparisonSchema.safeParse(candidate);
  if (parsed.success) return parsed.data;
  // Unreachable after the usability check; kept so that a schema change cannot let a bad value through.
  warnings.push(`replaced \`competitorComparison\` by the default (${firstIssue(parsed.error)})`);
  return defaultCompetitorComparison();
}

/**
 * Parses a model reply into a `ReviewOutput`: extracts the JSON object, parses it, applies the shallow
 * usability check of 2.2, then normalises. Normalisation never fails: it defaults a missing
 * `priorFindingDispositions` to `[]`, drops malformed findings, dispositions, important files and
 * non-string array elements, removes `contextIds` that were not supplied, and ignores unknown fields; each
 * change is reported in `warnings`. An `error` is written to be shown to the model (see `repairPrompt`).
 */
export function parseReviewOutput(
  text: string,
  opts: { suppliedContextIds: ReadonlySet<string> },
): ParsedReview {
  const { candidate, unterminatedAt } = scan(text);
  if (candidate === null) {
    const error =
      unterminatedAt !== null
        ? `The JSON object starting at character ${unterminatedAt} of the response is never closed (missing "}"; the response may have been cut off).`
        : text.trim() === ''
          ? 'The response is empty; it contains no JSON object.'
          : 'The response contains no JSON object.';
    return { ok: false, error, raw: text };
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
      return { ok: false, error: `The JSON object in the response is not valid JSON: ${reason}.`, raw: text };
    }
  }
  const usability = isUsableReviewOutput(value);
  if (!usability.usable) {
    return {
      ok: false,
      error: `The JSON object is not a usable review output: ${usability.problems.join('; ')}.`,
      raw: text,
    };
  }
  const input = value as Record<string, unknown>;
  const unreadable: UnreadableFinding[] = [];
  const unknown = Object.keys(input).filter(
    (key) => !(REVIEW_OUTPUT_FIELDS as readonly string[]).includes(key),
  );
  if (unknown.length > 0) warnings.push(`ignored unknown field(s): ${unknown.join(', ')}`);

  const output: ReviewOutput = {
    overview: input.overview as string,
    summary: input.summary as string,
    verdict: input.verdict as ReviewOutput['verdict'],
    confidenceScore: input.confidenceScore as number,
    bulletHighlights: strings('bulletHighlights', input.bulletHighlights as unknown[], warnings),
    reasoning: input.reasoning as string,
    mergeVerdict: input.mergeVerdict as string,
    importantFiles: normaliseImportantFiles(input.importantFiles as unknown[], warnings),
    findings: normaliseFindings(input.findings as unknown[], opts.suppliedContextIds, warnings, unreadable),
    priorFindingDispositions: normaliseDispositions(input.priorFindingDispositions, warnings),
    missingValidations: strings('missingValidations', input.missingValidations as unknown[], warnings),
    crossRepoImpact: strings('crossRepoImpact', input.crossRepoImpact as unknown[], warnings),
    sequenceDiagram: input.sequenceDiagram as string,
    competitorComparison: normaliseComparison(
      input.competitorComparison as Record<string, unknown>,
      warnings,
    ),
  };
  return { ok: true, output, warnings, unreadable };
}

/**
 * The follow-up message of the single repair attempt: the precise error and what to send instead. The
 * caller sends it after the model's unusable reply and parses the answer once more.
 */
export function repairPrompt(error: string): string {
  return [
    `Your previous response could not be used. ${error}`,
    '',
    'Reply again with exactly one JSON object and nothing else: no prose and no Markdown fence.',
    `It must contain all fourteen fields: ${REVIEW_OUTPUT_FIELDS.join(', ')}.`,
    '`overview`, `summary` and `mergeVerdict` are non-blank strings; `reasoning` and `sequenceDiagram` are strings;',
    '`verdict` is "clear" or "needs-attention"; `confidenceScore` is an integer from 1 to 5;',
    '`bulletHighlights`, `importantFiles`, `findings`, `priorFindingDispositions`, `missingValidations` and',
    '`crossRepoImpact` are arrays (empty when nothing applies); `competitorComparison` is an object with',
    '`available` (boolean), `winner` ("own", "competitor", "split" or "unclear"), `summary` (string),',
    `\`confidence\` (integer 1 to 5) and the arrays ${COMPETITOR_ARRAY_FIELDS.map((f) => `\`${f}\``).join(', ')}.`,
    'Each finding has severity ("blocker", "high", "medium" or "low"), category, path, title, body and contextIds, and',
    'optionally line, endLine (new-side line numbers of the diff), suggestion (replacement text) and confidence (0 to 1).',
  ].join('\n');
}

/**
 * The repair message for a usable answer with findings that cannot be used: which ones and why, and
 * that the whole object is to be sent again.
 */
export function repairFindingsPrompt(unreadable: readonly UnreadableFinding[]): string {
  const shown = unreadable.slice(0, 20).map((u) => `- ${u.reason}`);
  if (unreadable.length > 20) shown.push(`- and ${unreadable.length - 20} more`);
  return [
    `${unreadable.length} finding(s) of your previous response could not be used:`,
    ...shown,
    '',
    'Reply again with the whole JSON object and nothing else. Every finding is an object with a non-empty `path`',
    '(a changed file), a non-empty `title`, `severity` ("blocker", "high", "medium" or "low"), `category`, `body` and',
    '`contextIds`; drop a finding you cannot place in a file.',
  ].join('\n');
}
