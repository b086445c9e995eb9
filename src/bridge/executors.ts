import type { Logger } from 'pino';
import { randomId, type Clock } from '../clock.js';
import { RetryPublishError, retryPublish, type ReviewPublisher } from '../publish/review-publisher.js';
import type { GitHubClient } from '../github/client.js';
import { OperatorError, type ServiceContext } from '../services/operation.js';
import type { AlertDeps } from '../alerts/raise.js';
import { syncRepositories, type AppGitHub } from '../services/repos.js';
import { requeue } from '../services/requeue.js';
import { replayDelivery } from '../services/webhooks.js';
import type { Command } from '../store/commands.js';
import type { Store } from '../store/index.js';
import { CommandFailure, type CommandExecutors } from './command-bridge.js';

export type ExecutorDeps = {
  store: Store;
  clock: Clock;
  log: Logger;
  publisher: ReviewPublisher;
  /** An installation's Octokit for live publication (never called in shadow publication mode). */
  github: (installationId: number) => Promise<GitHubClient>;
  /** Null without App credentials: repository sync then fails with `app_credentials_missing`. */
  app: AppGitHub | null;
  /** Where alerts go (repository sync raises `repository_access_lost`); absent: recorded, not delivered. */
  alerts?: AlertDeps['config'];
  /** Dispatches a stored delivery into the Probot app again (what the webhooks lane does). */
  dispatchDelivery: (deliveryId: string) => Promise<void>;
  /** Wakes the review lane after a requeue. */
  onReviewQueued?: () => void;
};

function str(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/** The service's result; its refusal as the command's failure: its code (mapped by `code`) and message. */
async function asCommand<T>(work: Promise<T>, code?: (code: string) => string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof OperatorError)
      throw new CommandFailure(code?.(error.code) ?? error.code, error.message);
    throw error;
  }
}

/**
 * What each command kind does when the bridge executes it (operator-api 2.3, review-engine 3.5, 7.5): the
 * command's payload is read here, and the service that holds the rule does the work (requeue, delivery
 * replay, repository sync), on behalf of the command's actor.
 */
export function commandExecutors(deps: ExecutorDeps): CommandExecutors {
  const { store } = deps;
  const context = (command: Command): ServiceContext => ({
    store,
    log: deps.log,
    now: () => deps.clock.now(),
    newId: randomId,
    principal: { kind: 'local', actor: command.actor },
  });
  return {
    requeue: async (command) => {
      const result = await asCommand(
        requeue(
          context(command),
          {
            reviewKey: str(command.payload.reviewKey) ?? command.reviewKey,
            repo: str(command.payload.repo) ?? command.repo,
            prNumber: Number(command.payload.number ?? command.prNumber),
          },
          { variant: str(command.payload.variant) },
        ),
        (code) => (code === 'invalid_request' || code === 'invalid_variant' ? 'invalid_command' : code),
      );
      deps.onReviewQueued?.();
      return result;
    },

    'retry-publish': async (command) => {
      const key = str(command.payload.reviewKey) ?? command.reviewKey;
      if (!key) throw new CommandFailure('invalid_command', 'retry-publish needs a reviewKey');
      const run = await store.runs.getByKey(key);
      if (!run) throw new CommandFailure('run_not_found', `review run ${key} does not exist`);
      try {
        const outcome = await retryPublish(store, deps.publisher, deps.github, run.id);
        if (outcome.status === 'failed') {
          throw new CommandFailure('publish_failed', `publication failed: ${outcome.errors.join('; ')}`);
        }
        return {
          runId: run.id,
          reviewKey: run.reviewKey,
          publishStatus: outcome.status,
          event: outcome.event,
          mergeStatus: outcome.mergeStatus,
          conclusion: outcome.conclusion,
        };
      } catch (error) {
        if (error instanceof RetryPublishError) {
          throw new CommandFailure(error.code, error.message);
        }
        throw error;
      }
    },

    'replay-webhook': async (command) => {
      const id = str(command.payload.deliveryId) ?? command.deliveryId;
      if (!id) throw new CommandFailure('invalid_command', 'replay-webhook needs a deliveryId');
      return asCommand(
        replayDelivery(
          context(command),
          { deliveryId: id, force: command.payload.force === true },
          deps.dispatchDelivery,
        ),
      );
    },

    'sync-repositories': (command) => asCommand(syncRepositories(context(command), deps.app, deps.alerts)),
  };
}
