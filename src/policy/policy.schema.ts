import { z } from 'zod';
import { filterRuleListSchema, policyText } from './filters.schema.js';

/**
 * The workspace review policy document of operator-api 2.9, nested as NAMES.md decides:
 * `{ autoEnableNewRepos, ..., summary: { summary: {enabled, collapsible, defaultOpen}, ... },
 * statusChecks: {...}, autoApprove: {...}, execution: {...}, memoryRuleCreation, pausedAuthors,
 * monthlyModelBudgetUsd }`.
 *
 * Strict at every level (unknown keys are rejected) and fully defaulted: `reviewPolicySchema.parse({})`
 * is the default document. The `revision` lives beside the document (`{ revision, settings }`), not in it.
 *
 * Decisions where the spec is silent:
 * - Summary sections that are not collapsible default to `defaultOpen: true` (a non-collapsible section is
 *   always shown open, so the flag only matters once an operator makes it collapsible).
 * - `pausedAuthors` entries are trimmed, lowercased and deduplicated (first occurrence kept); the limit of
 *   500 applies to the list as sent. An entry is 1 to 100 characters.
 */

export const POLICY_MAX_BODY_BYTES = 256 * 1024;

export const POLICY_LIMITS = {
  fileChangeLimitMin: 1,
  fileChangeLimitMax: 100000,
  customInstructions: 20000,
  autoApproveInstructions: 20000,
  commentHeader: 500,
  requiredConfidenceMin: 0,
  requiredConfidenceMax: 5,
  pausedAuthors: 500,
  pausedAuthorLength: 100,
  monthlyModelBudgetUsdMax: 1e9,
} as const;

export const STRICTNESS_LEVELS = ['low', 'medium', 'high'] as const;
export const AUTO_APPROVE_MAX_RISKS = ['low', 'medium', 'high', 'critical'] as const;
export const EXECUTION_MODES = ['always', 'never', 'filters'] as const;
export const MEMORY_RULE_CREATION = ['ADMINS_ONLY', 'MEMBERS', 'EVERYONE'] as const;
export const SUMMARY_SECTIONS = ['summary', 'confidence', 'files', 'diagram', 'outsideDiff'] as const;

function summarySection(collapsible: boolean, defaultOpen: boolean) {
  return z
    .strictObject({
      enabled: z.boolean().default(true),
      collapsible: z.boolean().default(collapsible),
      defaultOpen: z.boolean().default(defaultOpen),
    })
    .prefault({});
}

const ruleList = () => filterRuleListSchema.default(() => []);

function normalizeLogins(logins: string[]): string[] {
  return [...new Set(logins.map((login) => login.trim().toLowerCase()))];
}

const pausedAuthorSchema = policyText(POLICY_LIMITS.pausedAuthorLength).refine(
  (login) => login.trim().length > 0,
  'must not be empty',
);

export const reviewPolicySchema = z.strictObject({
  autoEnableNewRepos: z.boolean().default(false),
  autoReviewNewCommits: z.boolean().default(true),
  reviewDrafts: z.boolean().default(false),
  fileChangeLimit: z
    .int()
    .min(POLICY_LIMITS.fileChangeLimitMin)
    .max(POLICY_LIMITS.fileChangeLimitMax)
    .default(500),
  filters: ruleList(),
  customInstructions: policyText(POLICY_LIMITS.customInstructions).default(''),
  strictness: z.enum(STRICTNESS_LEVELS).default('low'),
  commentHeader: policyText(POLICY_LIMITS.commentHeader).default(''),
  updatePrDescription: z.boolean().default(false),
  promptToFix: z.boolean().default(false),
  featureTips: z.boolean().default(false),
  summary: z
    .strictObject({
      summary: summarySection(false, true),
      confidence: summarySection(false, true),
      files: summarySection(false, true),
      diagram: summarySection(false, true),
      outsideDiff: summarySection(true, false),
    })
    .prefault({}),
  statusChecks: z
    .strictObject({
      enabled: z.boolean().default(true),
      requiredConfidence: z
        .int()
        .min(POLICY_LIMITS.requiredConfidenceMin)
        .max(POLICY_LIMITS.requiredConfidenceMax)
        .default(0),
      postStatusComments: z.boolean().default(false),
    })
    .prefault({}),
  autoApprove: z
    .strictObject({
      enabled: z.boolean().default(false),
      maxRisk: z.enum(AUTO_APPROVE_MAX_RISKS).default('low'),
      instructions: policyText(POLICY_LIMITS.autoApproveInstructions).default(''),
      filters: ruleList(),
    })
    .prefault({}),
  execution: z
    .strictObject({
      mode: z.enum(EXECUTION_MODES).default('always'),
      filters: ruleList(),
    })
    .prefault({}),
  memoryRuleCreation: z.enum(MEMORY_RULE_CREATION).default('ADMINS_ONLY'),
  pausedAuthors: z
    .array(pausedAuthorSchema)
    .max(POLICY_LIMITS.pausedAuthors, `at most ${POLICY_LIMITS.pausedAuthors} logins`)
    .transform(normalizeLogins)
    .default(() => []),
  monthlyModelBudgetUsd: z
    .number()
    .min(0)
    .max(POLICY_LIMITS.monthlyModelBudgetUsdMax)
    .nullable()
    .default(null),
});

export type ReviewPolicy = z.infer<typeof reviewPolicySchema>;
export type SummarySectionName = (typeof SUMMARY_SECTIONS)[number];
export type SummarySection = ReviewPolicy['summary'][SummarySectionName];

/** A fresh (mutable) copy of the default document. */
export function defaultReviewPolicy(): ReviewPolicy {
  return reviewPolicySchema.parse({});
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The default document, deeply frozen; use `defaultReviewPolicy()` for a copy to change. */
export const DEFAULT_REVIEW_POLICY: ReviewPolicy = deepFreeze(defaultReviewPolicy());
