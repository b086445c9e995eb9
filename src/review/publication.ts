import type { GitHubClient } from '../github/client.js';
import type { RunRecord } from '../store/runs.js';

/**
 * What the review engine asks of publication, in its own terms: show the check run in progress, fail it,
 * and publish an analysed run. `src/publish/` implements it (ReviewPublisher); the engine never imports
 * the publish folder, so the two folders do not depend on each other.
 */
export type Publication = {
  startCheck(gh: GitHubClient, run: RunRecord, headSha: string): Promise<void>;
  failCheck(gh: GitHubClient, run: RunRecord, error: string): Promise<void>;
  publish(gh: GitHubClient, run: RunRecord, assertLease?: () => Promise<void>): Promise<unknown>;
};
