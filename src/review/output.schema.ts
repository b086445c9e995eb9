import { z } from 'zod';

/**
 * The review output object the model is asked for (review-engine 2.2 to 2.5).
 *
 * These are the strict shapes. The runtime accepts less than this (the shallow usability check of 2.2 in
 * `parse-json.ts`) and normalises what it accepts into a `ReviewOutput` (`parse-output.ts`).
 */

export const VERDICTS = ['clear', 'needs-attention'] as const;
export const FINDING_SEVERITIES = ['blocker', 'high', 'medium', 'low'] as const;

/** A severity's rank, most severe first (blocker 0 … low 3); a word that is not a severity ranks after low. */
export function severityRank(severity: string): number {
  const rank = (FINDING_SEVERITIES as readonly string[]).indexOf(severity);
  return rank === -1 ? FINDING_SEVERITIES.length : rank;
}
export const DISPOSITION_KINDS = ['resolved', 'false_positive', 'no_longer_applicable'] as const;
export const COMPETITOR_WINNERS = ['own', 'competitor', 'split', 'unclear'] as const;

/** The six string-array fields of `competitorComparison`. */
export const COMPETITOR_ARRAY_FIELDS = [
  'agreements',
  'competitorMisses',
  'ownMisses',
  'strongerCompetitorFindings',
  'strongerOwnFindings',
  'actionItems',
] as const;

const nonBlank = (field: string) =>
  z.string().refine((value) => value.trim().length > 0, { message: `${field} must not be blank` });

/** An integer 1 to 5 (analyst confidence, competitor-comparison confidence). */
const oneToFive = z.number().int().min(1).max(5);

/** The four optional keys NAMES.md adds to a finding ("Line anchors and suggestions on findings"). */
export const FINDING_EXTENSION_FIELDS = ['line', 'endLine', 'suggestion', 'confidence'] as const;

const lineNumber = z.number().int().min(1);

/**
 * 2.3 plus NAMES.md's extension: the six required keys, and optionally `line`, `endLine` (new-side lines
 * of the file's diff, `line` <= `endLine`), `suggestion` (replacement text for those lines) and
 * `confidence` (0 to 1). The extension keys may be null (strict structured outputs send null for an
 * absent optional field). Any other key is removed by parsing (zod strips unknown keys), never the
 * finding itself.
 */
export const findingSchema = z.object({
  severity: z.enum(FINDING_SEVERITIES),
  category: z.string(),
  path: z.string(),
  title: z.string(),
  body: z.string(),
  contextIds: z.array(z.string()),
  line: lineNumber.nullable().optional(),
  endLine: lineNumber.nullable().optional(),
  suggestion: z.string().nullable().optional(),
  confidence: z.number().min(0).max(1).nullable().optional(),
});

/** One `evidence` item of a disposition: current code quoted at the current head. */
export const dispositionEvidenceSchema = z.strictObject({
  headSha: z.string(),
  path: z.string(),
  quote: z.string(),
});

/** 2.4: one `priorFindingDispositions[]` item. */
export const dispositionSchema = z.strictObject({
  priorReviewKey: z.string(),
  fingerprint: z.string(),
  disposition: z.enum(DISPOSITION_KINDS),
  explanation: z.string(),
  evidence: z.array(dispositionEvidenceSchema),
});

/** 2.5: all ten keys required. */
export const competitorComparisonSchema = z.strictObject({
  available: z.boolean(),
  winner: z.enum(COMPETITOR_WINNERS),
  summary: z.string(),
  confidence: oneToFive,
  agreements: z.array(z.string()),
  competitorMisses: z.array(z.string()),
  ownMisses: z.array(z.string()),
  strongerCompetitorFindings: z.array(z.string()),
  strongerOwnFindings: z.array(z.string()),
  actionItems: z.array(z.string()),
});

export const importantFileSchema = z.strictObject({
  path: z.string(),
  overview: z.string(),
});

/** 2.2: the fourteen-field object. `overview`, `summary`, `mergeVerdict` are non-blank. */
export const reviewOutputSchema = z.strictObject({
  overview: nonBlank('overview'),
  summary: nonBlank('summary'),
  verdict: z.enum(VERDICTS),
  confidenceScore: oneToFive,
  bulletHighlights: z.array(z.string()),
  reasoning: z.string(),
  mergeVerdict: nonBlank('mergeVerdict'),
  importantFiles: z.array(importantFileSchema),
  findings: z.array(findingSchema),
  priorFindingDispositions: z.array(dispositionSchema),
  missingValidations: z.array(z.string()),
  crossRepoImpact: z.array(z.string()),
  sequenceDiagram: z.string(),
  competitorComparison: competitorComparisonSchema,
});

export type Finding = z.infer<typeof findingSchema>;
export type DispositionEvidence = z.infer<typeof dispositionEvidenceSchema>;
export type Disposition = z.infer<typeof dispositionSchema>;
export type CompetitorComparison = z.infer<typeof competitorComparisonSchema>;
export type ImportantFile = z.infer<typeof importantFileSchema>;
export type ReviewOutput = z.infer<typeof reviewOutputSchema>;

/** The fourteen fields of the review output object, in the order of 2.2. */
export const REVIEW_OUTPUT_FIELDS = Object.keys(reviewOutputSchema.shape) as Array<keyof ReviewOutput>;

export const NO_COMPETITOR_COMPARISON_SUMMARY = 'No competitor review was recorded for this pull request.';

/** The 2.5 default when nothing was recorded: a fresh (mutable) copy, for building an output. */
export function defaultCompetitorComparison(): CompetitorComparison {
  return {
    available: false,
    winner: 'unclear',
    summary: NO_COMPETITOR_COMPARISON_SUMMARY,
    confidence: 1,
    agreements: [],
    competitorMisses: [],
    ownMisses: [],
    strongerCompetitorFindings: [],
    strongerOwnFindings: [],
    actionItems: [],
  };
}

type JsonSchemaNode = Record<string, unknown>;

/**
 * The review output as a JSON Schema for OpenAI structured outputs (`strict: true`): every object has
 * `additionalProperties: false` and lists all its properties as required; no `$schema` key. Zod
 * refinements (the non-blank strings) are not representable and stay runtime checks.
 */
export function reviewOutputJsonSchema(): JsonSchemaNode {
  const strict = strictJsonSchema(reviewOutputSchema);
  // Structured outputs generate properties in schema order: the findings come before the verdict, the
  // confidence and the merge verdict, so that those are written after the evidence, not before it.
  const properties = strict.properties as JsonSchemaNode;
  const ordered: JsonSchemaNode = {};
  for (const key of SCHEMA_ORDER) ordered[key] = properties[key];
  strict.properties = ordered;
  strict.required = [...SCHEMA_ORDER];
  return strict;
}

/** The fourteen fields in the order the schema asks for them (findings first, conclusions last). */
export const SCHEMA_ORDER = [
  'overview',
  'importantFiles',
  'findings',
  'priorFindingDispositions',
  'missingValidations',
  'crossRepoImpact',
  'sequenceDiagram',
  'competitorComparison',
  'summary',
  'bulletHighlights',
  'reasoning',
  'confidenceScore',
  'verdict',
  'mergeVerdict',
] as const satisfies ReadonlyArray<keyof ReviewOutput>;

/**
 * A zod schema as a JSON Schema for strict structured outputs: every object lists all its properties as
 * required and allows no others; no `$schema` key.
 */
export function strictJsonSchema(schema: z.ZodType): JsonSchemaNode {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as JsonSchemaNode;
  delete json.$schema;
  return strictify(json) as JsonSchemaNode;
}

function strictify(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictify);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchemaNode = {};
  for (const [key, value] of Object.entries(node as JsonSchemaNode)) out[key] = strictify(value);
  if (out.type === 'object' || (out.properties !== null && typeof out.properties === 'object')) {
    const properties = (out.properties ?? {}) as JsonSchemaNode;
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}
