import type { AppDeps } from '../handlers/deps.js';
import { classifyEvent, type PrCommentRef } from '../ingress/event-filter.js';
import { loadRepoConfig, type ConfigContext } from '../repo-config/load.js';
import type { ReplyOctokit } from '../publish/replies.js';
import { requestReview } from '../review/request.js';
import { commentCommandKey } from '../store/comment-commands.js';
import { authorizeCommand } from './authorize.js';
import { commandHelpText, parseCommand } from './parse.js';

export type CommentContext = ConfigContext & {
  id: string;
  name: string;
  payload: any;
  octokit: ReplyOctokit & {
    rest: {
      pulls: { get(args: { owner: string; repo: string; pull_number: number }): Promise<{ data: any }> };
    };
  };
};

/**
 * `@verdict <verb>` on a PR (review-engine 4.7). Outcomes: no_command, duplicate_command,
 * repository_disabled / manual_disabled / unauthorized_commenter (no reply), unknown_pr_head, help_replied, status_replied,
 * enqueued (and the other review-request outcomes).
 */
export async function handleCommentCommand(deps: AppDeps, context: CommentContext): Promise<string> {
  const decision = classifyEvent(context.name, context.payload);
  if (decision.action !== 'command')
    return decision.action === 'ignore' ? decision.reason : 'unsupported_action';
  const ref = decision.pr;
  const parsed = parseCommand(ref.body, deps.config.botHandles);
  if (parsed.kind === 'no_command') return 'no_command';
  const fullName = `${ref.owner}/${ref.repo}`;
  const target = { owner: ref.owner, repo: ref.repo, number: ref.number };
  const key = commentCommandKey(fullName, ref.number, ref.commentId);

  const claimed = await deps.store.commentCommands.claim({
    repo: fullName,
    prNumber: ref.number,
    commentId: ref.commentId,
    verb: parsed.verb,
    author: ref.author,
    association: ref.association,
    deliveryId: context.id,
  });
  if (!claimed) {
    // A retry of our own unfinished attempt carries on; a finished command is a duplicate.
    const existing = await deps.store.commentCommands.get(key);
    if (existing && existing.outcome !== 'received') return 'duplicate_command';
  }
  const finish = async (outcome: string, runId: string | null = null) => {
    await deps.store.commentCommands.finish(key, outcome, runId);
    return outcome;
  };

  const { config } = await loadRepoConfig(
    context,
    { ...deps, octokit: context.octokit, live: deps.config.github.hasCredentials },
    target,
  );
  // A repository switched off in .github/verdict.yml takes no commands either (no reply, like a refusal).
  if (!config.enabled) return finish('repository_disabled');
  const auth = authorizeCommand({ login: ref.author, association: ref.association }, config.manual);
  if (!auth.allowed) return finish(auth.reason);

  const pr = await storedPullRequest(deps, context, ref, fullName);
  if (!pr?.headSha) return finish('unknown_pr_head');
  const head = pr.headSha;

  switch (parsed.verb) {
    case 'help':
      await deps.replies.comment(context.octokit, target, commandHelpText(deps.config.botHandles));
      return finish('help_replied');
    case 'status': {
      const latest = await deps.store.runs.latestForPr(fullName, ref.number);
      const body = latest
        ? `**Verdict status:** the latest run is \`${latest.status}\` on \`${(latest.headSha ?? head).slice(0, 7)}\`` +
          (latest.reason ? ` (${latest.reason})` : '') +
          `. Stored head: \`${head.slice(0, 7)}\`.`
        : `**Verdict status:** no review run yet. Stored head: \`${head.slice(0, 7)}\`.`;
      await deps.replies.comment(context.octokit, target, body, latest?.id ?? null);
      return finish('status_replied', latest?.id ?? null);
    }
    case 'review':
    case 'rerun': {
      const result = await requestReview(deps.store, {
        owner: ref.owner,
        repo: ref.repo,
        number: ref.number,
        headSha: head,
        installationId: ref.installationId ?? pr.installationId,
        trigger: 'manual_command',
        variant: `manual-${ref.commentId}`,
        deliveryId: context.id,
      });
      if (result.jobId !== null) deps.onReviewEnqueued?.();
      await deps.replies.react(context.octokit, target, ref.commentId, 'eyes');
      return finish(result.outcome, result.run.id);
    }
  }
}

/** The stored pull request; a first command on one opened before Verdict was installed looks its head up. */
async function storedPullRequest(
  deps: AppDeps,
  context: CommentContext,
  ref: PrCommentRef,
  fullName: string,
) {
  const pr = await deps.store.pullRequests.get(fullName, ref.number);
  if (pr?.headSha || !deps.config.github.hasCredentials) return pr;
  // A first command on a PR opened before Verdict was installed: look its head up.
  const { data } = await context.octokit.rest.pulls.get({
    owner: ref.owner,
    repo: ref.repo,
    pull_number: ref.number,
  });
  await deps.store.pullRequests.upsert({
    repo: fullName,
    number: ref.number,
    headSha: data.head?.sha ?? null,
    baseRef: data.base?.ref ?? null,
    headRef: data.head?.ref ?? null,
    title: data.title ?? null,
    body: data.body ?? null,
    author: data.user?.login ?? null,
    draft: data.draft === true,
    labels: (data.labels ?? []).map((l: { name: string }) => l.name),
    state: data.state ?? null,
    changedFiles: typeof data.changed_files === 'number' ? data.changed_files : null,
    installationId: ref.installationId,
  });
  return deps.store.pullRequests.get(fullName, ref.number);
}
