import type { AppDeps } from './deps.js';
import { requestReview } from '../review/request.js';
import { classifyEvent, type PrReviewRef } from '../ingress/event-filter.js';

/** Whether a login belongs to another review bot (`VERDICT_COMPETITOR_LOGINS`, case-insensitive). */
export function isCompetitor(deps: AppDeps, login: unknown): boolean {
  return typeof login === 'string' && deps.config.competitorLogins.includes(login.toLowerCase());
}

/**
 * Keeps a review (`pull_request_review.submitted`) or PR comment (`issue_comment.created`) by a competitor
 * bot for the next review's comparison. With `VERDICT_COMPETITOR_TRIGGERS_REVIEW=1` it also requests a
 * review of the stored head (trigger `competitor_review`, variant `competitor-{id}`), admitted like an
 * automatic one. Outcomes: `not_competitor`, `duplicate_competitor_review`, `competitor_review_recorded`,
 * or the review request's outcome.
 */
export async function handleCompetitorReview(
  deps: AppDeps,
  context: { name: string; payload: any },
): Promise<string> {
  const decision = classifyEvent(context.name, context.payload);
  let ref: Omit<PrReviewRef, 'reviewId'> & { id: number; kind: 'review' | 'comment' };
  if (decision.action === 'competitor_review') {
    const r = decision.pr;
    ref = { ...r, id: r.reviewId, kind: 'review' };
  } else if (decision.action === 'command') {
    const c = decision.pr;
    ref = {
      ...c,
      id: c.commentId,
      kind: 'comment',
      state: null,
      submittedAt:
        typeof context.payload?.comment?.created_at === 'string' ? context.payload.comment.created_at : null,
    };
  } else {
    return decision.action === 'ignore' ? decision.reason : 'unsupported_action';
  }
  if (!isCompetitor(deps, ref.author)) return 'not_competitor';
  const repo = `${ref.owner}/${ref.repo}`;
  const stored = await deps.store.competitors.record({
    repo,
    prNumber: ref.number,
    login: ref.author,
    kind: ref.kind,
    githubId: ref.id,
    state: ref.state,
    body: ref.body,
    submittedAt: ref.submittedAt,
  });
  if (!stored) return 'duplicate_competitor_review';
  deps.log.info(
    { event: 'competitor-review-recorded', repo, pr: ref.number, login: ref.author, kind: ref.kind },
    `kept a ${ref.kind} by ${ref.author} on ${repo}#${ref.number}`,
  );
  if (!deps.config.competitorTriggersReview) return 'competitor_review_recorded';
  const pr = await deps.store.pullRequests.get(repo, ref.number);
  if (!pr?.headSha) return 'competitor_review_recorded';
  const result = await requestReview(deps.store, {
    owner: ref.owner,
    repo: ref.repo,
    number: ref.number,
    headSha: pr.headSha,
    installationId: ref.installationId ?? pr.installationId,
    trigger: 'competitor_review',
    variant: `competitor-${ref.id}`,
  });
  if (result.outcome === 'enqueued') deps.onReviewEnqueued?.();
  return result.outcome;
}
