/**
 * Repository sync (the `sync-repositories` command) as a rule over the App's GitHub listing and a
 * storage port, so that the Node service (repos.ts) and the native worker
 * (src/native/worker/repo-sync.ts) run the same reconciliation. Nothing Node-only is imported.
 */
import type { AlertInput } from '../store/alerts.js';

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
