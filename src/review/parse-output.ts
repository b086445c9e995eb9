import {
  COMPETITOR_ARRAY_FIELDS,
  FINDING_EXTENSION_FIELDS,
  REVIEW_OUTPUT_FIELDS,
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
import { describeValue, isPlainObject, isUsableReviewOutput, readJsonObject } from './parse-json.js';

/**
 * Reading a model's answer, second half (the first, finding and reading the JSON, is parse-json.ts):
 * normalising a usable answer into a `ReviewOutput` without losing a finding silently, and the messages
 * of the repair attempt.
 */

export type ParsedReview =
  | {
      ok: true;
      output: ReviewOutput;
      warnings: string[];
      /** Findings the model gave that could not be used (no path, no title): counted, never silent. */
      unreadable: UnreadableFinding[];
      /** `contextIds` the findings cited that were not supplied, removed (also said in `warnings`). */
      removedContextIds: number;
    }
  | { ok: false; error: string; raw: string };

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
  removed: { ids: number },
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
  removed.ids += removedIds;
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
  const read = readJsonObject(text);
  if (!read.ok) return { ok: false, error: read.error, raw: text };
  const { value, warnings } = read;
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
  const removed = { ids: 0 };
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
    findings: normaliseFindings(
      input.findings as unknown[],
      opts.suppliedContextIds,
      warnings,
      unreadable,
      removed,
    ),
    priorFindingDispositions: normaliseDispositions(input.priorFindingDispositions, warnings),
    missingValidations: strings('missingValidations', input.missingValidations as unknown[], warnings),
    crossRepoImpact: strings('crossRepoImpact', input.crossRepoImpact as unknown[], warnings),
    sequenceDiagram: input.sequenceDiagram as string,
    competitorComparison: normaliseComparison(
      input.competitorComparison as Record<string, unknown>,
      warnings,
    ),
  };
  return { ok: true, output, warnings, unreadable, removedContextIds: removed.ids };
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
