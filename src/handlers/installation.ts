import type { AppDeps } from './app.js';

type InstallationPayload = {
  action: string;
  installation?: { id: number };
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
  await repos.markUninstalled((payload.repositories_removed ?? []).map((r) => r.full_name));
  return 'repositories_synced';
}
