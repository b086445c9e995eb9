import { autoReviewDecision, type OperatorBranches, type RepoConfig } from '../repo-config/schema.js';
import { matchRules, type PrFacts } from '../policy/matcher.js';
import type { ReviewPolicy } from '../policy/policy.schema.js';

/** Admission refusals of review-engine 7.2 that apply to the Node runtime. */
export type AdmissionReason =
  | 'repository_disabled'
  | 'auto_review_disabled'
  | 'author_paused'
  | 'new_commits_disabled'
  | 'draft_review_disabled'
  | 'file_change_limit'
  | 'filters_not_matched'
  | 'monthly_model_budget_reached'
  | 'model_budget_usage_unavailable';

export type AdmissionDecision =
  | { admitted: true; notes: string[] }
  /** `hint`: what would let it be reviewed, for the check run a refusal completes (one sentence). */
  | { admitted: false; reason: AdmissionReason; detail: string; hint?: string };

/**
 * Triggers that someone asked for, as opposed to a pull_request event: a PR comment command, an operator
 * requeue, and `verdict review` of a local change (`local_review`).
 */
export const MANUAL_TRIGGERS = new Set(['manual_command', 'operator_requeue', 'local_review']);

/** The month's model spend as the usage report sees it. */
export type BudgetUsage =
  | { known: true; costUsd: number }
  /** Telemetry is missing or incomplete (unknown calls), or could not be read. */
  | { known: false; why: string };

export type AdmissionInput = {
  /** The pull_request action (`opened`, `synchronize`, …) or a manual trigger. */
  trigger: string;
  pr: {
    author: string | null;
    draft: boolean;
    baseRef: string | null;
    headRef: string | null;
    /** The repository's default branch as GitHub reports it (`repository.default_branch`), when known. */
    defaultBranch?: string | null;
    title: string | null;
    body: string | null;
    labels: string[] | null;
    /** Changed files, when known (GitHub's `changed_files`, or the listed files). */
    changedFiles: number | null;
    paths: string[] | null;
  };
  repo: {
    fullName: string;
    /** `enabled` of the operator's repository configuration (operator-api 2.8), when set. */
    operatorEnabled: boolean | null;
    /** `branches` of the operator's repository configuration, when set (it wins over the file's). */
    operatorBranches?: OperatorBranches;
    /** The standalone `.github/verdict.yml` as last read (defaults when absent). */
    standalone: RepoConfig;
    /** Whether this repository was ever reviewed before. */
    hasPriorReview: boolean;
  };
  policy: ReviewPolicy;
  /** Only read when the policy sets `monthlyModelBudgetUsd`. */
  budget: () => Promise<BudgetUsage>;
};

/** The facts of a pull request the review filters (and the validation rules) match on. */
export function prFacts(pr: AdmissionInput['pr'], repository: string): PrFacts {
  return {
    labels: pr.labels,
    author: pr.author,
    repository,
    targetBranch: pr.baseRef,
    sourceBranch: pr.headRef,
    paths: pr.paths,
    title: pr.title,
    body: pr.body,
    draft: pr.draft,
    filesChanged: pr.changedFiles,
  };
}

/**
 * Decides, before any model call, whether a review may run (review-engine 7.2). Checked in this order:
 * repository disablement; the standalone config (automatic reviews only); paused authors (manual commands
 * do not bypass it); new commits (synchronize only); drafts, file count and review filters (manual
 * commands bypass these three); the monthly model budget. A filter decision deferred for missing metadata
 * admits the review, with a note.
 */
export async function admit(input: AdmissionInput): Promise<AdmissionDecision> {
  const { pr, repo, policy } = input;
  const manual = MANUAL_TRIGGERS.has(input.trigger);
  const notes: string[] = [];
  const refuse = (reason: AdmissionReason, detail: string, hint?: string): AdmissionDecision => ({
    admitted: false,
    reason,
    detail,
    ...(hint ? { hint } : {}),
  });
  const enableHint = `an operator enables ${repo.fullName} in the Verdict dashboard (Settings, Repositories) or with \`PATCH /operator/api/repos/${encodeURIComponent(repo.fullName)}\` \`{"enabled": true}\``;

  if (repo.operatorEnabled === false) {
    return refuse(
      'repository_disabled',
      `${repo.fullName} is disabled in its operator configuration`,
      enableHint,
    );
  }
  if (repo.operatorEnabled === null && !repo.hasPriorReview && !policy.autoEnableNewRepos) {
    return refuse(
      'repository_disabled',
      `${repo.fullName} has no operator configuration and no earlier review, and autoEnableNewRepos is off`,
      `${enableHint}, or turns on \`autoEnableNewRepos\` in the review policy`,
    );
  }
  if (!manual) {
    const auto = autoReviewDecision(
      repo.standalone,
      { baseRef: pr.baseRef ?? '', draft: pr.draft, defaultBranch: pr.defaultBranch },
      repo.operatorBranches,
    );
    if (!auto.ok) return refuse('auto_review_disabled', auto.detail, auto.hint);
  }
  const author = pr.author?.toLowerCase() ?? null;
  if (author !== null && policy.pausedAuthors.includes(author)) {
    return refuse('author_paused', `reviews of ${pr.author}'s pull requests are paused`);
  }
  if (input.trigger === 'synchronize' && !policy.autoReviewNewCommits) {
    return refuse('new_commits_disabled', 'autoReviewNewCommits is off: new commits are not reviewed');
  }
  if (!manual) {
    if (pr.draft && !policy.reviewDrafts) {
      return refuse('draft_review_disabled', 'the pull request is a draft and reviewDrafts is off');
    }
    if (pr.changedFiles !== null && pr.changedFiles > policy.fileChangeLimit) {
      return refuse(
        'file_change_limit',
        `${pr.changedFiles} changed files is over the limit of ${policy.fileChangeLimit}`,
      );
    }
    if (policy.filters.length > 0) {
      const match = matchRules(policy.filters, prFacts(pr, repo.fullName));
      if (match.decision === 'no_match') {
        return refuse('filters_not_matched', 'the pull request matches none of the review filters');
      }
      if (match.decision === 'deferred') {
        notes.push(`review filters deferred: ${match.missing.join(', ')} not known`);
      }
    }
  }
  if (policy.monthlyModelBudgetUsd !== null) {
    const usage = await input.budget();
    if (!usage.known) {
      return refuse('model_budget_usage_unavailable', `the month's model usage is unknown: ${usage.why}`);
    }
    if (usage.costUsd >= policy.monthlyModelBudgetUsd) {
      return refuse(
        'monthly_model_budget_reached',
        `this month's known model cost $${usage.costUsd.toFixed(2)} has reached the budget of $${policy.monthlyModelBudgetUsd.toFixed(2)}`,
      );
    }
  }
  return { admitted: true, notes };
}
