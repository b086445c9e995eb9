import { createHash } from 'node:crypto';
import { globMatch } from '../policy/matcher.js';
import { z } from 'zod';

/**
 * The standalone repository config of review-engine 2.7, read from `.github/verdict.yml` (through Probot's
 * `context.config()`, which also follows `_extends` and removes that key).
 *
 * Every key is optional and defaults as the spec says; unknown keys are rejected at every level, so a typo
 * (`onDraft` spelled `on_draft`) is reported instead of silently ignored. Leniency is limited to what cannot
 * change the meaning: `manual.allowAssociations` entries are trimmed and upper-cased, `manual.allowUsers`
 * entries are trimmed and lose a leading `@`. Nothing else is coerced: a single string where a list is
 * expected (`include: main`) and a quoted boolean (`auto: "false"`) are errors, with a message saying how to
 * write the value.
 */

/** The `author_association` values GitHub sends on comments. */
export const GITHUB_AUTHOR_ASSOCIATIONS = [
  'OWNER',
  'MEMBER',
  'COLLABORATOR',
  'CONTRIBUTOR',
  'FIRST_TIME_CONTRIBUTOR',
  'FIRST_TIMER',
  'MANNEQUIN',
  'NONE',
] as const;

const branchPattern = z.string().min(1);

/** The most independent review passes `review.samples` may ask for (each costs a whole review). */
export const MAX_REVIEW_SAMPLES = 5;

/**
 * `review.verification` (NAMES.md "Verification of findings"): `false` turns the stage off for the
 * repository, `true` on (also for codex, where it is off by default); a mapping sets `enabled` and the
 * `threshold` (0-100) a verified finding needs to be posted.
 */
const verificationSchema = z
  .object({
    enabled: z.boolean().optional(),
    threshold: z.number().int().min(0).max(100).optional(),
  })
  .strict();

const reviewSchema = z
  .object({
    auto: z.boolean().default(true),
    onDraft: z.boolean().default(false),
    /** Review only what changed since the last reviewed head when that head is an ancestor (NAMES.md). */
    incremental: z.boolean().default(true),
    /** Hide earlier Verdict review bodies on the PR as outdated when a new review is posted. */
    hideOutdated: z.boolean().default(true),
    verification: z.union([z.boolean(), verificationSchema]).optional(),
    /**
     * Independent review passes (1 to 5, default 1): a finding is kept when it recurs in at least half of
     * them, rounded up (docs/review-engine.md, "Agreement across samples").
     */
    samples: z.number().int().min(1).max(MAX_REVIEW_SAMPLES).default(1),
  })
  .strict();

const branchesSchema = z
  .object({
    /**
     * Base branches that get automatic reviews: exact names, or globs (see `baseBranchIncluded`). Absent:
     * the default of `reviewedBranches` (`main`, `dev` and the repository's default branch); a list given
     * here replaces that default entirely.
     */
    include: z.array(branchPattern).optional(),
    /** Base branches never reviewed automatically, even when `include` matches. */
    exclude: z.array(branchPattern).default([]),
  })
  .strict();

const manualSchema = z
  .object({
    enabled: z.boolean().default(true),
    allowAssociations: z
      .array(z.string().trim().toUpperCase().pipe(z.enum(GITHUB_AUTHOR_ASSOCIATIONS)))
      .default(['OWNER', 'MEMBER', 'COLLABORATOR']),
    allowUsers: z
      .array(
        z
          .string()
          .trim()
          .transform((login) => login.replace(/^@/, ''))
          .pipe(z.string().min(1)),
      )
      .default([]),
  })
  .strict();

/**
 * `validation.commands`: the repository's own executable validation configuration (issue 26). Verdict runs
 * these instead of the detected standard scripts only for a repository the operator trusts
 * (`VERDICT_VALIDATION_TRUSTED_REPOS`); otherwise the sandbox refuses them (`REFUSED bubblewrap:
 * repo-committed config untrusted`). Each is an argv, run without a shell.
 */
const validationSchema = z
  .object({
    commands: z
      .array(
        z
          .object({
            check: z.enum(['test', 'typecheck', 'lint', 'build']),
            run: z.array(z.string().min(1).max(500)).min(1).max(50),
          })
          .strict(),
      )
      .max(10)
      .default([]),
  })
  .strict();

export const repoConfigSchema = z
  .object({
    enabled: z.boolean().default(true),
    review: reviewSchema.prefault({}),
    branches: branchesSchema.prefault({}),
    manual: manualSchema.prefault({}),
    validation: validationSchema.optional(),
  })
  .strict();

export type RepoConfig = z.infer<typeof repoConfigSchema>;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The spec defaults (frozen; `resolveRepoConfig` hands out fresh copies). */
export const DEFAULT_REPO_CONFIG: RepoConfig = deepFreeze(repoConfigSchema.parse({}));

export type RepoConfigResult =
  { config: RepoConfig; error: null } | { config: RepoConfig /* the defaults */; error: string };

/** Allowed keys per object path, for "unknown key" messages. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': Object.keys(repoConfigSchema.shape),
  review: Object.keys(reviewSchema.shape),
  'review.verification': Object.keys(verificationSchema.shape),
  branches: Object.keys(branchesSchema.shape),
  manual: Object.keys(manualSchema.shape),
};

const MAX_REPORTED_ISSUES = 10;

/**
 * `raw` is what `context.config('verdict.yml')` returned: `null` (or `undefined`) when there is no file →
 * defaults and no error; an empty file arrives as `{}` → defaults. An invalid file → the defaults plus one
 * message listing every problem (`; `-separated, at most 10), each starting with its dotted path, for example
 * `review.auto: expected true or false, received the string "yes" (write true or false without quotes)`.
 * The message is deterministic for a given file, so `configErrorFingerprint` reports it once.
 */
export function resolveRepoConfig(raw: unknown): RepoConfigResult {
  if (raw === null || raw === undefined) return { config: repoConfigSchema.parse({}), error: null };
  const parsed = repoConfigSchema.safeParse(raw);
  if (parsed.success) return { config: parsed.data, error: null };
  const messages = parsed.error.issues.flatMap((issue) => describeIssue(issue, raw));
  const shown = messages.slice(0, MAX_REPORTED_ISSUES);
  if (messages.length > shown.length) shown.push(`and ${messages.length - shown.length} more`);
  return { config: repoConfigSchema.parse({}), error: shown.join('; ') };
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out.length > 0 ? `.${String(segment)}` : String(segment);
  }
  return out.length > 0 ? out : '(root)';
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

const EXPECTED_WORDS: Record<string, string> = {
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping of settings',
  string: 'a string',
};

/** A did-you-mean for keys that differ only in case, `_` or `-` (`ondraft`, `on_draft`, `allow-users`). */
function suggestKey(key: string, known: readonly string[]): string | undefined {
  const squash = (s: string) => s.replace(/[-_]/g, '').toLowerCase();
  return known.find((k) => squash(k) === squash(key));
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string[] {
  const path = formatPath(issue.path);
  const value = valueAt(raw, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const parent = issue.path.filter((s) => typeof s === 'string').join('.');
      const known = KNOWN_KEYS[parent] ?? [];
      return issue.keys.map((key) => {
        const suggestion = suggestKey(key, known);
        const hint =
          suggestion !== undefined ? `did you mean ${suggestion}?` : `allowed: ${known.join(', ')}`;
        return `${formatPath([...issue.path, key])}: unknown key (${hint})`;
      });
    }
    case 'invalid_type': {
      const expected = EXPECTED_WORDS[issue.expected] ?? issue.expected;
      let hint = '';
      if (issue.expected === 'array' && typeof value === 'string')
        hint = ` (write a list, even for one entry: [${value}])`;
      else if (issue.expected === 'boolean' && typeof value === 'string')
        hint = ' (write true or false without quotes)';
      else if (value === null) hint = ' (a key written without a value; remove it to use the default)';
      return [`${path}: expected ${expected}, received ${describeValue(value)}${hint}`];
    }
    case 'invalid_value':
      if (issue.path.includes('allowAssociations')) {
        return [
          `${path}: ${describeValue(value)} is not a GitHub author association ` +
            `(one of ${GITHUB_AUTHOR_ASSOCIATIONS.join(', ')})`,
        ];
      }
      return [`${path}: ${issue.message}`];
    case 'too_small':
      if (issue.origin === 'string') return [`${path}: must not be empty`];
      return [`${path}: ${issue.message}`];
    default:
      return [`${path}: ${issue.message}`];
  }
}

/** `refs/heads/main` and `main` name the same base branch. */
function branchName(ref: string): string {
  return ref.replace(/^refs\/heads\//, '');
}

/**
 * Branch patterns: a name without `*` matches exactly (case-sensitive, as git). `*` matches any characters
 * except `/`, `**` matches any characters including `/`: `release/*` matches `release/1.2` but not
 * `release/a/b`; `release/**` matches both. No other glob syntax (`?`, `[...]`, `{a,b}` are literal).
 */
/** One glob grammar for branches and paths: the policy matcher's (linear time, no regular expressions). */
function branchMatches(pattern: string, branch: string): boolean {
  return globMatch(branchName(pattern), branch);
}

/** The spec's default base branches (review-engine 2.7); the repository's default branch joins them. */
export const DEFAULT_BASE_BRANCHES: readonly string[] = Object.freeze(['main', 'dev']);

/** The base branches a repository reviews automatically, and where the include list came from. */
export type ReviewedBranches = {
  include: string[];
  exclude: string[];
  /** `operator`: the operator configuration's list; `file`: `.github/verdict.yml`'s; `default` otherwise. */
  source: 'operator' | 'file' | 'default';
};

/** The `branches` section of an operator repository configuration (operator-api 2.8), as stored. */
export type OperatorBranches = { include?: unknown; exclude?: unknown } | null | undefined;

const stringList = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;

/**
 * NAMES.md "The default branch is reviewed": without an explicit `branches.include` the base branches
 * reviewed are `main`, `dev` and the repository's own default branch (`repository.default_branch`); an
 * explicit list replaces that default entirely. Where the operator configuration and `.github/verdict.yml`
 * both set `include` (or `exclude`), the operator's wins.
 */
export function reviewedBranches(
  config: RepoConfig,
  opts: { defaultBranch?: string | null; operator?: OperatorBranches } = {},
): ReviewedBranches {
  const operatorInclude = stringList(opts.operator?.include);
  const operatorExclude = stringList(opts.operator?.exclude);
  const exclude = operatorExclude ?? config.branches.exclude;
  if (operatorInclude) return { include: operatorInclude, exclude, source: 'operator' };
  if (config.branches.include) return { include: config.branches.include, exclude, source: 'file' };
  const fallback = [...DEFAULT_BASE_BRANCHES];
  const own = opts.defaultBranch ? branchName(opts.defaultBranch) : '';
  if (own && !fallback.includes(own)) fallback.push(own);
  return { include: fallback, exclude, source: 'default' };
}

/** The base branch must match the include list (the spec: "base branch must be listed") and no exclude. */
export function baseBranchIncluded(branches: Omit<ReviewedBranches, 'source'>, baseRef: string): boolean {
  const branch = branchName(baseRef);
  if (branch.length === 0) return false;
  return (
    branches.include.some((p) => branchMatches(p, branch)) &&
    !branches.exclude.some((p) => branchMatches(p, branch))
  );
}

/**
 * Whether an automatic (pull_request event) review may run, review-engine 7.2 `auto_review_disabled`. Checked
 * in this order: `enabled`, `review.auto`, the base branch, drafts (`review.onDraft`). Manual commands do not
 * go through this (they bypass the draft check; repository disablement is checked by the caller).
 */
export function autoReviewDecision(
  config: RepoConfig,
  pr: { baseRef: string; draft: boolean; defaultBranch?: string | null },
  operatorBranches?: OperatorBranches,
): { ok: true } | { ok: false; reason: 'auto_review_disabled'; detail: string; hint: string } {
  const refuse = (detail: string, hint: string) => ({
    ok: false as const,
    reason: 'auto_review_disabled' as const,
    detail,
    hint,
  });
  const once = 'comment `@verdict review` to review this pull request once';
  if (!config.enabled) {
    return refuse(
      'repository disabled (enabled: false in .github/verdict.yml)',
      'set `enabled: true` in `.github/verdict.yml` to have it reviewed',
    );
  }
  if (!config.review.auto) {
    return refuse('review.auto is false', `set \`review.auto: true\` in \`.github/verdict.yml\`, or ${once}`);
  }
  const branches = reviewedBranches(config, { defaultBranch: pr.defaultBranch, operator: operatorBranches });
  if (!baseBranchIncluded(branches, pr.baseRef)) {
    const branch = branchName(pr.baseRef);
    const excluded =
      branches.include.some((p) => branchMatches(p, branch)) &&
      branches.exclude.some((p) => branchMatches(p, branch));
    const where = { operator: ' (operator configuration)', file: '', default: ' (the default)' }[
      branches.source
    ];
    const home = branches.source === 'operator' ? 'the operator configuration' : '`.github/verdict.yml`';
    return refuse(
      excluded
        ? `base branch "${branch}" is excluded by branches.exclude`
        : `base branch "${branch}" is not listed in branches.include${where} (${branches.include.join(', ') || 'empty'})`,
      excluded
        ? `remove it from \`branches.exclude\` in ${home} to review pull requests into it, or ${once}`
        : `add it to \`branches.include\` in ${home} to review pull requests into it, or ${once}`,
    );
  }
  if (pr.draft && !config.review.onDraft) {
    return refuse(
      'draft pull request and review.onDraft is false',
      `mark the pull request ready for review, set \`review.onDraft: true\` in \`.github/verdict.yml\`, or ${once}`,
    );
  }
  return { ok: true };
}

/** 16 hex characters of the SHA-256 of the message: an invalid file is reported once per distinct error. */
export function configErrorFingerprint(error: string): string {
  return createHash('sha256').update(error, 'utf8').digest('hex').slice(0, 16);
}
