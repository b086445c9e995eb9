/**
 * The native bridge's `sync-repositories`: the Node bridge's rule (`reconcileRepositories`,
 * src/services/repo-sync.ts) over the worker's GitHub access (github.ts: the App JWT for
 * `GET /app/installations`, an installation token for `GET /installation/repositories`) and D1's
 * `repositories`, the state table the containers read.
 */
import { CommandFailure } from '../../bridge/command-rules.js';
import {
  APP_CREDENTIALS_MISSING,
  reconcileRepositories,
  type RepositorySyncGitHub,
  type RepositorySyncResult,
  type RepositorySyncStore,
} from '../../services/repo-sync.js';
import { raiseNativeAlert } from './alerts.js';
import type { Env } from './env.js';
import { appAuth, githubPages, installationToken } from './github.js';

type Installation = { id: number; suspended_at?: string | null };

function appGitHub(env: Env): RepositorySyncGitHub {
  return {
    installations: async () =>
      githubPages(env, '/app/installations', await appAuth(env), (body: Installation[]) =>
        body.map((i) => ({ id: i.id, suspended: Boolean(i.suspended_at) })),
      ),
    repositories: async (installationId) => {
      const { token } = await installationToken(env, installationId);
      return githubPages(
        env,
        '/installation/repositories',
        `token ${token}`,
        (body: { repositories: Array<{ full_name: string }> }) => body.repositories.map((r) => r.full_name),
      );
    },
  };
}

/**
 * `repositories` in D1 as the Node store writes it (times in epoch milliseconds). A repository without a
 * configuration is enabled with `{ "enabled": true }`; the Node store's audit entry of that is not written
 * (D1 has no audit table).
 */
function d1Repositories(env: Env, now: number): RepositorySyncStore {
  return {
    installed: async () =>
      (
        await env.DB.prepare(
          'SELECT full_name FROM repositories WHERE installed = 1 ORDER BY full_name',
        ).all<{ full_name: string }>()
      ).results.map((r) => r.full_name),
    upsertInstalled: async (fullName, installationId) => {
      const slash = fullName.indexOf('/');
      await env.DB.batch([
        env.DB.prepare(
          `INSERT INTO repositories (full_name, owner, name, installation_id, installed, created_at, updated_at)
           VALUES (?, ?, ?, ?, 1, ?, ?)
           ON CONFLICT (full_name) DO UPDATE SET installation_id = excluded.installation_id, installed = 1,
             updated_at = excluded.updated_at`,
        ).bind(fullName, fullName.slice(0, slash), fullName.slice(slash + 1), installationId, now, now),
        env.DB.prepare(
          'UPDATE repositories SET config = ?, updated_at = ? WHERE full_name = ? AND config IS NULL',
        ).bind(JSON.stringify({ enabled: true }), now, fullName),
      ]);
    },
    markUninstalled: async (fullNames) => {
      if (fullNames.length === 0) return;
      await env.DB.batch(
        fullNames.map((name) =>
          env.DB.prepare('UPDATE repositories SET installed = 0, updated_at = ? WHERE full_name = ?').bind(
            now,
            name,
          ),
        ),
      );
    },
    alert: async (input) => {
      try {
        await raiseNativeAlert(env, input, now);
      } catch (error) {
        console.log(JSON.stringify({ event: 'alert-failed', kind: input.kind, err: String(error) }));
      }
    },
  };
}

export async function syncRepositoriesCommand(env: Env, now: number): Promise<RepositorySyncResult> {
  if (!env.APP_ID || !env.PRIVATE_KEY)
    throw new CommandFailure(APP_CREDENTIALS_MISSING.code, APP_CREDENTIALS_MISSING.message);
  const result = await reconcileRepositories(appGitHub(env), d1Repositories(env, now));
  console.log(JSON.stringify({ event: 'repositories-synced', ...result }));
  return result;
}
