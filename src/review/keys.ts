/** The keys of a review: its identity and its pull request's waiting-job slot (review-engine 6.1, NAMES.md). */

/** `{owner}/{repo}#{pr}:latest-waiting` (6.1): at most one waiting review job per pull request. */
export function waitingJobKey(owner: string, repo: string, pr: number): string {
  return `${owner}/${repo}#${pr}:latest-waiting`;
}

/** `{owner}/{repo}#{pr}@{headSha}`, plus `:{variant}` when a variant is given (NAMES.md: a colon joins it). */
export function reviewKey(
  owner: string,
  repo: string,
  pr: number,
  headSha: string,
  variant?: string | null,
): string {
  const base = `${owner}/${repo}#${pr}@${headSha}`;
  return variant ? `${base}:${variant}` : base;
}
