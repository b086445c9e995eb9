import type { Probot } from 'probot';
import type { AppDeps } from './deps.js';
import { handlePullRequest } from './pull-request.js';
import { handleInstallation } from './installation.js';
import { handleCommentCommand } from '../comment-commands/handle.js';
import { handleCompetitorReview, isCompetitor } from './competitor.js';
import { handleThreadReply, handleThreadResolved } from './review-feedback.js';

/** The Probot app: event names → handlers. Verified deliveries reach it through `probot.receive`. */
export function verdictApp(deps: AppDeps) {
  /** A handler whose outcome is recorded on the delivery. */
  const recorded =
    (handle: (deps: AppDeps, context: any) => Promise<string>) =>
    async (context: { id: string }): Promise<void> => {
      await deps.store.deliveries.setOutcome(context.id, await handle(deps, context));
    };
  return (app: Probot): void => {
    app.on('pull_request', recorded(handlePullRequest));
    // A comment by another review bot is kept for the comparison; it is never a command.
    app.on(
      'issue_comment.created',
      recorded((deps, context) =>
        isCompetitor(deps, context.payload.comment?.user?.login)
          ? handleCompetitorReview(deps, context)
          : handleCommentCommand(deps, context),
      ),
    );
    app.on('pull_request_review.submitted', recorded(handleCompetitorReview));
    // Feedback on Verdict's line comments (NAMES.md "Feedback and learning").
    app.on('pull_request_review_comment.created', recorded(handleThreadReply));
    app.on('pull_request_review_thread.resolved', recorded(handleThreadResolved));
    app.on(
      ['installation', 'installation_repositories'],
      recorded((deps, context) => handleInstallation(deps, context.name, context.payload)),
    );
  };
}
