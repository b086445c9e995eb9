import type { Logger } from 'pino';
import { raiseAlertQuietly, type AlertDeps } from '../alerts/raise.js';
import type { Clock } from '../clock.js';
import { requestReview } from '../review/request.js';
import { writeTransaction } from '../store/db.js';
import type { Store } from '../store/index.js';
import { splitFullName } from '../store/repositories.js';
import type { GitHubClient } from '../github/client.js';
import { MAX_REACTION_PRS_PER_PASS } from './reaction-pass.js';
import { readOpenPrReactions } from './reactions.js';
import {
  CATCH_UP_TRIGGER,
  MAX_REDELIVERIES_PER_PASS,
  REDELIVERY_WINDOW_MS,
  catchUpAlerts,
  undelivered,
  type HookDelivery,
} from './redelivery.js';

export { CATCH_UP_TRIGGER, MAX_REDELIVERIES_PER_PASS, REDELIVERY_WINDOW_MS, type HookDelivery };

/** An open pull request as `GET /repos/{owner}/{repo}/pulls?state=open` lists it. */
export type OpenPullRequest = {
  number: number;
  headSha: string;
  baseRef: string;
  headRef: string;
  title: string;
  author: string | null;
  draft: boolean;
};

/** The GitHub calls of the loop: App-level (JWT) for deliveries, the installation's for pull requests. */
export type CatchUpGitHub = {
  /** The App's delivery attempts made at or after `since`, newest first (cursor pagination, stops at `since`). */
  deliveries(since: number): Promise<HookDelivery[]>;
  /** Asks GitHub to deliver the attempt `id` again. */
  redeliver(id: number): Promise<void>;
  /** Every open pull request of `repo`. */
  openPullRequests(repo: string, installationId: number): Promise<OpenPullRequest[]>;
  /** The installation's Octokit (the feedback step reads reactions with it); absent: no feedback step. */
  installation?(installationId: number): Promise<GitHubClient>;
};

export type CatchUpDeps = {
  store: Store;
  /** Where the pass's alerts go (`webhook_deliveries_failed`, `redelivery_failed`); absent: none raised. */
  alerts?: AlertDeps;
  /** Null without App credentials: the pass then does nothing and says why. */
  github: CatchUpGitHub | null;
  clock: Clock;
  log: Logger;
};

export type CatchUpArtifact = {
  /** The GUIDs GitHub was asked to deliver again. */
  redelivered: string[];
  /** Review keys of the catch-up reviews queued. */
  enqueued: string[];
  /** Failed deliveries left for the next pass (over the per-pass cap). */
  deferred: number;
  /** What could not be done, one line each (a failed redelivery, a repository GitHub refused to list). */
  errors: string[];
  /** The feedback step: new reactions counted on Verdict's line comments of open pull requests. */
  reactions?: number;
  skipped?: 'app_credentials_missing';
};

/**
 * One pass of `pr-agent-loop` (NAMES.md "Never missing a pull request"): GitHub never redelivers a failed
 * webhook on its own, so (1) every delivery of the last 72 hours that no attempt delivered (no 2xx) and
 * that this store does not hold is redelivered, the latest attempt's id, at most 50 a pass; (2) every open
 * pull request of an enabled, installed repository whose head has no run gets a review (trigger
 * `catch_up`; the worker's admission applies the automatic rules: branches, drafts, `review.auto`); (3)
 * the reactions on Verdict's line comments of those open pull requests are read (reactions.ts) when the
 * installation's client is given. A failure of one redelivery, repository or pull request is recorded
 * and the pass goes on.
 */
export async function runCatchUp(deps: CatchUpDeps): Promise<CatchUpArtifact> {
  const { store, github, log } = deps;
  const artifact: CatchUpArtifact = { redelivered: [], enqueued: [], deferred: 0, errors: [] };
  if (!github) return { ...artifact, skipped: 'app_credentials_missing' };

  const failed = await redeliverFailed(store, github, deps.clock.now(), artifact);

  const reactionBudget = { left: MAX_REACTION_PRS_PER_PASS };
  for (const repo of await store.repositories.list()) {
    if (!repo.installed || repo.installationId === null || repo.config?.enabled !== true) continue;
    let open: OpenPullRequest[];
    try {
      open = await github.openPullRequests(repo.fullName, repo.installationId);
    } catch (error) {
      artifact.errors.push(
        `listing the open pull requests of ${repo.fullName} failed: ${(error as Error).message}`,
      );
      continue;
    }
    const installationId = repo.installationId;
    artifact.enqueued.push(...(await queueCatchUps(store, repo.fullName, installationId, open)));
    // (3) Feedback: reactions on Verdict's line comments of the open pull requests (reactions.ts).
    if (github.installation) {
      const gh = () => github.installation!(installationId);
      const read = await readOpenPrReactions(deps, gh, repo.fullName, open, reactionBudget);
      artifact.reactions = (artifact.reactions ?? 0) + read.reactions;
      artifact.errors.push(...read.errors);
    }
  }
  const reactions = artifact.reactions ?? 0;
  if (artifact.redelivered.length + artifact.enqueued.length + artifact.errors.length + reactions > 0) {
    log.info(
      {
        event: 'catch-up',
        redelivered: artifact.redelivered.length,
        enqueued: artifact.enqueued.length,
        reactions,
        deferred: artifact.deferred,
        errors: artifact.errors.length,
      },
      `pr-agent-loop: ${artifact.redelivered.length} deliveries redelivered, ${artifact.enqueued.length} catch-up reviews queued`,
    );
  }
  for (const error of artifact.errors) log.warn({ event: 'catch-up-error' }, `pr-agent-loop: ${error}`);
  if (deps.alerts) {
    for (const alert of catchUpAlerts(failed.length, artifact)) await raiseAlertQuietly(deps.alerts, alert);
  }
  return artifact;
}

/** Step (1): redelivers the failed deliveries not stored here, oldest first; returns all of them. */
async function redeliverFailed(
  store: Store,
  github: CatchUpGitHub,
  now: number,
  artifact: CatchUpArtifact,
): Promise<HookDelivery[]> {
  let attempts: HookDelivery[] = [];
  try {
    attempts = await github.deliveries(now - REDELIVERY_WINDOW_MS);
  } catch (error) {
    artifact.errors.push(`listing the App's webhook deliveries failed: ${(error as Error).message}`);
  }
  const failed: HookDelivery[] = [];
  for (const attempt of undelivered(attempts, now)) {
    // Stored here (recorded, or its dedupe marker still held): it reached us, whatever GitHub noted.
    const { guid } = attempt;
    if ((await store.deliveries.get(guid)) || (await store.deliveries.markerExists(guid))) continue;
    failed.push(attempt);
  }
  artifact.deferred = Math.max(0, failed.length - MAX_REDELIVERIES_PER_PASS);
  for (const attempt of failed.slice(0, MAX_REDELIVERIES_PER_PASS)) {
    try {
      await github.redeliver(attempt.id);
      artifact.redelivered.push(attempt.guid);
    } catch (error) {
      artifact.errors.push(
        `redelivery of ${attempt.guid} (${attempt.event}) failed: ${(error as Error).message}`,
      );
    }
  }
  return failed;
}

/** Step (2): catch-up reviews for the open pull requests of `repo` whose head has no run, in one commit. */
async function queueCatchUps(
  store: Store,
  repo: string,
  installationId: number,
  open: OpenPullRequest[],
): Promise<string[]> {
  const missing: OpenPullRequest[] = [];
  for (const pr of open) {
    const runs = await store.runs.listForPr(repo, pr.number);
    if (!runs.some((run) => run.headSha === pr.headSha)) missing.push(pr);
  }
  const { owner, name } = splitFullName(repo);
  // One commit per repository: a first pass over a backlog is not one fsync per pull request.
  if (missing.length === 0) return [];
  return writeTransaction(store.db.knex, async (trx) => {
    const queued: string[] = [];
    for (const pr of missing) {
      await store.pullRequests.upsert(
        {
          repo,
          number: pr.number,
          headSha: pr.headSha,
          baseRef: pr.baseRef,
          headRef: pr.headRef,
          title: pr.title,
          author: pr.author,
          draft: pr.draft,
          installationId,
        },
        trx,
      );
      const request = { owner, repo: name, number: pr.number, headSha: pr.headSha, installationId };
      const result = await requestReview(store, { ...request, trigger: CATCH_UP_TRIGGER }, trx);
      queued.push(result.run.reviewKey);
    }
    return queued;
  });
}
