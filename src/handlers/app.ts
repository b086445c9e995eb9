import type { Probot } from 'probot';
import type { AppDeps } from './deps.js';
import { handlePullRequest } from './pull-request.js';
import { handleInstallation } from './installation.js';
import { handleCommentCommand } from '../comment-commands/handle.js';
import { handleCompetitorReview, isCompetitor } from './competitor.js';
import { handleThreadReply, handleThreadResolved } from './review-feedback.js';

/** The Probot app: event names → handlers. Verified deliveries reach it through `probot.receive`. */
export function verdictApp(deps: AppDeps) {
  return (app: Probot): void => {
    app.on('pull_request', async (context) => {
      const outcome = await handlePullRequest(deps, context as any);
      await deps.store.deliveries.setOutcome(context.id, outcome);
    });
    app.on('issue_comment.created', async (context) => {
      // A comment by another review bot is kept for the comparison; it is never a command.
      const outcome = isCompetitor(deps, context.payload.comment?.user?.login)
        ? await handleCompetitorReview(deps, context as any)
        : await handleCommentCommand(deps, context as any);
      await deps.store.deliveries.setOutcome(context.id, outcome);
    });
    app.on('pull_request_review.submitted', async (context) => {
      const outcome = await handleCompetitorReview(deps, context as any);
      await deps.store.deliveries.setOutcome(context.id, outcome);
    });
    // Feedback on Verdict's line comments (NAMES.md "Feedback and learning").
    app.on('pull_request_review_comment.created', async (context) => {
      const outcome = await handleThreadReply(deps, context as any);
      await deps.store.deliveries.setOutcome(context.id, outcome);
    });
    app.on('pull_request_review_thread.resolved', async (context) => {
      const outcome = await handleThreadResolved(deps, context as any);
      await deps.store.deliveries.setOutcome(context.id, outcome);
    });
    app.on(['installation', 'installation_repositories'], async (context) => {
      const outcome = await handleInstallation(deps, context.name, context.payload as any);
      await deps.store.deliveries.setOutcome(context.id, outcome);
    });
  };
}
