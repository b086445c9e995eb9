/**
 * The command kinds of operator-api 2.3 as both bridges read and decide them: the Node bridge
 * (executors.ts) and the native one (src/native/worker/commands.ts). Here are each kind's payload fields
 * and their refusals, the failure a command ends with, what a requeue reviews (review-engine 4.5) and how
 * a repository sync reconciles the stored repositories with GitHub's listing. Each runtime brings its own
 * storage and GitHub calls. This module imports nothing Node-only, so the edge worker can bundle it.
 */
import { reviewKey } from '../review/keys.js';
import type { AlertInput } from '../store/alerts.js';

/**
 * A command that cannot be carried out, with the reason the operator reads on the command (`error`) and a
 * short code in its `result`.
 */
export class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/**
 * A required text field of a command: the payload's, else the command's own column (the Node store keeps
 * `reviewKey` and `deliveryId` on the command). Without it: `invalid_command`.
 */
export function requiredField(
  kind: string,
  field: 'reviewKey' | 'deliveryId',
  payload: Record<string, unknown>,
  column: string | null = null,
): string {
  const value = str(payload[field]) ?? column;
  if (!value) throw new CommandFailure('invalid_command', `${kind} needs a ${field}`);
  return value;
}

/** `replay-webhook`'s `force`: only `true` replays a delivery that was processed already. */
export const forced = (payload: Record<string, unknown>): boolean => payload.force === true;

/** The trigger of a requeued review (review-engine 4.5; a manual trigger for admission). */
export const REQUEUE_TRIGGER = 'operator_requeue';

/** What to requeue: a review key, or a repository and pull-request number (src/review/requeue.ts's). */
export type RequeueRef = { reviewKey?: string | null; repo?: string | null; prNumber?: number | null };
export type RequeueTarget = { repo: string; prNumber: number; headSha: string; installationId: number };

/**
 * What a `requeue` command asks for: a review key, or a repository plus `number` (the command's columns
 * stand in for absent payload fields), and an optional `variant`.
 */
export function requeueRequest(
  payload: Record<string, unknown>,
  columns: { reviewKey?: string | null; repo?: string | null; prNumber?: number | null } = {},
): { ref: RequeueRef; variant: string | null } {
  return {
    ref: {
      reviewKey: str(payload.reviewKey) ?? columns.reviewKey ?? null,
      repo: str(payload.repo) ?? columns.repo ?? null,
      prNumber: Number(payload.number ?? columns.prNumber),
    },
    variant: str(payload.variant),
  };
}

/** A requeue refused because its request or variant is malformed is an invalid command. */
export const requeueFailureCode = (code: string): string =>
  code === 'invalid_request' || code === 'invalid_variant' ? 'invalid_command' : code;

/**
 * Why a requeue cannot happen: its code and reason, as src/review/requeue.ts's RequeueError (the native
 * bridge's requeue refuses with these).
 */
export class RequeueRefusal extends Error {
  constructor(
    readonly code:
      | 'invalid_request'
      | 'invalid_variant'
      | 'review_not_found'
      | 'pr_not_found'
      | 'installation_missing'
      | 'review_exists',
    message: string,
  ) {
    super(message);
    this.name = 'RequeueRefusal';
  }
}

/** A variant joined to a review key (NAMES.md): letters, digits, dots, dashes, underscores. */
export const VARIANT_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;
const REVIEW_KEY = /^([^/#]+)\/([^#]+)#(\d+)@([0-9a-f]{40}|[0-9a-f]{64})(?::(.+))?$/;

/** The requeue's variant: the given one, else `operator-{now}`; refused unless it fits a review key. */
export function requeueVariant(variant: string | null | undefined, now: number): string {
  const chosen = variant || `operator-${now}`;
  if (!VARIANT_PATTERN.test(chosen)) {
    throw new RequeueRefusal(
      'invalid_variant',
      'the variant must be 1 to 100 letters, digits, dots, dashes or underscores',
    );
  }
  return chosen;
}

/** What a requeue reads of the stored state, in the runtime's own storage. */
export type RequeueLookups = {
  run(key: string): Promise<{
    repo: string;
    prNumber: number;
    headSha: string | null;
    installationId: number | null;
  } | null>;
  pullRequest(
    repo: string,
    prNumber: number,
  ): Promise<{ headSha: string | null; installationId: number | null } | null>;
  repository(repo: string): Promise<{ installationId: number | null } | null>;
};

/** The stored head a review key names: its stored run's, else the PR's stored head when the key names it. */
async function keyTarget(lookups: RequeueLookups, key: string) {
  const run = await lookups.run(key);
  const parts = REVIEW_KEY.exec(key);
  if (!run && !parts) throw new RequeueRefusal('invalid_request', `${key} is not a review key`);
  if (run) return run;
  const repo = `${parts![1]}/${parts![2]}`;
  const prNumber = Number(parts![3]);
  const pr = await lookups.pullRequest(repo, prNumber);
  if (!pr || pr.headSha !== parts![4]) {
    throw new RequeueRefusal(
      'review_not_found',
      `no stored review ${key}, and ${parts![4]!.slice(0, 12)} is not the stored head of ${repo}#${prNumber}`,
    );
  }
  return { repo, prNumber, headSha: pr.headSha, installationId: pr.installationId };
}

/**
 * What a requeue reviews (review-engine 4.5): the exact stored review key, or the stored head of the pull
 * request (by repo and number, or by a review key naming that head). It needs an installation id: the
 * run's, else the pull request's, else the repository's.
 */
export async function resolveRequeueTarget(lookups: RequeueLookups, ref: RequeueRef): Promise<RequeueTarget> {
  let found: { repo: string; prNumber: number; headSha: string | null; installationId: number | null };
  if (ref.reviewKey) {
    found = await keyTarget(lookups, ref.reviewKey);
  } else {
    const repo = ref.repo ?? '';
    const prNumber = Number(ref.prNumber);
    if (!repo || !Number.isSafeInteger(prNumber) || prNumber < 1) {
      throw new RequeueRefusal('invalid_request', 'requeue needs a reviewKey, or repo plus number');
    }
    const pr = await lookups.pullRequest(repo, prNumber);
    if (!pr?.headSha) throw new RequeueRefusal('pr_not_found', `no stored head for ${repo}#${prNumber}`);
    found = { repo, prNumber, headSha: pr.headSha, installationId: pr.installationId };
  }
  const { repo, prNumber } = found;
  const installationId =
    found.installationId ??
    (await lookups.pullRequest(repo, prNumber))?.installationId ??
    (await lookups.repository(repo))?.installationId ??
    null;
  if (installationId === null) {
    throw new RequeueRefusal(
      'installation_missing',
      `cannot requeue ${repo}#${prNumber}: the installation id is missing`,
    );
  }
  return { repo, prNumber, headSha: found.headSha!, installationId };
}

/** The review key of a requeued target under its variant. */
export function requeueKey(target: RequeueTarget, variant: string): string {
  const i = target.repo.indexOf('/');
  return reviewKey(
    target.repo.slice(0, i),
    target.repo.slice(i + 1),
    target.prNumber,
    target.headSha,
    variant,
  );
}

/** Run statuses after which a review of the same key may run again (src/review/request.ts). */
const TERMINAL_RETRYABLE = new Set(['skipped', 'failed', 'superseded', 'abandoned']);

/**
 * What a review request does with the run its key has already: a queued or running one is left as it is
 * (`already_queued`), one that ended without a review is queued again (`revive`), any other is
 * `already_reviewed`.
 */
export function existingRunOutcome(status: string): 'already_queued' | 'already_reviewed' | 'revive' {
  if (status === 'queued' || status === 'running') return 'already_queued';
  return TERMINAL_RETRYABLE.has(status) ? 'revive' : 'already_reviewed';
}

/** A sync without the App's credentials cannot list anything. */
export const APP_CREDENTIALS_MISSING = {
  code: 'app_credentials_missing',
  message: 'repository sync needs the GitHub App credentials (APP_ID and PRIVATE_KEY)',
} as const;

/** The GitHub side of a repository sync (src/services/repos.ts's `AppGitHub`). */
export type RepositorySyncGitHub = {
  /** Every installation of the App (`GET /app/installations`, all pages). */
  installations(): Promise<Array<{ id: number; suspended: boolean }>>;
  /** The repositories one installation can reach (`GET /installation/repositories`, all pages). */
  repositories(installationId: number): Promise<string[]>;
};

/** The storage side of a repository sync. */
export type RepositorySyncStore = {
  /** The stored repositories recorded as installed. */
  installed(): Promise<string[]>;
  /** Records the repository installed with its installation, enabled unless it has a configuration. */
  upsertInstalled(fullName: string, installationId: number): Promise<void>;
  markUninstalled(fullNames: string[]): Promise<void>;
  /** Raises an alert; a failure to record it does not fail the sync. */
  alert(input: AlertInput): Promise<void>;
};

export type RepositorySyncResult = {
  installations: number;
  repositories: number;
  added: string[];
  removed: string[];
};

/**
 * Repository sync (the `sync-repositories` command): every repository of every installation that is not
 * suspended is recorded as installed with its installation (NAMES.md "Installed means reviewed": enabled
 * unless an operator configuration exists); once every listing has succeeded, an installed repository
 * GitHub no longer lists is marked uninstalled and raises `repository_access_lost`.
 */
export async function reconcileRepositories(
  app: RepositorySyncGitHub,
  store: RepositorySyncStore,
): Promise<RepositorySyncResult> {
  const installations = await app.installations();
  const seen = new Map<string, number>();
  for (const installation of installations) {
    if (installation.suspended) continue;
    for (const fullName of await app.repositories(installation.id)) seen.set(fullName, installation.id);
  }
  const known = new Set(await store.installed());
  for (const [fullName, installationId] of seen) await store.upsertInstalled(fullName, installationId);
  const removed = [...known].filter((name) => !seen.has(name));
  await store.markUninstalled(removed);
  for (const repo of removed) {
    await store.alert({
      kind: 'repository_access_lost',
      repo,
      severity: 'warning',
      message: `The App can no longer reach ${repo} (repository sync): it is no longer reviewed`,
    });
  }
  const added = [...seen.keys()].filter((name) => !known.has(name));
  return {
    installations: installations.length,
    repositories: seen.size,
    added: added.sort(),
    removed: removed.sort(),
  };
}
