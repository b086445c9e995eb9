import type { Logger } from 'pino';
import { sanitizeStoredPolicy } from '../policy/merge.js';
import { DEFAULT_REVIEW_POLICY, type ReviewPolicy } from '../policy/policy.schema.js';
import type { PrFacts } from '../policy/matcher.js';
import type { RunResult } from '../review/engine.js';
import { findingFingerprint, normaliseFindingPath } from '../review/fingerprint.js';
import type { GitHubClient } from '../review/gather.js';
import type { Store } from '../store/index.js';
import type { PublicationKind } from '../store/publications.js';
import type { RunRecord } from '../store/runs.js';
import {
  MERGE_STATUS_BADGE,
  renderDescriptionSummary,
  renderReviewBody,
  withDescriptionSummary,
  type RenderFinding,
  type RenderInput,
} from './render.js';
import { autoApproval, checkConclusion, mergeStatus, type CheckConclusion } from './status.js';

export type PublishMode = 'live' | 'shadow';

export type PublisherDeps = {
  store: Store;
  mode: PublishMode;
  /** `Verdict`; the check run is named `{productName} / review` unless `checkName` says otherwise. */
  productName: string;
  checkName: string;
  botHandle: string;
  log: Logger;
};

export type PublishOutcome = {
  status: 'published' | 'shadowed' | 'failed';
  event: 'APPROVE' | 'COMMENT';
  mergeStatus: string;
  conclusion: CheckConclusion;
  errors: string[];
  /** Why auto approval did not hold (empty when it approved). */
  approvalRefusals: string[];
};

/** Thrown by `retryPublish` (review-engine 7.5), with a short code beside the specified message. */
export class RetryPublishError extends Error {
  constructor(
    readonly code: 'run_not_found' | 'not_analyzed' | 'installation_missing',
    message: string,
  ) {
    super(message);
    this.name = 'RetryPublishError';
  }
}

export const NOT_ANALYSED_MESSAGE = 'review run is not analyzed';
export const MISSING_INSTALLATION_MESSAGE = 'cannot retry publish because the installation id is missing';

function splitRepo(fullName: string) {
  const i = fullName.indexOf('/');
  return { owner: fullName.slice(0, i), repo: fullName.slice(i + 1) };
}

function githubError(error: unknown): string {
  const status = (error as { status?: unknown })?.status;
  const message = (error as Error)?.message ?? String(error);
  return typeof status === 'number' ? `GitHub ${status}: ${message}` : message;
}

type PrState = {
  headSha: string | null;
  draft: boolean;
  body: string | null;
  facts: PrFacts;
};

/**
 * Publishes an analysed run: the review (a new one each time, `APPROVE` only when auto approval holds on a
 * pinned head, `COMMENT` otherwise), the PR description summary, the status comment and the check run.
 * Every attempt lands in the publication ledger with its receipt or error; a failure is recorded on the run
 * (`publishStatus: failed`, `publishError`) and never touches the analysis. Shadow mode records what would
 * have been published and calls nothing. GitHub's rate limits are retried with back-off by the
 * installation Octokit (Probot's throttling); other errors are recorded for `retry-publish`.
 */
export class ReviewPublisher {
  constructor(private readonly deps: PublisherDeps) {}

  get mode(): PublishMode {
    return this.deps.mode;
  }

  private async policy(): Promise<ReviewPolicy> {
    const stored = await this.deps.store.policy.get();
    return stored ? sanitizeStoredPolicy(stored.settings).policy : DEFAULT_REVIEW_POLICY;
  }

  private async attempt<T extends { id: number | string }>(
    run: RunRecord,
    kind: PublicationKind,
    body: string,
    call: () => Promise<{ data: T }>,
  ): Promise<{ ok: true; id: string | null } | { ok: false; error: string }> {
    const entry = { runId: run.id, repo: run.repo, prNumber: run.prNumber, kind, body };
    const ledger = this.deps.store.publications;
    if (this.deps.mode === 'shadow') {
      await ledger.record({ ...entry, mode: 'shadow', status: 'shadowed', receipt: null, error: null });
      return { ok: true, id: null };
    }
    try {
      const { data } = await call();
      await ledger.record({
        ...entry,
        mode: 'live',
        status: 'published',
        receipt: String(data.id),
        error: null,
      });
      return { ok: true, id: String(data.id) };
    } catch (error) {
      const message = githubError(error);
      await ledger.record({ ...entry, mode: 'live', status: 'failed', receipt: null, error: message });
      this.deps.log.warn(
        { event: 'publish-failed', kind, runId: run.id, err: message },
        `could not publish the ${kind}`,
      );
      return { ok: false, error: message };
    }
  }

  /** Creates the run's check run, in progress, when the review starts (live mode, checks enabled). */
  async startCheck(gh: GitHubClient, run: RunRecord, headSha: string): Promise<void> {
    const policy = await this.policy();
    if (!policy.statusChecks.enabled || run.checkRunId) return;
    const { owner, repo } = splitRepo(run.repo);
    const started = await this.attempt(run, 'check_run', 'in_progress', () =>
      gh.rest.checks.create({
        owner,
        repo,
        name: this.deps.checkName,
        head_sha: headSha,
        status: 'in_progress',
        started_at: new Date().toISOString(),
        output: {
          title: 'Review in progress',
          summary: `${this.deps.productName} is reviewing this pull request.`,
        },
      }),
    );
    if (started.ok && started.id) await this.deps.store.runs.update(run.id, { checkRunId: started.id });
  }

  /** Completes the run's check run after an analysis that failed for good (nothing else is published). */
  async failCheck(gh: GitHubClient, run: RunRecord, error: string): Promise<void> {
    if (!run.checkRunId) return;
    const { owner, repo } = splitRepo(run.repo);
    const summary = `The review could not be completed: ${error.slice(0, 2000)}`;
    await this.attempt(run, 'check_run', summary, () =>
      gh.rest.checks.update({
        owner,
        repo,
        check_run_id: Number(run.checkRunId),
        status: 'completed',
        conclusion: 'neutral',
        completed_at: new Date().toISOString(),
        output: { title: 'Review failed', summary },
      }),
    );
  }

  private async prState(gh: GitHubClient, run: RunRecord): Promise<PrState> {
    const stored = await this.deps.store.pullRequests.get(run.repo, run.prNumber);
    const fromStore: PrState = {
      headSha: stored?.headSha ?? run.headSha,
      draft: stored?.draft ?? false,
      body: stored?.body ?? null,
      facts: {
        labels: stored?.labels ?? null,
        author: stored?.author ?? null,
        repository: run.repo,
        targetBranch: stored?.baseRef ?? null,
        sourceBranch: stored?.headRef ?? null,
        paths: null,
        title: stored?.title ?? null,
        body: stored?.body ?? null,
        draft: stored?.draft ?? null,
        filesChanged: stored?.changedFiles ?? null,
      },
    };
    if (this.deps.mode === 'shadow') return fromStore;
    // The head right before publishing: APPROVE needs the head the coverage was computed on.
    const { owner, repo } = splitRepo(run.repo);
    const { data } = await gh.rest.pulls.get({ owner, repo, pull_number: run.prNumber });
    return {
      headSha: data.head.sha,
      draft: data.draft === true,
      body: data.body ?? null,
      facts: {
        ...fromStore.facts,
        labels: (data.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
        author: data.user?.login ?? null,
        targetBranch: data.base.ref,
        sourceBranch: data.head.ref,
        title: data.title,
        body: data.body ?? null,
        draft: data.draft === true,
        filesChanged: data.changed_files ?? null,
      },
    };
  }

  /** Publishes an analysed run and records the outcome on it. */
  async publish(gh: GitHubClient, run: RunRecord, assertLease: () => Promise<void> = async () => undefined) {
    const result = run.result as RunResult | null;
    if (!result?.output || !['analysed', 'degraded'].includes(run.analysisStatus)) {
      throw new RetryPublishError('not_analyzed', NOT_ANALYSED_MESSAGE);
    }
    const { store } = this.deps;
    const policy = await this.policy();
    const errors: string[] = [];
    let pr: PrState;
    try {
      pr = await this.prState(gh, run);
    } catch (error) {
      const message = `reading the pull request before publishing: ${githubError(error)}`;
      await store.runs.update(run.id, { publishStatus: 'failed', publishError: message });
      return this.outcome('failed', 'COMMENT', result, 'neutral', [message], []);
    }
    const stored = await store.findings.listForRun(run.id);
    const stillOpen = new Set(stored.filter((f) => f.stillOpen).map((f) => f.fingerprint));
    const findings: RenderFinding[] = result.output.findings.map((f) => ({
      ...f,
      stillOpen: stillOpen.has(findingFingerprint(f)),
    }));
    const analysis = {
      output: result.output,
      coverage: result.coverage ?? null,
      degraded: result.degraded === true,
    };
    const headSha = pr.headSha ?? run.headSha ?? '';
    const approval = autoApproval(analysis, { draft: pr.draft, headSha, facts: pr.facts }, policy);
    // The publisher itself refuses APPROVE unless the coverage is pinned to the head being approved.
    const pinned = analysis.coverage !== null && analysis.coverage.headSha === headSha;
    const event = approval.approve && pinned ? 'APPROVE' : 'COMMENT';
    const conclusion = checkConclusion(analysis, {
      requiredConfidence: policy.statusChecks.requiredConfidence,
      headSha,
    });
    const status = mergeStatus(analysis);
    const input: RenderInput = {
      ...analysis,
      productName: this.deps.productName,
      policy,
      changedPaths: new Set((result.coverage?.files ?? []).map((f) => normaliseFindingPath(f.path))),
      findings,
      botHandle: this.deps.botHandle,
      runId: run.id,
    };
    const { owner, repo } = splitRepo(run.repo);
    const commitId = result.coverage?.headSha ?? run.headSha ?? headSha;

    // 1. The review: a new one every time.
    const body = renderReviewBody(input);
    await assertLease();
    const review = await this.attempt(run, 'review', body, () =>
      gh.rest.pulls.createReview({
        owner,
        repo,
        pull_number: run.prNumber,
        commit_id: commitId,
        body,
        event,
      }),
    );
    if (!review.ok) errors.push(`review: ${review.error}`);

    // 2. The PR description, between the markers only.
    if (policy.updatePrDescription) {
      const next = withDescriptionSummary(pr.body, renderDescriptionSummary(input));
      if (next !== (pr.body ?? '')) {
        await assertLease();
        const desc = await this.attempt(run, 'description', next, () =>
          gh.rest.pulls.update({ owner, repo, pull_number: run.prNumber, body: next }),
        );
        if (!desc.ok) errors.push(`description: ${desc.error}`);
      }
    }

    // 3. A short status comment, when asked for.
    if (policy.statusChecks.postStatusComments) {
      const text = `**${this.deps.productName}: ${MERGE_STATUS_BADGE[status]}** — check \`${this.deps.checkName}\` concluded \`${conclusion}\` for ${commitId.slice(0, 7)}.`;
      await assertLease();
      const comment = await this.attempt(run, 'comment', text, () =>
        gh.rest.issues.createComment({ owner, repo, issue_number: run.prNumber, body: text }),
      );
      if (!comment.ok) errors.push(`status comment: ${comment.error}`);
    }

    // 4. The check run: patched when its id is known, created otherwise; neutral when checks are off.
    const checkError = await this.completeCheck(gh, run, policy, {
      status,
      conclusion,
      commitId,
      result,
      event,
    });
    if (checkError) errors.push(`check run: ${checkError}`);

    const final = this.deps.mode === 'shadow' ? 'shadowed' : errors.length > 0 ? 'failed' : 'published';
    await store.runs.update(run.id, {
      publishStatus: final,
      publishError: errors.length > 0 ? errors.join('; ') : null,
    });
    return this.outcome(final, event, result, conclusion, errors, approval.approve ? [] : approval.reasons);
  }

  private outcome(
    status: PublishOutcome['status'],
    event: PublishOutcome['event'],
    result: RunResult,
    conclusion: CheckConclusion,
    errors: string[],
    approvalRefusals: string[],
  ): PublishOutcome {
    const analysis = {
      output: result.output,
      coverage: result.coverage ?? null,
      degraded: result.degraded === true,
    };
    return { status, event, mergeStatus: mergeStatus(analysis), conclusion, errors, approvalRefusals };
  }

  private async completeCheck(
    gh: GitHubClient,
    run: RunRecord,
    policy: ReviewPolicy,
    c: { status: string; conclusion: CheckConclusion; commitId: string; result: RunResult; event: string },
  ): Promise<string | null> {
    const { owner, repo } = splitRepo(run.repo);
    const enabled = policy.statusChecks.enabled;
    if (!enabled && !run.checkRunId) return null;
    const conclusion: CheckConclusion = enabled ? c.conclusion : 'neutral';
    const findings = c.result.output.findings.length;
    const summary = [
      `**Merge Status: ${MERGE_STATUS_BADGE[c.status as keyof typeof MERGE_STATUS_BADGE]}** — ${c.result.output.mergeVerdict.replace(/\s+/g, ' ').slice(0, 500)}`,
      `Analyst confidence ${c.result.output.confidenceScore}/5 · ${findings} finding(s) · coverage ${
        c.result.coverage?.complete ? 'complete' : 'incomplete'
      } at ${c.commitId.slice(0, 7)}${enabled ? '' : ' · status checks are off in the review policy'}`,
    ].join('\n\n');
    const output = { title: `${c.status}: ${findings} finding(s)`, summary };
    const completed = {
      status: 'completed' as const,
      conclusion,
      completed_at: new Date().toISOString(),
      output,
    };
    const outcome = await this.attempt(run, 'check_run', summary, () =>
      run.checkRunId
        ? gh.rest.checks.update({ owner, repo, check_run_id: Number(run.checkRunId), ...completed })
        : gh.rest.checks.create({
            owner,
            repo,
            name: this.deps.checkName,
            head_sha: c.commitId,
            ...completed,
          }),
    );
    if (outcome.ok && outcome.id && !run.checkRunId) {
      await this.deps.store.runs.update(run.id, { checkRunId: outcome.id });
    }
    return outcome.ok ? null : outcome.error;
  }
}

/**
 * `retry-publish` (review-engine 7.5): publishes an analysed run again. Refuses a run that was not
 * analysed and one without an installation id, with the specified messages.
 */
export async function retryPublish(
  store: Store,
  publisher: ReviewPublisher,
  github: (installationId: number) => Promise<GitHubClient>,
  runId: string,
): Promise<PublishOutcome> {
  const run = await store.runs.get(runId);
  if (!run) throw new RetryPublishError('run_not_found', `review run ${runId} does not exist`);
  if (!['analysed', 'degraded'].includes(run.analysisStatus) || !run.result) {
    throw new RetryPublishError('not_analyzed', NOT_ANALYSED_MESSAGE);
  }
  if (run.installationId === null)
    throw new RetryPublishError('installation_missing', MISSING_INSTALLATION_MESSAGE);
  return publisher.publish(await github(run.installationId), run);
}
