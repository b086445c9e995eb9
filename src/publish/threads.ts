import type { GitHubClient } from '../github/client.js';
import type { RunResult } from '../review/run-result.js';
import type { FindingRecord } from '../store/findings.js';
import type { ReviewThreadRecord } from '../store/review-threads.js';
import type { RunRecord } from '../store/runs.js';
import { githubError, NO_SERVER_RETRY } from './ledger.js';
import { DISPOSITION_REPLY, findThreadId, MINIMIZE_OUTDATED, RESOLVE_THREAD } from './line-comments.js';
import { lineCommentFingerprint, threadReplyMarker, withMarker } from './markers.js';
import { ofRun, splitRepo, type PublishContext } from './publisher-deps.js';
import { findOwnReply } from './replies.js';
import type { PlannedComment } from './review-post.js';

/** Open review threads of the PR by fingerprint, of this mode (shadow threads are not GitHub's). */
export async function openThreads(
  ctx: PublishContext,
  run: RunRecord,
): Promise<Map<string, ReviewThreadRecord>> {
  const all = await ctx.deps.store.reviewThreads.openByFingerprint(run.repo, run.prNumber);
  const shadow = ctx.deps.mode === 'shadow';
  for (const [fp, t] of all) {
    // A thread this run opened is its own (retry-publish posts the same comments again).
    if (t.runId === run.id || t.commentId.startsWith('shadow:') !== shadow) all.delete(fp);
  }
  return all;
}

/** Records the thread each posted line comment opened (its id and link), read back from GitHub. */
export async function recordThreads(
  ctx: PublishContext,
  gh: GitHubClient,
  run: RunRecord,
  reviewId: string | null,
  posted: PlannedComment[],
  stored: FindingRecord[],
): Promise<void> {
  if (posted.length === 0) return;
  const { owner, repo } = splitRepo(run.repo);
  const byFp = new Map(stored.map((f) => [f.fingerprint, f]));
  const ofThisRun = { repo: run.repo, prNumber: run.prNumber, runId: run.id };
  try {
    const threads = [];
    if (ctx.deps.mode === 'shadow') {
      for (const c of posted) {
        threads.push({
          ...ofThisRun,
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
          ...ofThisRun,
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
    await ctx.deps.store.reviewThreads.recordMany(threads);
  } catch (error) {
    ctx.deps.log.warn(
      { event: 'review-threads-unrecorded', runId: run.id, err: githubError(error) },
      'could not read back the line comments of the review',
    );
  }
}

/**
 * A prior finding closed with accepted evidence gets a reply in its thread ("Resolved in <sha>: ...",
 * ending with the run's reply marker, so an interrupted reply is found instead of posted twice) and its
 * thread resolved through GraphQL. Each call is in the ledger; a failure is logged and left.
 */
export async function closeResolvedThreads(
  ctx: PublishContext,
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
    const marker = threadReplyMarker(run.id, r.fingerprint);
    const text = `${DISPOSITION_REPLY[r.disposition] ?? 'Closed'} in ${commitId.slice(0, 7)}: ${r.explanation.trim()}`;
    const body = withMarker(text, marker);
    await ctx.ledger.send(
      ofRun(run, 'thread_reply', body, {
        request: { commentId: thread.commentId, fingerprint: r.fingerprint },
        step: `thread_reply:${r.fingerprint}`,
      }),
      () =>
        gh.rest.pulls.createReplyForReviewComment({
          owner,
          repo,
          pull_number: run.prNumber,
          comment_id: Number(thread.commentId),
          body,
          ...NO_SERVER_RETRY,
        }),
      {
        find: () => findOwnReply(gh, { owner, repo, number: run.prNumber }, thread.commentId, marker),
      },
    );
    await resolveThread(ctx, gh, run, thread, r.fingerprint);
  }
}

/** Resolves a finding's thread through GraphQL (safe to repeat); marks it resolved when GitHub did. */
async function resolveThread(
  ctx: PublishContext,
  gh: GitHubClient,
  run: RunRecord,
  thread: ReviewThreadRecord,
  fingerprint: string,
): Promise<void> {
  const { owner, repo } = splitRepo(run.repo);
  let threadId: string | null = null;
  if (ctx.deps.mode === 'live') {
    try {
      threadId = await findThreadId(gh, owner, repo, run.prNumber, thread.commentId);
    } catch (error) {
      ctx.deps.log.warn(
        { event: 'review-thread-lookup-failed', runId: run.id, err: githubError(error) },
        'could not find the review thread to resolve',
      );
    }
  }
  const resolved = await ctx.ledger.send(
    ofRun(run, 'thread_resolve', `resolveReviewThread for ${fingerprint}`, {
      request: { mutation: 'resolveReviewThread', threadId, commentId: thread.commentId },
      step: `thread_resolve:${fingerprint}`,
    }),
    async () => {
      if (!threadId) throw new Error(`no review thread holds comment ${thread.commentId}`);
      const data = await gh.graphql<{
        resolveReviewThread: { thread: { id: string; isResolved: boolean } };
      }>(RESOLVE_THREAD, { threadId });
      return { data: data.resolveReviewThread.thread };
    },
    { receiptOf: (t) => t.id },
  );
  if (resolved.ok) await ctx.deps.store.reviewThreads.markResolved(thread.id, run.id);
}

/** Earlier Verdict review bodies on the PR are hidden as outdated (never edited or deleted). */
export async function hideOutdatedReviews(
  ctx: PublishContext,
  gh: GitHubClient,
  run: RunRecord,
  assertLease: () => Promise<void>,
): Promise<void> {
  const { store } = ctx.deps;
  const earlier = (await store.publications.publishedReviews(run.repo, run.prNumber)).filter(
    (p) => p.runId !== run.id && p.nodeId !== null,
  );
  if (earlier.length === 0) return;
  const hidden = await store.publications.minimizedNodeIds(run.repo, run.prNumber);
  for (const review of earlier) {
    if (hidden.has(review.nodeId!)) continue;
    hidden.add(review.nodeId!);
    await assertLease();
    await ctx.ledger.send(
      ofRun(run, 'minimize', `minimizeComment OUTDATED ${review.nodeId}`, {
        request: { mutation: 'minimizeComment', subjectId: review.nodeId, classifier: 'OUTDATED' },
      }),
      async () => {
        await gh.graphql(MINIMIZE_OUTDATED, { subjectId: review.nodeId });
        return { data: { id: review.nodeId } };
      },
    );
  }
}
