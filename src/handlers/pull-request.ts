import type { AppDeps } from './deps.js';
import { requestReview } from '../review/request.js';
import { classifyEvent, type PrRef } from '../ingress/event-filter.js';
import { loadRepoConfig, type ConfigContext } from '../repo-config/load.js';
import type { ReplyOctokit } from '../publish/replies.js';

export type PullRequestContext = ConfigContext & {
  id: string;
  name: string;
  payload: any;
  octokit: ReplyOctokit;
};

/** The stored row of an open pull request, from its webhook. */
function openPr(pr: PrRef) {
  return {
    repo: `${pr.owner}/${pr.repo}`,
    number: pr.number,
    headSha: pr.headSha,
    state: 'open',
    baseRef: pr.baseRef,
    headRef: pr.headRef,
    title: pr.title,
    body: pr.body,
    author: pr.author,
    draft: pr.draft,
    labels: pr.labels,
    changedFiles: pr.changedFiles,
    installationId: pr.installationId,
  };
}

/**
 * pull_request events (review-engine 6.1): review-requesting actions store the new head and enqueue a
 * review; `edited` refreshes stored metadata; no-op updates and merge commits are recorded and dropped.
 * Returns the outcome recorded on the delivery.
 */
export async function handlePullRequest(deps: AppDeps, context: PullRequestContext): Promise<string> {
  const payload = context.payload;
  const fullName: string | undefined = payload?.repository?.full_name;
  const number: number | undefined = payload?.pull_request?.number;
  const stored = fullName && number ? await deps.store.pullRequests.get(fullName, number) : null;
  const decision = classifyEvent(context.name, payload, stored ? { headSha: stored.headSha } : null);
  switch (decision.action) {
    case 'ignore':
      return decision.reason;
    case 'update_metadata':
      await deps.store.pullRequests.upsert(openPr(decision.pr));
      return 'metadata_updated';
    case 'review': {
      const pr = decision.pr;
      await deps.store.pullRequests.upsert(openPr(pr));
      // Read (and validate) .github/verdict.yml now, so an invalid file is reported on the PR once.
      await loadRepoConfig(
        context,
        { ...deps, octokit: context.octokit, live: deps.config.github.hasCredentials },
        { owner: pr.owner, repo: pr.repo, number: pr.number },
      );
      const result = await requestReview(deps.store, {
        owner: pr.owner,
        repo: pr.repo,
        number: pr.number,
        headSha: pr.headSha,
        installationId: pr.installationId,
        trigger: decision.trigger,
        deliveryId: context.id,
      });
      if (result.jobId !== null && (result.outcome === 'enqueued' || result.outcome === 'replace_waiting')) {
        deps.onReviewEnqueued?.();
      }
      return result.outcome;
    }
    default:
      return 'unsupported_action';
  }
}
