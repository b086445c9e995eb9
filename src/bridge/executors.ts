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
import type { CommandExecutors } from './command-bridge.js';
import {
  CommandFailure,
  forced,
  requeueFailureCode,
  requeueRequest,
  requiredField,
} from './command-rules.js';

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

/** The service's result; its refusal as the command's failure: its code (mapped by `code`) and message. */
async function asCommand<T>(work: Promise<T>, code?: (code: string) => string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof OperatorError || error instanceof RetryPublishError)
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
      const { ref, variant } = requeueRequest(command.payload, command);
      const result = await asCommand(requeue(context(command), ref, { variant }), requeueFailureCode);
      deps.onReviewQueued?.();
      return result;
    },

    'retry-publish': async (command) => {
      const key = requiredField('retry-publish', 'reviewKey', command.payload, command.reviewKey);
      const run = await store.runs.getByKey(key);
      if (!run) throw new CommandFailure('run_not_found', `review run ${key} does not exist`);
      const outcome = await asCommand(retryPublish(store, deps.publisher, deps.github, run.id));
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
    },

    'replay-webhook': async (command) => {
      const id = requiredField('replay-webhook', 'deliveryId', command.payload, command.deliveryId);
      return asCommand(
        replayDelivery(
          context(command),
          { deliveryId: id, force: forced(command.payload) },
          deps.dispatchDelivery,
        ),
      );
    },

    'sync-repositories': (command) => asCommand(syncRepositories(context(command), deps.app, deps.alerts)),
  };
}
