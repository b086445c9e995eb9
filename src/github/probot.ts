import { Probot, ProbotOctokit } from 'probot';
import type { Logger } from 'pino';
import type { GithubConfig } from '../config/index.js';

export class ShadowModeError extends Error {
  constructor(url: string) {
    super(`shadow mode: no GitHub App credentials, refusing to call ${url}`);
    this.name = 'ShadowModeError';
  }
}

/** Without App credentials no request ever leaves the process: this fetch refuses every call. */
const shadowFetch = async (input: unknown): Promise<Response> => {
  throw new ShadowModeError(
    typeof input === 'string' ? input : String((input as { url?: string })?.url ?? input),
  );
};

/**
 * The Probot instance webhooks are dispatched into. With App credentials its handlers get an
 * installation-authenticated Octokit; without them it runs in shadow mode (a placeholder token and a
 * fetch that refuses every call), so handlers run and record what they would have done.
 */
export function createProbot(github: GithubConfig, log: Logger): Probot {
  const common = {
    log: log.child({ name: 'probot' }) as any,
    baseUrl: github.baseUrl,
    secret: github.webhookSecret ?? undefined,
  };
  if (github.hasCredentials) {
    // Server errors are retried by @octokit/plugin-retry; rate limits (primary and secondary) wait as long
    // as GitHub asks and try again, at most `requestRetries` times, then the error is recorded.
    const onLimit =
      (kind: string) =>
      (
        retryAfter: number,
        options: { method?: string; url?: string },
        _octokit: unknown,
        retryCount: number,
      ) => {
        const retry = retryCount < github.requestRetries;
        log.warn(
          { event: 'github-rate-limit', kind, retryAfter, retryCount, url: options.url, retry },
          `GitHub ${kind} rate limit on ${options.method} ${options.url}: ${retry ? `retrying in ${retryAfter} s` : 'giving up'}`,
        );
        return retry;
      };
    return new Probot({
      ...common,
      appId: github.appId!,
      privateKey: github.privateKey!,
      // A function, so that it wins over the throttle options Probot adds on top (which never retry a
      // secondary rate limit).
      Octokit: ProbotOctokit.defaults((options: Record<string, any>) => ({
        ...options,
        retry: { ...options.retry, retries: github.requestRetries },
        throttle: {
          ...options.throttle,
          onRateLimit: onLimit('primary'),
          onSecondaryRateLimit: onLimit('secondary'),
        },
      })) as typeof ProbotOctokit,
    });
  }
  return new Probot({
    ...common,
    githubToken: 'verdict-shadow-mode',
    Octokit: ProbotOctokit.defaults({
      request: { fetch: shadowFetch, retries: 0 },
      retry: { enabled: false },
      throttle: { enabled: false },
    }) as typeof ProbotOctokit,
  });
}
