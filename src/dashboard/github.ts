/**
 * "Sign in with GitHub" through the App's OAuth client: the code exchange, the user and their
 * organisations, and who is allowed in. Every failure is a code the login page shows.
 */

export type GithubSignInDeps = {
  /** https://github.com, or the GHES / fake host (GHE_HOST, GHE_PROTOCOL). */
  webUrl: string;
  /** The REST base URL (https://api.github.com, or `<GHE>/api/v3`). */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  allowedLogins: readonly string[];
  allowedOrgs: readonly string[];
  timeoutMs?: number;
};

/** Why a GitHub sign-in was refused (the `error` of `/operator/login?error=`). */
export type SignInError =
  | 'github_not_configured'
  | 'state_mismatch'
  | 'github_denied'
  | 'exchange_failed'
  | 'github_unreachable'
  | 'not_allowed';

export class SignInRefused extends Error {
  constructor(readonly code: SignInError) {
    super(code);
  }
}

export function authorizeUrl(
  deps: Pick<GithubSignInDeps, 'webUrl' | 'clientId'>,
  redirectUri: string,
  state: string,
): string {
  const query = new URLSearchParams({
    client_id: deps.clientId,
    redirect_uri: redirectUri,
    state,
    // Ignored for a GitHub App's client (its permissions apply); an OAuth App needs it to list orgs.
    scope: 'read:org',
    allow_signup: 'false',
  });
  return `${deps.webUrl}/login/oauth/authorize?${query.toString()}`;
}

async function call(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  try {
    return await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    throw new SignInRefused('github_unreachable');
  }
}

async function json(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    throw new SignInRefused('exchange_failed');
  }
}

/**
 * Exchanges the callback's code for a user token, reads the user (and, when organisations are listed,
 * their organisations) and decides: the login when allowed, else `not_allowed`. With neither list set
 * nobody is allowed. The user token is used for these reads only and never kept.
 */
export async function signInWithGithub(
  deps: GithubSignInDeps,
  code: string,
  redirectUri: string,
): Promise<string> {
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const exchange = await call(
    `${deps.webUrl}/login/oauth/access_token`,
    {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: deps.clientId,
        client_secret: deps.clientSecret,
        code,
        redirect_uri: redirectUri,
      }),
    },
    timeoutMs,
  );
  if (!exchange.ok) throw new SignInRefused('exchange_failed');
  const grant = (await json(exchange)) as { access_token?: unknown };
  if (typeof grant.access_token !== 'string' || grant.access_token.length === 0) {
    throw new SignInRefused('exchange_failed');
  }
  const headers = {
    authorization: `Bearer ${grant.access_token}`,
    accept: 'application/vnd.github+json',
    'user-agent': 'verdict-dashboard',
    'x-github-api-version': '2022-11-28',
  };
  const userAnswer = await call(`${deps.apiUrl}/user`, { headers }, timeoutMs);
  if (!userAnswer.ok) throw new SignInRefused('exchange_failed');
  const user = (await json(userAnswer)) as { login?: unknown };
  if (typeof user.login !== 'string' || user.login.length === 0) throw new SignInRefused('exchange_failed');
  const login = user.login;
  if (deps.allowedLogins.includes(login.toLowerCase())) return login;
  if (deps.allowedOrgs.length === 0) throw new SignInRefused('not_allowed');
  // The user's organisations, 100 a page, at most 10 pages.
  for (let page = 1; page <= 10; page++) {
    const answer = await call(`${deps.apiUrl}/user/orgs?per_page=100&page=${page}`, { headers }, timeoutMs);
    if (!answer.ok) throw new SignInRefused('not_allowed');
    const orgs = (await json(answer)) as unknown;
    if (!Array.isArray(orgs)) throw new SignInRefused('not_allowed');
    for (const org of orgs as Array<{ login?: unknown }>) {
      if (typeof org.login === 'string' && deps.allowedOrgs.includes(org.login.toLowerCase())) return login;
    }
    if (orgs.length < 100) break;
  }
  throw new SignInRefused('not_allowed');
}
