import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The standalone repository config of review-engine 2.7, from `.github/verdict.yml`. */
export const repoConfigSchema = z
  .object({
    enabled: z.boolean().default(true),
    review: z
      .object({ auto: z.boolean().default(true), onDraft: z.boolean().default(false) })
      .strict()
      .default({ auto: true, onDraft: false }),
    branches: z
      .object({
        include: z.array(z.string().min(1)).default(['main', 'dev']),
        exclude: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ include: ['main', 'dev'], exclude: [] }),
    manual: z
      .object({
        enabled: z.boolean().default(true),
        allowAssociations: z
          .array(
            z
              .string()
              .min(1)
              .transform((s) => s.toUpperCase()),
          )
          .default(['OWNER', 'MEMBER', 'COLLABORATOR']),
        allowUsers: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ enabled: true, allowAssociations: ['OWNER', 'MEMBER', 'COLLABORATOR'], allowUsers: [] }),
  })
  .strict();

export type RepoConfig = z.infer<typeof repoConfigSchema>;
export const DEFAULT_REPO_CONFIG: RepoConfig = repoConfigSchema.parse({});

export type RepoConfigResult = { config: RepoConfig; error: null } | { config: RepoConfig; error: string };

/** Absent file (null) → defaults; invalid → defaults plus a message naming the dotted path. */
export function resolveRepoConfig(raw: unknown): RepoConfigResult {
  if (raw === null || raw === undefined) return { config: DEFAULT_REPO_CONFIG, error: null };
  const parsed = repoConfigSchema.safeParse(raw);
  if (parsed.success) return { config: parsed.data, error: null };
  const issue = parsed.error.issues[0]!;
  const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
  const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
  return { config: DEFAULT_REPO_CONFIG, error: `${path}: ${issue.message}${keys}` };
}

/** Exact names, or globs with `*` (not across `/`) and `**`. */
function branchMatches(pattern: string, branch: string): boolean {
  if (!pattern.includes('*')) return pattern === branch;
  const re = pattern
    .split(/(\*\*|\*)/)
    .map((part) =>
      part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${re}$`).test(branch);
}

export function baseBranchIncluded(config: RepoConfig, baseRef: string): boolean {
  return (
    config.branches.include.some((p) => branchMatches(p, baseRef)) &&
    !config.branches.exclude.some((p) => branchMatches(p, baseRef))
  );
}

export function autoReviewDecision(
  config: RepoConfig,
  pr: { baseRef: string; draft: boolean },
): { ok: true } | { ok: false; reason: 'auto_review_disabled'; detail: string } {
  if (!config.enabled)
    return {
      ok: false,
      reason: 'auto_review_disabled',
      detail: 'repository disabled in .github/verdict.yml',
    };
  if (!config.review.auto)
    return { ok: false, reason: 'auto_review_disabled', detail: 'review.auto is false' };
  if (!baseBranchIncluded(config, pr.baseRef)) {
    return {
      ok: false,
      reason: 'auto_review_disabled',
      detail: `base branch ${pr.baseRef} is not in branches.include`,
    };
  }
  if (pr.draft && !config.review.onDraft)
    return { ok: false, reason: 'auto_review_disabled', detail: 'draft PR and review.onDraft is false' };
  return { ok: true };
}

export function configErrorFingerprint(error: string): string {
  return createHash('sha256').update(error).digest('hex').slice(0, 16);
}
