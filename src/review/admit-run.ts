import { budgetReached } from '../alerts/moments.js';
import type { AlertDeps } from '../alerts/raise.js';
import type { Clock } from '../clock.js';
import type { GitHubClient } from '../github/client.js';
import { DEFAULT_REVIEW_POLICY, type ReviewPolicy } from '../policy/policy.schema.js';
import { resolveRepoConfig, type OperatorBranches } from '../repo-config/schema.js';
import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { MANUAL_TRIGGERS, admit, type BudgetUsage } from './admission.js';
import type { ChangedFile } from './context.js';
import { gatherError, getPullRequest, listChangedFiles, type PullRequestFacts } from './gather.js';
import { errorText, type RunScope } from './stage.js';

/**
 * Admitting one run, before anything costs money: the pull request is read through the installation's
 * Octokit (and recorded), a PR that is no longer open or whose head moved is refused, then admission
 * (admission.ts, review-engine 7.2) decides on the operator's and the repository's configuration, the
 * policy, the changed paths and the month's model spend. What it read is kept for the analysis.
 */

/** What admission read, for the analysis that follows it. */
export type Admitted = {
  gh: GitHubClient;
  pr: PullRequestFacts;
  policy: ReviewPolicy;
  standalone: ReturnType<typeof resolveRepoConfig>['config'];
  /** The operator's configuration of the repository (validation reads its `validation` section). */
  operatorConfig: Record<string, unknown> | null;
  /** The changed files, or null when admission did not list them first. */
  files: ChangedFile[] | null;
  /** When reading the pull request began (the `gather` span starts there). */
  gatherStart: number;
  /** Admission's notes (kept in the result). */
  notes: string[];
};

export type AdmitDecision =
  | { kind: 'admitted'; admitted: Admitted }
  | { kind: 'refused'; gh: GitHubClient; reason: string; detail: string; hint: string | null };

export type AdmitDeps = {
  store: Store;
  clock: Clock;
  /** The installation's Octokit (Probot's `auth(installationId)`). */
  github: (installationId: number) => Promise<GitHubClient>;
  /** Where `budget_reached` goes when admission refuses on the budget; absent: no alert. */
  alerts?: AlertDeps;
};

/** Reads the pull request and decides admission; the run must have an installation id. */
export async function admitRun(
  deps: AdmitDeps,
  run: RunRecord & { installationId: number },
  scope: RunScope,
): Promise<AdmitDecision> {
  const { store, clock } = deps;
  const gatherStart = clock.now();
  let gh: GitHubClient;
  try {
    gh = await deps.github(run.installationId);
  } catch (error) {
    throw gatherError(`authenticating as installation ${run.installationId}`, error);
  }
  const pr = await getPullRequest(gh, scope.owner, scope.name, run.prNumber);
  const refuse = (reason: string, detail: string, hint?: string): AdmitDecision => ({
    kind: 'refused',
    gh,
    reason,
    detail,
    hint: hint ?? null,
  });
  if (pr.state !== 'open') return refuse('pull_request_closed', `the pull request is ${pr.state}`);
  if (pr.headSha !== scope.headSha) {
    return refuse(
      'head_moved',
      `the pull request head moved to ${pr.headSha.slice(0, 12)}; that head gets its own review`,
    );
  }
  await store.pullRequests.upsert({
    repo: run.repo,
    number: run.prNumber,
    title: pr.title,
    body: pr.body,
    author: pr.author,
    draft: pr.draft,
    labels: pr.labels,
    baseRef: pr.baseRef,
    headRef: pr.headRef,
    state: pr.state,
    changedFiles: pr.changedFiles,
  });
  const policy = (await store.policy.get())?.settings ?? DEFAULT_REVIEW_POLICY;
  const repoRecord = await store.repositories.get(run.repo);
  const operatorEnabled =
    typeof repoRecord?.config?.enabled === 'boolean' ? (repoRecord.config.enabled as boolean) : null;
  const standalone = resolveRepoConfig(repoRecord?.standaloneConfig ?? {}).config;
  // Files are listed before admission (path filters need them), unless admission refuses on the count.
  const listFirst = MANUAL_TRIGGERS.has(run.trigger) || pr.changedFiles <= policy.fileChangeLimit;
  const files = listFirst
    ? await listChangedFiles(gh, scope.owner, scope.name, run.prNumber, pr.changedFiles)
    : null;
  const decision = await admit({
    trigger: run.trigger,
    pr: { ...pr, paths: files ? files.map((f) => f.filename) : null },
    repo: {
      fullName: run.repo,
      operatorEnabled,
      operatorBranches: repoRecord?.config?.branches as OperatorBranches,
      standalone,
      hasPriorReview: await store.runs.repoHasAnalysis(run.repo),
    },
    policy,
    budget: () => monthlyUsage(deps),
  });
  if (!decision.admitted) {
    if (decision.reason === 'monthly_model_budget_reached' && deps.alerts) {
      await budgetReached(deps.alerts, decision.detail);
    }
    return refuse(decision.reason, decision.detail, decision.hint);
  }
  const operatorConfig = repoRecord?.config ?? null;
  const admitted = { gh, pr, policy, standalone, operatorConfig, files, gatherStart, notes: decision.notes };
  return { kind: 'admitted', admitted };
}

function monthStartUtc(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The current UTC month's known model cost; unknown (and why) when any call of the month has none. */
async function monthlyUsage({ store, clock }: AdmitDeps): Promise<BudgetUsage> {
  const now = clock.now();
  try {
    const report = await store.reads.usage(monthStartUtc(now), now + 1);
    if (!report.model.complete || report.model.costUsd === null) {
      const why =
        report.model.runsWithoutTelemetry > 0
          ? `${report.model.runsWithoutTelemetry} analysed run(s) this month recorded no model telemetry`
          : `${report.model.unreported.costUsd} model call(s) this month have no known cost`;
      return { known: false, why };
    }
    return { known: true, costUsd: report.model.costUsd };
  } catch (error) {
    return { known: false, why: `usage could not be read (${errorText(error)})` };
  }
}
