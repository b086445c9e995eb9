import type { GitHubClient } from '../github/client.js';
import { findingFingerprint } from '../review/fingerprint.js';
import type { RunResult } from '../review/run-result.js';
import { withheldReason } from '../review/verification.js';
import type { FindingRecord } from '../store/findings.js';
import type { ReviewThreadRecord } from '../store/review-threads.js';
import type { RunRecord } from '../store/runs.js';
import { findOwn, NO_SERVER_RETRY, type Found } from './ledger.js';
import { lineCommentFor, probeComments, type LineComment } from './line-comments.js';
import { reviewMarker } from './markers.js';
import { fileUrl, ofRun, splitRepo, type PublishContext, type PublisherDeps } from './publisher-deps.js';
import {
  renderLineComment,
  renderReviewBody,
  type RenderFinding,
  type RenderInput,
  type ResolvedItem,
  type StillOpenItem,
  type VerificationView,
} from './render.js';

/** A line comment of the review and the finding it posts. */
export type PlannedComment = LineComment & { fingerprint: string };

/**
 * The run's review on the pull request, found by the run marker its body ends with: what an interrupted
 * attempt may have posted. Pending reviews (the probe of refused comments) have no body and never match.
 */
export function findOwnReview(gh: GitHubClient, run: RunRecord): Promise<Found | null> {
  const { owner, repo } = splitRepo(run.repo);
  const marker = reviewMarker(run.id);
  return findOwn(
    gh.paginate.iterator(gh.rest.pulls.listReviews, {
      owner,
      repo,
      pull_number: run.prNumber,
      per_page: 100,
    }),
    (r) => r.state !== 'PENDING' && (r.body ?? '').includes(marker),
  );
}

export type PostedReview =
  { ok: true; reviewId: string | null; posted: PlannedComment[] } | { ok: false; error: string };

/** The comments a review posted, as its ledger row keeps them. */
function commentsOf(request: unknown): PlannedComment[] {
  const comments = (request as { comments?: unknown } | null)?.comments;
  return Array.isArray(comments) ? (comments as PlannedComment[]) : [];
}

/**
 * Posts the review with its line comments, once per run: a review the ledger shows published, or that
 * an interrupted attempt posted (found by its run marker), is not posted again. GitHub refuses the whole
 * review when one comment is invalid (422): each comment is then tried alone as a pending review
 * (deleted at once) to find the offending ones, and the review is posted once more without them, their
 * findings written into the body. Both attempts are in the ledger.
 */
export async function postReview(
  ctx: PublishContext,
  gh: GitHubClient,
  run: RunRecord,
  r: { commitId: string; event: 'APPROVE' | 'COMMENT'; input: RenderInput; comments: PlannedComment[] },
): Promise<PostedReview> {
  const { owner, repo } = splitRepo(run.repo);
  const send = (body: string, comments: PlannedComment[], request: unknown) =>
    ctx.ledger.send(
      ofRun(run, 'review', body, { request, step: 'review' }),
      () =>
        gh.rest.pulls.createReview({
          owner,
          repo,
          pull_number: run.prNumber,
          commit_id: r.commitId,
          body,
          event: r.event,
          ...(comments.length > 0 ? { comments: comments.map(({ fingerprint: _f, ...c }) => c) } : {}),
          ...NO_SERVER_RETRY,
        }),
      { find: () => findOwnReview(gh, run) },
    );
  const first = await send(
    renderReviewBody(r.input),
    r.comments,
    r.comments.length > 0 ? { comments: r.comments } : null,
  );
  if (first.ok) {
    const posted = first.reused ? commentsOf(first.request) : r.comments;
    return { ok: true, reviewId: first.id, posted };
  }
  if (first.status !== 422 || r.comments.length === 0) return { ok: false, error: first.error };
  const probe = await probeComments(gh, {
    owner,
    repo,
    pullNumber: run.prNumber,
    commitId: r.commitId,
    comments: r.comments,
  });
  const offending = new Set(probe.invalid.map((i) => i.comment.fingerprint));
  ctx.deps.log.warn(
    { event: 'line-comments-refused', runId: run.id, refused: probe.invalid.length, probeError: probe.error },
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
  return { ok: true, reviewId: second.id, posted: second.reused ? commentsOf(second.request) : kept };
}

/**
 * Which finding goes where: a finding that has an open thread from an earlier review is listed under
 * "Still open" with a link to its thread and not posted again; an anchored new finding in a changed
 * file becomes a line comment (listed in the body in one line); the rest are written in the body.
 * Prior findings carried open are listed as still open too, and the ones closed with evidence as resolved.
 */
export function planFindings(
  deps: PublisherDeps,
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
          deps.fileLinks === false
            ? null
            : fileUrl(deps, run.repo, commitId, record.path!, record.line!, record.endLine),
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

/** The one line saying what the run reviewed (absent on a first review and on older runs). */
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
