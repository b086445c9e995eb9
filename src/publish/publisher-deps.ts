import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { PublicationKind } from '../store/publications.js';
import type { RunRecord } from '../store/runs.js';
import type { Attempt, PublicationLedger, PublishMode } from './ledger.js';

export type PublisherDeps = {
  store: Store;
  mode: PublishMode;
  /** `Verdict`; the check run is named `{productName} / review` unless `checkName` says otherwise. */
  productName: string;
  checkName: string;
  botHandle: string;
  /** Web base URL for links to files (https://github.com, or the GHES host). */
  webUrl?: string;
  /** Links to the files of findings in the body (default true; off where the repository is not on GitHub). */
  fileLinks?: boolean;
  log: Logger;
  /**
   * How many times a publication answered with a server error (or no answer) is looked for on GitHub and
   * sent again (`VERDICT_GITHUB_RETRIES`; Octokit does not retry those calls itself).
   */
  requestRetries?: number;
  /** Every step looks on GitHub before it is sent, even with no attempt on record (ledger.ts `lookFirst`). */
  lookFirst?: boolean;
};

/** What each part of the review publisher works with: its dependencies and the publication ledger. */
export type PublishContext = { deps: PublisherDeps; ledger: PublicationLedger };

export function splitRepo(fullName: string) {
  const i = fullName.indexOf('/');
  return { owner: fullName.slice(0, i), repo: fullName.slice(i + 1) };
}

/** An attempt of a run's publication (the ledger row's run, repository and pull request). */
export function ofRun(
  run: RunRecord,
  kind: PublicationKind,
  body: string,
  extra: { request?: unknown; step?: string } = {},
): Attempt {
  return { runId: run.id, repo: run.repo, prNumber: run.prNumber, kind, body, ...extra };
}

/** A link to lines of a file at a commit, on GitHub's web. */
export function fileUrl(
  deps: PublisherDeps,
  repo: string,
  sha: string,
  path: string,
  line?: number | null,
  endLine?: number | null,
): string {
  const web = deps.webUrl ?? 'https://github.com';
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  const lines = line ? `#L${line}${endLine && endLine !== line ? `-L${endLine}` : ''}` : '';
  return `${web}/${repo}/blob/${sha}/${encoded}${lines}`;
}
