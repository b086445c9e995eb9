import { raiseAlertQuietly } from '../alerts/raise.js';
import type { AppDeps } from './deps.js';

type InstallationPayload = {
  action: string;
  installation?: { id: number; account?: { login?: string } | null };
  repositories?: Array<{ full_name: string }>;
  repositories_added?: Array<{ full_name: string }>;
  repositories_removed?: Array<{ full_name: string }>;
};

/**
 * Keeps the repositories table in step with where the App is installed. NAMES.md "Installed means
 * reviewed": the repositories named by `installation.created` and `installation_repositories.added` are
 * enabled unless an operator configuration exists already; other installation actions only record them.
 */
export async function handleInstallation(
  deps: AppDeps,
  event: string,
  payload: InstallationPayload,
): Promise<string> {
  const installationId = payload.installation?.id ?? null;
  const repos = deps.store.repositories;
  const enable = {
    actor: `github:installation/${installationId ?? 'unknown'}`,
    reason: `the App was installed on the repository (${event}.${payload.action})`,
  };
  if (event === 'installation') {
    if (['deleted', 'suspend'].includes(payload.action)) {
      if (installationId !== null) await repos.markInstallationRemoved(installationId);
      const account = payload.installation?.account?.login ?? 'an account';
      const deleted = payload.action === 'deleted';
      await raiseAlertQuietly(
        { store: deps.store, log: deps.log, config: deps.config.scheduler },
        {
          kind: deleted ? 'installation_removed' : 'installation_suspended',
          repo: null,
          severity: 'critical',
          key: String(installationId ?? ''),
          message: deleted
            ? `The App was uninstalled from ${account} (installation ${installationId}): its repositories are no longer reviewed`
            : `The App's installation on ${account} (installation ${installationId}) was suspended: its repositories are not reviewed until it is unsuspended`,
        },
      );
      return 'installation_removed';
    }
    const created = payload.action === 'created';
    for (const r of payload.repositories ?? []) {
      await repos.upsertInstalled(r.full_name, installationId, created ? enable : undefined);
    }
    return 'repositories_synced';
  }
  for (const r of payload.repositories_added ?? []) {
    await repos.upsertInstalled(r.full_name, installationId, payload.action === 'added' ? enable : undefined);
  }
  const removed = (payload.repositories_removed ?? []).map((r) => r.full_name);
  await repos.markUninstalled(removed);
  for (const repo of removed) {
    await raiseAlertQuietly(
      { store: deps.store, log: deps.log, config: deps.config.scheduler },
      {
        kind: 'repository_access_lost',
        repo,
        severity: 'warning',
        message: `The App lost access to ${repo} (removed from installation ${installationId}): it is no longer reviewed`,
      },
    );
  }
  return 'repositories_synced';
}
