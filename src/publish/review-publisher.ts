import type { Logger } from 'pino';
import { resolveRepoConfig, type RepoConfig } from '../repo-config/schema.js';
import { sanitizeStoredPolicy } from '../policy/merge.js';
import { DEFAULT_REVIEW_POLICY, type ReviewPolicy } from '../policy/policy.schema.js';
import type { PrFacts } from '../policy/matcher.js';
import type { RunResult } from '../review/run-result.js';
import { findingFingerprint, normaliseFindingPath } from '../review/fingerprint.js';
import { withheldReason } from '../review/verification.js';
import type { GitHubClient } from '../github/client.js';
import type { Store } from '../store/index.js';
import type { PublicationKind } from '../store/publications.js';
import type { FindingRecord } from '../store/findings.js';
import type { ReviewThreadRecord } from '../store/review-threads.js';
import type { RunRecord } from '../store/runs.js';
import {
  MERGE_STATUS_BADGE,
  renderDescriptionSummary,
  lineCommentFingerprint,
  renderLineComment,
  renderReviewBody,
  withDescriptionSummary,
  type RenderFinding,
  type RenderInput,
  type ResolvedItem,
  type StillOpenItem,
  type VerificationView,
} from './render.js';
import {
  annotationBatches,
  DISPOSITION_REPLY,
  findThreadId,
  lineCommentFor,
  MINIMIZE_OUTDATED,
  probeComments,
  RESOLVE_THREAD,
  statusOf,
  type LineComment,
} from './line-comments.js';
import { refusalNotice } from './notice.js';
import {
  analysisOf,
  autoApproval,
  checkConclusion,
  coveragePinned,
  mergeStatus,
  mergeStatusCause,
  type CheckConclusion,
  type PublishableAnalysis,
} from './status.js';

export type PublishMode = 'live' | 'shadow';

export type PublisherDeps = {
  store: Store;
  mode: PublishMode;
  /** `Verdict`; the check run is named `{productName} / review` unless `checkName` says otherwise. */
  productName: string;
  checkName: string;
  botHandle: string;
  /** Web base URL for links to files (https://github.com, or the GHES host). */
  webUrl?: string;
  /** Links to the files of findings in the body (default true; off where the repository is not on GitHub). */
  fileLinks?: boolean;
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
  const status = statusOf(error);
  const message = (error as Error)?.message ?? String(error);
  return status !== null ? `GitHub ${status}: ${message}` : message;
}

type PrState = { headSha: string | null; facts: PrFacts };

/** A line comment of the review and the finding it posts. */
type PlannedComment = LineComment & { fingerprint: string };

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

  private async repoConfig(repo: string): Promise<RepoConfig> {
    const record = await this.deps.store.repositories.get(repo);
    return resolveRepoConfig(record?.standaloneConfig ?? {}).config;
  }

  /**
   * One publication call with its ledger entry: shadowed without calling anything in shadow mode,
   * published with its receipt (the answer's `id`, or what `receiptOf` reads) or failed with the error.
   * `request` is what was sent beside the body (comments, annotations, GraphQL variables).
   */
  private async attempt<T>(
    run: RunRecord,
    kind: PublicationKind,
    body: string,
    call: () => Promise<{ data: T }>,
    opts: { request?: unknown; receiptOf?: (data: T) => string | null } = {},
  ): Promise<
    { ok: true; id: string | null; data: T | null } | { ok: false; error: string; status: number | null }
  > {
    const entry = {
      runId: run.id,
      repo: run.repo,
      prNumber: run.prNumber,
      kind,
      body,
      request: opts.request ?? null,
    };
    const ledger = this.deps.store.publications;
    if (this.deps.mode === 'shadow') {
      await ledger.record({ ...entry, mode: 'shadow', status: 'shadowed', receipt: null, error: null });
      return { ok: true, id: null, data: null };
    }
    try {
      const { data } = await call();
      const receipt = opts.receiptOf
        ? opts.receiptOf(data)
        : String((data as { id?: unknown } | null)?.id ?? '') || null;
      const node = (data as { node_id?: unknown } | null)?.node_id;
      const nodeId = typeof node === 'string' ? node : null;
      await ledger.record({ ...entry, mode: 'live', status: 'published', receipt, error: null, nodeId });
      return { ok: true, id: receipt, data };
    } catch (error) {
      const message = githubError(error);
      await ledger.record({ ...entry, mode: 'live', status: 'failed', receipt: null, error: message });
      this.deps.log.warn(
        { event: 'publish-failed', kind, runId: run.id, err: message },
        `could not publish the ${kind}`,
      );
      return { ok: false, error: message, status: statusOf(error) };
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

  /**
   * Completes a neutral check run for a review admission refused in a way the author can act on (NAMES.md:
   * `repository_disabled` says how to enable the repository; `auto_review_disabled` what would have it
   * reviewed): one line with why and how. Nothing else is published. Skipped when status checks are off.
   */
  async noticeCheck(
    gh: GitHubClient,
    run: RunRecord,
    notice: { headSha: string; reason: string; detail: string; hint: string | null },
  ): Promise<void> {
    const policy = await this.policy();
    if (!policy.statusChecks.enabled) return;
    const { owner, repo } = splitRepo(run.repo);
    const { title, summary } = refusalNotice(this.deps.productName, notice);
    const output = { title, summary };
    const completed = { status: 'completed', conclusion: 'neutral' } as const;
    const now = new Date().toISOString();
    await this.attempt(run, 'check_run', summary, () =>
      run.checkRunId
        ? gh.rest.checks.update({
            owner,
            repo,
            check_run_id: Number(run.checkRunId),
            ...completed,
            completed_at: now,
            output,
          })
        : gh.rest.checks.create({
            owner,
            repo,
            name: this.deps.checkName,
            head_sha: notice.headSha,
            ...completed,
            completed_at: now,
            output,
          }),
    );
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
    const result = run.result as RunResult | null;
    if (!result?.output || !['analysed', 'degraded'].includes(run.analysisStatus)) {
      throw new RetryPublishError('not_analyzed', NOT_ANALYSED_MESSAGE);
    }
    const { store } = this.deps;
    const policy = await this.policy();
    const analysis = analysisOf(result);
    const status = mergeStatus(analysis);
    const errors: string[] = [];
    let pr: PrState;
    try {
      pr = await this.prState(gh, run);
    } catch (error) {
      const message = `reading the pull request before publishing: ${githubError(error)}`;
      await store.runs.update(run.id, { publishStatus: 'failed', publishError: message });
      const outcome = { status: 'failed', event: 'COMMENT', conclusion: 'neutral' } as const;
      return { ...outcome, mergeStatus: status, errors: [message], approvalRefusals: [] };
    }
    const stored = await store.findings.listForRun(run.id);
    const repoConfig = await this.repoConfig(run.repo);
    const { owner, repo } = splitRepo(run.repo);
    const commitId = result.coverage?.headSha ?? run.headSha ?? pr.headSha ?? '';
    const threads = await this.openThreads(run);
    const plan = this.planFindings(run, result, stored, threads, commitId);
    const headSha = pr.headSha ?? run.headSha ?? '';
    const approval = autoApproval(
      analysis,
      { draft: pr.facts.draft === true, headSha, facts: pr.facts },
      policy,
    );
    // The publisher itself refuses APPROVE unless the coverage is pinned to the head being approved.
    const event = approval.approve && coveragePinned(analysis.coverage, headSha) ? 'APPROVE' : 'COMMENT';
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
          ? (path, line, endLine) => this.fileUrl(run.repo, commitId, path, line, endLine)
          : undefined,
    };

    // 1. The review: a new one every time, its anchored findings as line comments.
    await assertLease();
    const review = await this.postReview(gh, run, {
      owner,
      repo,
      commitId,
      event,
      input,
      comments: plan.comments,
    });
    if (!review.ok) errors.push(`review: ${review.error}`);
    else {
      // Threads, replies, resolutions and hidden bodies: recorded in the ledger, never failing the run.
      await this.recordThreads(gh, run, review.reviewId, review.posted, stored);
      await this.closeResolvedThreads(gh, run, threads, result, commitId, assertLease);
      if (repoConfig.review.hideOutdated) await this.hideOutdatedReviews(gh, run, assertLease);
    }

    // 2. The PR description, between the markers only.
    if (policy.updatePrDescription) {
      const next = withDescriptionSummary(pr.facts.body ?? null, renderDescriptionSummary(input));
      if (next !== (pr.facts.body ?? '')) {
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
      conclusion,
      commitId,
      analysis,
      findings: stored,
    });
    if (checkError) errors.push(`check run: ${checkError}`);

    const final = this.deps.mode === 'shadow' ? 'shadowed' : errors.length > 0 ? 'failed' : 'published';
    await store.runs.update(run.id, {
      publishStatus: final,
      publishError: errors.length > 0 ? errors.join('; ') : null,
    });
    const approvalRefusals = approval.approve ? [] : approval.reasons;
    return { status: final, event, mergeStatus: status, conclusion, errors, approvalRefusals };
  }

  private async completeCheck(
    gh: GitHubClient,
    run: RunRecord,
    policy: ReviewPolicy,
    c: {
      conclusion: CheckConclusion;
      commitId: string;
      analysis: PublishableAnalysis;
      findings: FindingRecord[];
    },
  ): Promise<string | null> {
    const { owner, repo } = splitRepo(run.repo);
    const enabled = policy.statusChecks.enabled;
    if (!enabled && !run.checkRunId) return null;
    const conclusion: CheckConclusion = enabled ? c.conclusion : 'neutral';
    const { output: review, coverage } = c.analysis;
    const status = mergeStatus(c.analysis);
    const findings = review.findings.length;
    const summary = [
      `**Merge Status: ${MERGE_STATUS_BADGE[status]}** (${mergeStatusCause(c.analysis)}). The model's merge verdict: “${review.mergeVerdict.replace(/\s+/g, ' ').slice(0, 500)}”`,
      `Analyst confidence ${review.confidenceScore}/5 · ${findings} finding(s) · coverage ${
        coverage?.complete ? 'complete' : 'incomplete'
      } at ${c.commitId.slice(0, 7)}${enabled ? '' : ' · status checks are off in the review policy'}`,
    ].join('\n\n');
    const title = `${status}: ${findings} finding(s)`;
    // Anchored findings become annotations, so they show in "Files changed": 50 per request at most.
    const [first = [], ...rest] = annotationBatches(c.findings);
    const output = { title, summary, ...(first.length > 0 ? { annotations: first } : {}) };
    const completed = {
      status: 'completed' as const,
      conclusion,
      completed_at: new Date().toISOString(),
      output,
    };
    const request = first.length > 0 ? { annotations: first } : undefined;
    const outcome = await this.attempt(
      run,
      'check_run',
      summary,
      () =>
        run.checkRunId
          ? gh.rest.checks.update({ owner, repo, check_run_id: Number(run.checkRunId), ...completed })
          : gh.rest.checks.create({
              owner,
              repo,
              name: this.deps.checkName,
              head_sha: c.commitId,
              ...completed,
            }),
      { request },
    );
    if (outcome.ok && outcome.id && !run.checkRunId) {
      await this.deps.store.runs.update(run.id, { checkRunId: outcome.id });
    }
    if (!outcome.ok) return outcome.error;
    const checkRunId = run.checkRunId ?? outcome.id;
    for (const [i, batch] of rest.entries()) {
      const more = await this.attempt(
        run,
        'check_run',
        `annotations ${i + 2} of ${rest.length + 1}`,
        () =>
          gh.rest.checks.update({
            owner,
            repo,
            check_run_id: Number(checkRunId),
            output: { title, summary, annotations: batch },
          }),
        { request: { annotations: batch } },
      );
      if (!more.ok) return more.error;
    }
    return null;
  }

  /** Open review threads of the PR by fingerprint, of this mode (shadow threads are not GitHub's). */
  private async openThreads(run: RunRecord): Promise<Map<string, ReviewThreadRecord>> {
    const all = await this.deps.store.reviewThreads.openByFingerprint(run.repo, run.prNumber);
    const shadow = this.deps.mode === 'shadow';
    for (const [fp, t] of all) {
      // A thread this run opened is its own (retry-publish posts the same comments again).
      if (t.runId === run.id || t.commentId.startsWith('shadow:') !== shadow) all.delete(fp);
    }
    return all;
  }

  private fileUrl(
    repo: string,
    sha: string,
    path: string,
    line?: number | null,
    endLine?: number | null,
  ): string {
    const web = this.deps.webUrl ?? 'https://github.com';
    const encoded = path.split('/').map(encodeURIComponent).join('/');
    const lines = line ? `#L${line}${endLine && endLine !== line ? `-L${endLine}` : ''}` : '';
    return `${web}/${repo}/blob/${sha}/${encoded}${lines}`;
  }

  /**
   * Which finding goes where: a finding that has an open thread from an earlier review is listed under
   * "Still open" with a link to its thread and not posted again; an anchored new finding in a changed
   * file becomes a line comment (listed in the body in one line); the rest are written in the body.
   * Prior findings carried open are listed as still open too, and the ones closed with evidence as resolved.
   */
  private planFindings(
    run: RunRecord,
    result: RunResult,
    stored: FindingRecord[],
    threads: Map<string, ReviewThreadRecord>,
    commitId: string,
  ) {
    const byFingerprint = new Map(stored.map((f) => [f.fingerprint, f]));
    const findings: RenderFinding[] = [];
    const comments: PlannedComment[] = [];
    const stillOpen: StillOpenItem[] = [];
    for (const f of result.output.findings) {
      const fp = findingFingerprint(f);
      const record = byFingerprint.get(fp);
      const thread = threads.get(fp);
      const anchored = record && record.line !== null && record.path !== null && !record.outsideDiff;
      if (!thread && anchored) {
        // New, or still open from a review that could not anchor it: it gets its first thread now.
        comments.push({ ...lineCommentFor(record, renderLineComment(record)), fingerprint: fp });
        findings.push({
          ...f,
          inline: true,
          line: record.line,
          endLine: record.endLine,
          fileUrl:
            this.deps.fileLinks === false
              ? null
              : this.fileUrl(run.repo, commitId, record.path!, record.line!, record.endLine),
        });
        continue;
      }
      // Still open from an earlier review: listed with a link to its thread when it has one.
      const open = thread !== undefined || record?.stillOpen === true;
      if (open) {
        stillOpen.push({
          severity: f.severity,
          title: f.title,
          path: f.path || null,
          line: thread?.line ?? null,
          threadUrl: thread?.url ?? null,
        });
      }
      findings.push({ ...f, stillOpen: open });
    }
    // Evidence artifacts (review-engine 2.6) go with the findings they back.
    const evidence = new Map((result.evidence?.findings ?? []).map((e) => [e.fingerprint, e]));
    for (const f of findings) {
      const e = evidence.get(findingFingerprint(f));
      if (e) f.evidence = { artifacts: e.artifacts, status: e.status, downgradedReason: e.downgradedReason };
    }
    const raised = new Set(result.output.findings.map((f) => findingFingerprint(f)));
    for (const p of result.priorFindings?.carriedOpen ?? []) {
      if (raised.has(p.fingerprint)) continue;
      const thread = threads.get(p.fingerprint);
      stillOpen.push({
        severity: p.severity,
        title: p.title,
        path: p.path,
        line: thread?.line ?? p.line ?? null,
        threadUrl: thread?.url ?? null,
      });
    }
    const resolved: ResolvedItem[] = (result.priorFindings?.resolved ?? []).map((r) => ({
      title: r.title ?? r.fingerprint,
      path: r.path ?? threads.get(r.fingerprint)?.path ?? null,
      disposition: r.disposition,
      explanation: r.explanation,
      threadUrl: threads.get(r.fingerprint)?.url ?? null,
    }));
    return { findings, comments, stillOpen, resolved };
  }

  /**
   * Posts the review with its line comments. GitHub refuses the whole review when one comment is invalid
   * (422): each comment is then tried alone as a pending review (deleted at once) to find the offending
   * ones, and the review is posted once more without them, their findings written into the body. Both
   * attempts are in the ledger.
   */
  private async postReview(
    gh: GitHubClient,
    run: RunRecord,
    r: {
      owner: string;
      repo: string;
      commitId: string;
      event: 'APPROVE' | 'COMMENT';
      input: RenderInput;
      comments: PlannedComment[];
    },
  ): Promise<{ ok: true; reviewId: string | null; posted: PlannedComment[] } | { ok: false; error: string }> {
    const send = (body: string, comments: PlannedComment[], request: unknown) =>
      this.attempt(
        run,
        'review',
        body,
        () =>
          gh.rest.pulls.createReview({
            owner: r.owner,
            repo: r.repo,
            pull_number: run.prNumber,
            commit_id: r.commitId,
            body,
            event: r.event,
            ...(comments.length > 0 ? { comments: comments.map(({ fingerprint: _f, ...c }) => c) } : {}),
          }),
        { request },
      );
    const body = renderReviewBody(r.input);
    const first = await send(body, r.comments, r.comments.length > 0 ? { comments: r.comments } : null);
    if (first.ok) return { ok: true, reviewId: first.id, posted: r.comments };
    if (first.status !== 422 || r.comments.length === 0) return { ok: false, error: first.error };
    const probe = await probeComments(gh, {
      owner: r.owner,
      repo: r.repo,
      pullNumber: run.prNumber,
      commitId: r.commitId,
      comments: r.comments,
    });
    const offending = new Set(probe.invalid.map((i) => i.comment.fingerprint));
    this.deps.log.warn(
      {
        event: 'line-comments-refused',
        runId: run.id,
        refused: probe.invalid.length,
        probeError: probe.error,
      },
      `GitHub refused ${probe.invalid.length} line comment(s); posting the review without them`,
    );
    const kept = r.comments.filter((c) => !offending.has(c.fingerprint));
    const retryInput: RenderInput = {
      ...r.input,
      findings: r.input.findings.map((f) =>
        f.inline && offending.has(findingFingerprint(f))
          ? { ...f, inline: false, line: null, endLine: null }
          : f,
      ),
    };
    const second = await send(renderReviewBody(retryInput), kept, {
      comments: kept,
      movedToBody: probe.invalid.map((i) => ({
        fingerprint: i.comment.fingerprint,
        path: i.comment.path,
        error: i.error,
      })),
    });
    if (!second.ok) return { ok: false, error: second.error };
    return { ok: true, reviewId: second.id, posted: kept };
  }

  /** Records the thread each posted line comment opened (its id and link), read back from GitHub. */
  private async recordThreads(
    gh: GitHubClient,
    run: RunRecord,
    reviewId: string | null,
    posted: PlannedComment[],
    stored: FindingRecord[],
  ): Promise<void> {
    if (posted.length === 0) return;
    const { owner, repo } = splitRepo(run.repo);
    const byFp = new Map(stored.map((f) => [f.fingerprint, f]));
    const ofRun = { repo: run.repo, prNumber: run.prNumber, runId: run.id };
    try {
      const threads = [];
      if (this.deps.mode === 'shadow') {
        for (const c of posted) {
          threads.push({
            ...ofRun,
            fingerprint: c.fingerprint,
            reviewId: 'shadow',
            commentId: `shadow:${run.id}:${c.fingerprint}`,
            commentNodeId: null,
            path: c.path,
            line: byFp.get(c.fingerprint)?.line ?? c.line,
            url: null,
          });
        }
      } else {
        if (!reviewId) return;
        const comments = await gh.paginate(gh.rest.pulls.listCommentsForReview, {
          owner,
          repo,
          pull_number: run.prNumber,
          review_id: Number(reviewId),
          per_page: 100,
        });
        const wanted = new Set(posted.map((c) => c.fingerprint));
        for (const c of comments) {
          const fp = lineCommentFingerprint(c.body);
          if (!fp || !wanted.has(fp)) continue;
          threads.push({
            ...ofRun,
            fingerprint: fp,
            reviewId,
            commentId: String(c.id),
            commentNodeId: c.node_id ?? null,
            path: c.path,
            line: byFp.get(fp)?.line ?? c.line ?? c.original_line ?? 0,
            url: c.html_url ?? null,
          });
        }
      }
      await this.deps.store.reviewThreads.recordMany(threads);
    } catch (error) {
      this.deps.log.warn(
        { event: 'review-threads-unrecorded', runId: run.id, err: githubError(error) },
        'could not read back the line comments of the review',
      );
    }
  }

  /**
   * A prior finding closed with accepted evidence gets a reply in its thread ("Resolved in <sha>: ...")
   * and its thread resolved through GraphQL. Each call is in the ledger; a failure is logged and left.
   */
  private async closeResolvedThreads(
    gh: GitHubClient,
    run: RunRecord,
    threads: Map<string, ReviewThreadRecord>,
    result: RunResult,
    commitId: string,
    assertLease: () => Promise<void>,
  ): Promise<void> {
    const { owner, repo } = splitRepo(run.repo);
    for (const r of result.priorFindings?.resolved ?? []) {
      const thread = threads.get(r.fingerprint);
      if (!thread) continue;
      await assertLease();
      const text = `${DISPOSITION_REPLY[r.disposition] ?? 'Closed'} in ${commitId.slice(0, 7)}: ${r.explanation.trim()}`;
      await this.attempt(
        run,
        'thread_reply',
        text,
        () =>
          gh.rest.pulls.createReplyForReviewComment({
            owner,
            repo,
            pull_number: run.prNumber,
            comment_id: Number(thread.commentId),
            body: text,
          }),
        { request: { commentId: thread.commentId, fingerprint: r.fingerprint } },
      );
      let threadId: string | null = null;
      if (this.deps.mode === 'live') {
        try {
          threadId = await findThreadId(gh, owner, repo, run.prNumber, thread.commentId);
        } catch (error) {
          this.deps.log.warn(
            { event: 'review-thread-lookup-failed', runId: run.id, err: githubError(error) },
            'could not find the review thread to resolve',
          );
        }
      }
      const resolvedOutcome = await this.attempt(
        run,
        'thread_resolve',
        `resolveReviewThread for ${r.fingerprint}`,
        async () => {
          if (!threadId) throw new Error(`no review thread holds comment ${thread.commentId}`);
          const data = await gh.graphql<{
            resolveReviewThread: { thread: { id: string; isResolved: boolean } };
          }>(RESOLVE_THREAD, { threadId });
          return { data: data.resolveReviewThread.thread };
        },
        {
          request: { mutation: 'resolveReviewThread', threadId, commentId: thread.commentId },
          receiptOf: (t) => t.id,
        },
      );
      if (resolvedOutcome.ok) await this.deps.store.reviewThreads.markResolved(thread.id, run.id);
    }
  }

  /** Earlier Verdict review bodies on the PR are hidden as outdated (never edited or deleted). */
  private async hideOutdatedReviews(gh: GitHubClient, run: RunRecord, assertLease: () => Promise<void>) {
    const { store } = this.deps;
    const earlier = (await store.publications.publishedReviews(run.repo, run.prNumber)).filter(
      (p) => p.runId !== run.id && p.nodeId !== null,
    );
    if (earlier.length === 0) return;
    const hidden = await store.publications.minimizedNodeIds(run.repo, run.prNumber);
    for (const review of earlier) {
      if (hidden.has(review.nodeId!)) continue;
      hidden.add(review.nodeId!);
      await assertLease();
      await this.attempt(
        run,
        'minimize',
        `minimizeComment OUTDATED ${review.nodeId}`,
        async () => {
          await gh.graphql(MINIMIZE_OUTDATED, { subjectId: review.nodeId });
          return { data: { id: review.nodeId } };
        },
        { request: { mutation: 'minimizeComment', subjectId: review.nodeId, classifier: 'OUTDATED' } },
      );
    }
  }
}

/** The one line saying what the run reviewed (absent on a first review and on older runs). */
/** What the body says of verification: the withheld findings with their reasons, and the unverified ones. */
export function verificationView(result: RunResult): VerificationView | null {
  const v = result.verification;
  if (!v || v.status === 'off' || v.status === 'none') return null;
  return {
    withheld: v.results
      .filter((r) => r.outcome === 'withheld')
      .map((r) => ({
        severity: r.severity,
        title: r.title,
        path: r.path || null,
        line: r.line,
        reason: withheldReason(r),
      })),
    unverified: v.unverified,
    unverifiedReason: v.errors[0] ?? v.results.find((r) => r.outcome === 'unverified')?.reason ?? null,
  };
}

export function reviewNote(result: RunResult): string | null {
  const r = result.review;
  if (!r || !r.sinceSha) return null;
  const since = r.sinceSha.slice(0, 7);
  if (r.kind === 'incremental') {
    return r.files === 0
      ? `No file of this pull request changed since ${since}: earlier findings re-checked only`
      : `Reviewed the ${r.files === 1 ? 'file' : `${r.files} files`} changed since ${since}`;
  }
  return `Full review: ${r.reason}`;
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
