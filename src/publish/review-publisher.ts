import { resolveRepoConfig, type RepoConfig } from '../repo-config/schema.js';
import { DEFAULT_REVIEW_POLICY, type ReviewPolicy } from '../policy/policy.schema.js';
import type { PrFacts } from '../policy/matcher.js';
import { readRunResult, type RunResult } from '../review/run-result.js';
import { normaliseFindingPath } from '../review/fingerprint.js';
import type { GitHubClient } from '../github/client.js';
import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { CheckRunPublisher } from './check-run.js';
import {
  findOwn,
  githubError,
  NO_SERVER_RETRY,
  PublicationLedger,
  type Found,
  type PublishMode,
} from './ledger.js';
import { statusCommentMarker, withMarker } from './markers.js';
import { fileUrl, ofRun, splitRepo, type PublishContext, type PublisherDeps } from './publisher-deps.js';
import { renderDescriptionSummary, withDescriptionSummary } from './description.js';
import { MERGE_STATUS_BADGE, type RenderInput } from './render.js';
import { planFindings, postReview, reviewNote, verificationView } from './review-post.js';
import {
  autoApproval,
  analysisOf,
  checkConclusion,
  coveragePinned,
  mergeStatus,
  type CheckConclusion,
} from './status.js';
import { closeResolvedThreads, hideOutdatedReviews, openThreads, recordThreads } from './threads.js';

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

type PrState = { headSha: string | null; facts: PrFacts };

/** The run's status comment on the pull request, found by its marker (after an interrupted attempt). */
function findOwnStatusComment(gh: GitHubClient, run: RunRecord): Promise<Found | null> {
  const { owner, repo } = splitRepo(run.repo);
  const marker = statusCommentMarker(run.id);
  return findOwn(
    gh.paginate.iterator(gh.rest.issues.listComments, {
      owner,
      repo,
      issue_number: run.prNumber,
      per_page: 100,
    }),
    (c) => (c.body ?? '').includes(marker),
  );
}

/**
 * Publishes an analysed run: the review (one per run, `APPROVE` only when auto approval holds on a
 * pinned head, `COMMENT` otherwise; review-post.ts), the threads of its line comments (threads.ts), the
 * PR description summary, the status comment and the check run (check-run.ts). Every attempt lands in the
 * publication ledger with its receipt or error (ledger.ts), and what must happen once happens once, even
 * across a crash: a retried publication finds what an interrupted attempt published (docs/publication.md
 * "Published once"). A failure is recorded on the run (`publishStatus: failed`, `publishError`) and never
 * touches the analysis. Shadow mode records what would have been published and calls nothing. GitHub's
 * rate limits are retried with back-off by the installation Octokit (Probot's throttling); other errors
 * are recorded for `retry-publish`.
 */
export class ReviewPublisher {
  private readonly ctx: PublishContext;
  private readonly checks: CheckRunPublisher;

  constructor(private readonly deps: PublisherDeps) {
    const ledger = new PublicationLedger(deps.store.publications, deps.mode, deps.log, {
      retries: deps.requestRetries ?? 0,
      lookFirst: deps.lookFirst ?? false,
    });
    this.ctx = { deps, ledger };
    this.checks = new CheckRunPublisher(this.ctx);
  }

  get mode(): PublishMode {
    return this.deps.mode;
  }

  private async policy(): Promise<ReviewPolicy> {
    return (await this.deps.store.policy.get())?.settings ?? DEFAULT_REVIEW_POLICY;
  }

  private async repoConfig(repo: string): Promise<RepoConfig> {
    const record = await this.deps.store.repositories.get(repo);
    return resolveRepoConfig(record?.standaloneConfig ?? {}).config;
  }

  /** Creates the run's check run, in progress, when the review starts (live mode, checks enabled). */
  async startCheck(gh: GitHubClient, run: RunRecord, headSha: string): Promise<void> {
    await this.checks.start(gh, run, headSha, await this.policy());
  }

  /** Completes the run's check run after an analysis that failed for good (nothing else is published). */
  async failCheck(gh: GitHubClient, run: RunRecord, error: string): Promise<void> {
    await this.checks.fail(gh, run, error);
  }

  /** Completes a neutral check run for a refused admission the author can act on (check-run.ts). */
  async noticeCheck(
    gh: GitHubClient,
    run: RunRecord,
    notice: { headSha: string; reason: string; detail: string; hint: string | null },
  ): Promise<void> {
    await this.checks.notice(gh, run, notice, await this.policy());
  }

  private async prState(gh: GitHubClient, run: RunRecord): Promise<PrState> {
    const stored = await this.deps.store.pullRequests.get(run.repo, run.prNumber);
    const fromStore: PrState = {
      headSha: stored?.headSha ?? run.headSha,
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
  async publish(
    gh: GitHubClient,
    run: RunRecord,
    assertLease: () => Promise<void> = async () => undefined,
  ): Promise<PublishOutcome> {
    const result = readRunResult(run.result);
    if (!result && run.result !== null)
      this.deps.log.warn({ runId: run.id }, 'the run holds no readable result');
    if (!result || !['analysed', 'degraded'].includes(run.analysisStatus)) {
      throw new RetryPublishError('not_analyzed', NOT_ANALYSED_MESSAGE);
    }
    const { store } = this.deps;
    const analysis = analysisOf(result);
    const status = mergeStatus(analysis);
    let pr: PrState;
    try {
      pr = await this.prState(gh, run);
    } catch (error) {
      const message = `reading the pull request before publishing: ${githubError(error)}`;
      await store.runs.update(run.id, { publishStatus: 'failed', publishError: message });
      const outcome = { status: 'failed', event: 'COMMENT', conclusion: 'neutral' } as const;
      return { ...outcome, mergeStatus: status, errors: [message], approvalRefusals: [] };
    }
    const p = await this.prepare(run, result, pr);
    const { policy, input, event, conclusion, commitId } = p;
    const errors: string[] = [];

    // 1. The review: one per run, its anchored findings as line comments.
    await assertLease();
    const review = await postReview(this.ctx, gh, run, { commitId, event, input, comments: p.comments });
    if (!review.ok) errors.push(`review: ${review.error}`);
    else {
      // Threads, replies, resolutions and hidden bodies: recorded in the ledger, never failing the run.
      await recordThreads(this.ctx, gh, run, review.reviewId, review.posted, p.stored);
      await closeResolvedThreads(this.ctx, gh, run, p.threads, result, commitId, assertLease);
      const repoConfig = await this.repoConfig(run.repo);
      if (repoConfig.review.hideOutdated) await hideOutdatedReviews(this.ctx, gh, run, assertLease);
    }

    // 2. The PR description, between the markers only (the same text is not written twice).
    if (policy.updatePrDescription) {
      const next = withDescriptionSummary(pr.facts.body ?? null, renderDescriptionSummary(input));
      if (next !== (pr.facts.body ?? '')) {
        await assertLease();
        const { owner, repo } = splitRepo(run.repo);
        const desc = await this.ctx.ledger.send(ofRun(run, 'description', next), () =>
          gh.rest.pulls.update({ owner, repo, pull_number: run.prNumber, body: next }),
        );
        if (!desc.ok) errors.push(`description: ${desc.error}`);
      }
    }

    // 3. A short status comment, when asked for.
    if (policy.statusChecks.postStatusComments) {
      await assertLease();
      const error = await this.statusComment(gh, run, { status, conclusion, commitId });
      if (error) errors.push(`status comment: ${error}`);
    }

    // 4. The check run: patched when its id is known, created otherwise; neutral when checks are off.
    const checkError = await this.checks.complete(gh, run, policy, {
      conclusion,
      commitId,
      analysis,
      findings: p.stored,
    });
    if (checkError) errors.push(`check run: ${checkError}`);

    const final = this.deps.mode === 'shadow' ? 'shadowed' : errors.length > 0 ? 'failed' : 'published';
    await store.runs.update(run.id, {
      publishStatus: final,
      publishError: errors.length > 0 ? errors.join('; ') : null,
    });
    const approvalRefusals = p.approval.approve ? [] : p.approval.reasons;
    return { status: final, event, mergeStatus: status, conclusion, errors, approvalRefusals };
  }

  /** What the run publishes: the event, the conclusion, the findings' places, the body's input. */
  private async prepare(run: RunRecord, result: RunResult, pr: PrState) {
    const policy = await this.policy();
    const analysis = analysisOf(result);
    const stored = await this.deps.store.findings.listForRun(run.id);
    const commitId = result.coverage?.headSha ?? run.headSha ?? pr.headSha ?? '';
    const threads = await openThreads(this.ctx, run);
    const plan = planFindings(this.deps, run, result, stored, threads, commitId);
    const headSha = pr.headSha ?? run.headSha ?? '';
    const approval = autoApproval(
      analysis,
      { draft: pr.facts.draft === true, headSha, facts: pr.facts },
      policy,
    );
    // The publisher itself refuses APPROVE unless the coverage is pinned to the head being approved.
    const event: 'APPROVE' | 'COMMENT' =
      approval.approve && coveragePinned(analysis.coverage, headSha) ? 'APPROVE' : 'COMMENT';
    const conclusion = checkConclusion(analysis, {
      requiredConfidence: policy.statusChecks.requiredConfidence,
      headSha,
    });
    const input: RenderInput = {
      ...analysis,
      productName: this.deps.productName,
      policy,
      changedPaths: new Set((result.coverage?.files ?? []).map((f) => normaliseFindingPath(f.path))),
      findings: plan.findings,
      botHandle: this.deps.botHandle,
      runId: run.id,
      stillOpen: plan.stillOpen,
      resolved: plan.resolved,
      reviewNote: reviewNote(result),
      verification: verificationView(result),
      samples: result.samples ?? null,
      dismissedLike: result.recall?.suppressed.length ?? 0,
      instructionFiles: result.instructions?.files ?? [],
      fileLink:
        commitId && this.deps.fileLinks !== false
          ? (path, line, endLine) => fileUrl(this.deps, run.repo, commitId, path, line, endLine)
          : undefined,
    };
    return { policy, stored, commitId, threads, comments: plan.comments, approval, event, conclusion, input };
  }

  /** The short status comment of the run (once per run, found by its marker after an interruption). */
  private async statusComment(
    gh: GitHubClient,
    run: RunRecord,
    s: { status: ReturnType<typeof mergeStatus>; conclusion: CheckConclusion; commitId: string },
  ): Promise<string | null> {
    const { owner, repo } = splitRepo(run.repo);
    const text = withMarker(
      `**${this.deps.productName}: ${MERGE_STATUS_BADGE[s.status]}** — check \`${this.deps.checkName}\` concluded \`${s.conclusion}\` for ${s.commitId.slice(0, 7)}.`,
      statusCommentMarker(run.id),
    );
    const comment = await this.ctx.ledger.send(
      ofRun(run, 'comment', text, { step: 'status_comment' }),
      () =>
        gh.rest.issues.createComment({
          owner,
          repo,
          issue_number: run.prNumber,
          body: text,
          ...NO_SERVER_RETRY,
        }),
      { find: () => findOwnStatusComment(gh, run) },
    );
    return comment.ok ? null : comment.error;
  }
}

/**
 * `retry-publish` (review-engine 7.5): publishes an analysed run again: what was not published yet (a
 * step the ledger shows published is not sent twice). Refuses a run that was not analysed and one
 * without an installation id, with the specified messages.
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
