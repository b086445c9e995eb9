import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { RetryPublishError, retryPublish, type ReviewPublisher } from '../publish/review-publisher.js';
import type { GitHubClient } from '../github/client.js';
import { requeueReview, RequeueError } from '../review/requeue.js';
import type { Store } from '../store/index.js';
import { CommandFailure, type CommandExecutors } from './command-bridge.js';
import { replayRefusal } from '../services/webhooks.js';

/** The App-level GitHub calls repository sync needs (an App-authenticated and an installation Octokit). */
export type AppGitHub = {
  /** Every installation of the App (`GET /app/installations`, all pages). */
  installations(): Promise<Array<{ id: number; account: string | null; suspended: boolean }>>;
  /** The repositories one installation can reach (`GET /installation/repositories`, all pages). */
  repositories(installationId: number): Promise<string[]>;
};

export type ExecutorDeps = {
  store: Store;
  clock: Clock;
  log: Logger;
  publisher: ReviewPublisher;
  /** An installation's Octokit for live publication (never called in shadow publication mode). */
  github: (installationId: number) => Promise<GitHubClient>;
  /** Null without App credentials: repository sync then fails with `app_credentials_missing`. */
  app: AppGitHub | null;
  /** Dispatches a stored delivery into the Probot app again (what the webhooks lane does). */
  dispatchDelivery: (deliveryId: string) => Promise<void>;
  /** Wakes the review lane after a requeue. */
  onReviewQueued?: () => void;
};

function str(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/** What each command kind does when the bridge executes it (operator-api 2.3, review-engine 3.5, 7.5). */
export function commandExecutors(deps: ExecutorDeps): CommandExecutors {
  const { store } = deps;
  return {
    requeue: async (command) => {
      try {
        const result = await requeueReview(
          store,
          {
            reviewKey: str(command.payload.reviewKey) ?? command.reviewKey,
            repo: str(command.payload.repo) ?? command.repo,
            prNumber: Number(command.payload.number ?? command.prNumber),
          },
          { variant: str(command.payload.variant), now: deps.clock.now() },
        );
        deps.onReviewQueued?.();
        return result;
      } catch (error) {
        if (error instanceof RequeueError) {
          throw new CommandFailure(
            error.code === 'invalid_request' || error.code === 'invalid_variant'
              ? 'invalid_command'
              : error.code,
            error.message,
          );
        }
        throw error;
      }
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
      const force = command.payload.force === true;
      const delivery = await store.deliveries.get(id);
      if (!delivery) {
        throw new CommandFailure(
          'delivery_not_found',
          `webhook delivery ${id} is not recorded in this store`,
        );
      }
      const refusal = replayRefusal(id, delivery.status, force);
      if (refusal) throw new CommandFailure(refusal.code, refusal.message);
      const before = delivery.status;
      await deps.dispatchDelivery(id);
      const after = await store.deliveries.get(id);
      return {
        deliveryId: id,
        event: delivery.event,
        action: delivery.action,
        previousStatus: before,
        status: after?.status ?? null,
        outcome: after?.outcome ?? null,
        forced: force,
      };
    },

    'sync-repositories': async () => {
      if (!deps.app) {
        throw new CommandFailure(
          'app_credentials_missing',
          'repository sync needs the GitHub App credentials (APP_ID and PRIVATE_KEY)',
        );
      }
      const installations = await deps.app.installations();
      const seen = new Map<string, number>();
      for (const installation of installations) {
        if (installation.suspended) continue;
        for (const fullName of await deps.app.repositories(installation.id)) {
          seen.set(fullName, installation.id);
        }
      }
      const before = await store.repositories.list();
      const known = new Set(before.filter((r) => r.installed).map((r) => r.fullName));
      for (const [fullName, installationId] of seen) {
        await store.repositories.upsertInstalled(fullName, installationId);
      }
      // Every listing succeeded: an installed repository GitHub no longer lists is not installed any more.
      const removed = [...known].filter((name) => !seen.has(name));
      await store.repositories.markUninstalled(removed);
      const added = [...seen.keys()].filter((name) => !known.has(name));
      deps.log.info(
        { event: 'repositories-synced', installations: installations.length, repositories: seen.size },
        `repository sync: ${seen.size} repositories in ${installations.length} installations`,
      );
      return {
        installations: installations.length,
        repositories: seen.size,
        added: added.sort(),
        removed: removed.sort(),
      };
    },
  };
}
