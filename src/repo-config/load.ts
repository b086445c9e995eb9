import type { Logger } from 'pino';
import { configErrorFingerprint, resolveRepoConfig, type RepoConfigResult } from './schema.js';
import type { ReplyOctokit, ReplyPublisher } from '../publish/replies.js';
import type { Store } from '../store/index.js';

export const REPO_CONFIG_FILE = 'verdict.yml';

/** The part of a Probot context that loads `.github/verdict.yml` (with `_extends` from the org's `.github`). */
export type ConfigContext = { config<T>(fileName: string): Promise<T | null> };

/**
 * Loads and validates the standalone repository config of review-engine 2.7. Absent file → defaults.
 * An invalid file → defaults too, and the error is reported once on the PR (per distinct error), not on
 * every event. In shadow mode the file cannot be read: defaults apply.
 */
export async function loadRepoConfig(
  context: ConfigContext,
  deps: { store: Store; log: Logger; replies: ReplyPublisher; octokit: ReplyOctokit; live: boolean },
  target: { owner: string; repo: string; number: number },
): Promise<RepoConfigResult> {
  if (!deps.live) return resolveRepoConfig(null); // shadow mode: nothing can be read from GitHub
  let raw: unknown = null;
  let result: RepoConfigResult;
  try {
    raw = await context.config<unknown>(REPO_CONFIG_FILE);
    result = resolveRepoConfig(raw);
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status !== undefined && status !== 404) throw error; // GitHub trouble: let the job retry
    result = {
      ...resolveRepoConfig(null),
      error: `.github/${REPO_CONFIG_FILE} could not be parsed: ${(error as Error).message}`,
    } as RepoConfigResult;
  }
  const fullName = `${target.owner}/${target.repo}`;
  await deps.store.repositories.setStandaloneConfig(fullName, result.config);
  if (result.error !== null) {
    const first = await deps.store.commentCommands.claimConfigReport(
      fullName,
      target.number,
      configErrorFingerprint(result.error),
      result.error,
    );
    deps.log.warn(
      { event: 'repo-config-invalid', repo: fullName, error: result.error, reported: first },
      'invalid repository config',
    );
    if (first) {
      await deps.replies.comment(
        deps.octokit,
        target,
        [
          `**Verdict:** \`.github/${REPO_CONFIG_FILE}\` is invalid, so the default configuration applies.`,
          '',
          '```text',
          result.error.replace(/`/g, "'"),
          '```',
        ].join('\n'),
      );
    }
  }
  return result;
}
