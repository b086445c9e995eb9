import type { ProbotOctokit } from 'probot';

/** The installation-authenticated Octokit a review reads the pull request with and publishes through. */
export type GitHubClient = InstanceType<typeof ProbotOctokit>;
