import { z } from 'zod';
import { hasControlCharacter } from '../http/text.js';

/**
 * The filter-rule grammar of operator-api 2.10, shared by `filters`, `autoApprove.filters` and
 * `execution.filters` of the review policy document.
 *
 * A rule list matches a PR when any rule matches; a rule matches when all its conditions match (see
 * `matcher.ts`). A rule is `{ conditions: [{ field, operator, values }] }` (NAMES.md); for `draft`,
 * `values` is absent or empty and parses to `[]`.
 *
 * Decisions where the spec is silent:
 * - Every field except `draft` needs at least one value (an empty `is` list could never match).
 * - `filesChanged` takes exactly one value: a string of decimal digits (no sign, no exponent) from 0 to
 *   100000; leading zeros are accepted (`"007"` is 7).
 * - `repository` values are `owner/repo` with GitHub's characters (`A-Z a-z 0-9 _ . -`); the repository
 *   name cannot be `.` or `..`.
 * - Branch and path globs are case-sensitive (git refs and paths are); label, author and repository
 *   comparisons and `title`/`keyword` substrings are case-insensitive.
 */

export const FILTER_LIMITS = {
  maxRules: 50,
  minConditions: 1,
  maxConditions: 20,
  maxValues: 50,
  minValueLength: 1,
  maxValueLength: 500,
  maxFilesChanged: 100000,
} as const;

/** The policy's own wording of the control-character rule (tab, newline and CR are allowed). */
export const CONTROL_CHARACTER_MESSAGE = 'control characters are not allowed';

/**
 * A string of the policy document: at most `max` characters (and at least `min`), no control characters
 * (operator-api 2.10 rule 4 applies to every string of the document).
 */
export function policyText(max: number, min = 0) {
  let schema = z.string().max(max, `must be at most ${max} characters`);
  if (min > 0) schema = schema.min(min, `must be at least ${min} character${min === 1 ? '' : 's'}`);
  return schema.refine((s) => !hasControlCharacter(s, { whitespace: true }), CONTROL_CHARACTER_MESSAGE);
}

const GLOB_CHARACTERS = /^[A-Za-z0-9_.@ /?*-]*$/;

/**
 * Why `glob` is not a safe glob, or null when it is. Allowed characters: `A-Z a-z 0-9 _ . @ space / ? * -`.
 * Rejected: empty segments (`a//b`, a leading or trailing `/`), `.` and `..` segments, and `**` glued to
 * other text (`a**`, `**b`, `***`); a standalone `**` segment is allowed.
 */
export function globProblem(glob: string): string | null {
  if (!GLOB_CHARACTERS.test(glob)) return 'glob may only contain A-Z a-z 0-9 _ . @ space / ? * -';
  for (const segment of glob.split('/')) {
    if (segment === '') return 'glob has an empty segment';
    if (segment === '.' || segment === '..') return "glob has a '.' or '..' segment";
    if (segment !== '**' && segment.includes('**')) return "'**' must be a whole segment";
  }
  return null;
}

const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/([A-Za-z0-9_.-]+)$/;

function repositoryProblem(value: string): string | null {
  const match = REPOSITORY.exec(value);
  if (!match || match[1] === '.' || match[1] === '..') return 'must be a repository as owner/repo';
  return null;
}

function filesChangedProblem(value: string): string | null {
  if (!/^[0-9]+$/.test(value) || Number(value) > FILTER_LIMITS.maxFilesChanged) {
    return `must be an integer string from 0 to ${FILTER_LIMITS.maxFilesChanged}`;
  }
  return null;
}

const filterValue = policyText(FILTER_LIMITS.maxValueLength, FILTER_LIMITS.minValueLength);

function checkedValue(problem: (value: string) => string | null) {
  return filterValue.superRefine((value, ctx) => {
    const message = problem(value);
    if (message !== null) ctx.addIssue({ code: 'custom', message });
  });
}

const globValue = checkedValue(globProblem);

function valueList<T extends z.ZodType>(value: T) {
  return z
    .array(value)
    .min(1, 'needs at least one value')
    .max(FILTER_LIMITS.maxValues, `at most ${FILTER_LIMITS.maxValues} values`);
}

function operatorOf<const O extends readonly [string, ...string[]]>(field: string, operators: O) {
  return z.enum(operators, { error: () => `operator for ${field} must be one of ${operators.join(', ')}` });
}

const EQUALITY = ['is', 'is_not'] as const;
const SUBSTRING = ['contains', 'not_contains'] as const;
const COUNT = ['at_most', 'more_than'] as const;

function condition<
  const F extends string,
  const O extends readonly [string, ...string[]],
  V extends z.ZodType,
>(field: F, operators: O, values: V) {
  return z.strictObject({ field: z.literal(field), operator: operatorOf(field, operators), values });
}

export const FILTER_FIELDS = [
  'label',
  'author',
  'repository',
  'targetBranch',
  'sourceBranch',
  'path',
  'title',
  'keyword',
  'draft',
  'filesChanged',
] as const;

export const filterConditionSchema = z.discriminatedUnion(
  'field',
  [
    condition('label', EQUALITY, valueList(filterValue)),
    condition('author', EQUALITY, valueList(filterValue)),
    condition('repository', EQUALITY, valueList(checkedValue(repositoryProblem))),
    condition('targetBranch', EQUALITY, valueList(globValue)),
    condition('sourceBranch', EQUALITY, valueList(globValue)),
    condition('path', EQUALITY, valueList(globValue)),
    condition('title', SUBSTRING, valueList(filterValue)),
    condition('keyword', SUBSTRING, valueList(filterValue)),
    condition(
      'draft',
      EQUALITY,
      z
        .array(filterValue)
        .max(0, 'draft takes no values')
        .default(() => []),
    ),
    condition(
      'filesChanged',
      COUNT,
      z.array(checkedValue(filesChangedProblem)).length(1, 'filesChanged takes exactly one value'),
    ),
  ],
  { error: () => `field must be one of ${FILTER_FIELDS.join(', ')}` },
);

export const filterRuleSchema = z.strictObject({
  conditions: z
    .array(filterConditionSchema)
    .min(FILTER_LIMITS.minConditions, `a rule needs at least ${FILTER_LIMITS.minConditions} condition`)
    .max(FILTER_LIMITS.maxConditions, `a rule has at most ${FILTER_LIMITS.maxConditions} conditions`),
});

export const filterRuleListSchema = z
  .array(filterRuleSchema)
  .max(FILTER_LIMITS.maxRules, `at most ${FILTER_LIMITS.maxRules} rules`);

export type FilterCondition = z.infer<typeof filterConditionSchema>;
export type FilterRule = z.infer<typeof filterRuleSchema>;
