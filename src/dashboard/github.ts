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

/** GitHub's JSON answer, refused as `refused` when it is not 2xx (each call waits at most 10 seconds). */
async function read(url: string, init: RequestInit, refused: SignInError): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  } catch {
    throw new SignInRefused('github_unreachable');
  }
  if (!response.ok) throw new SignInRefused(refused);
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
  const grant = (await read(
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
    'exchange_failed',
  )) as { access_token?: unknown };
  if (typeof grant.access_token !== 'string' || grant.access_token.length === 0) {
    throw new SignInRefused('exchange_failed');
  }
  const headers = {
    authorization: `Bearer ${grant.access_token}`,
    accept: 'application/vnd.github+json',
    'user-agent': 'verdict-dashboard',
    'x-github-api-version': '2022-11-28',
  };
  const user = (await read(`${deps.apiUrl}/user`, { headers }, 'exchange_failed')) as { login?: unknown };
  if (typeof user.login !== 'string' || user.login.length === 0) throw new SignInRefused('exchange_failed');
  const login = user.login;
  if (deps.allowedLogins.includes(login.toLowerCase())) return login;
  if (deps.allowedOrgs.length === 0) throw new SignInRefused('not_allowed');
  // The user's organisations, 100 a page, at most 10 pages.
  for (let page = 1; page <= 10; page++) {
    const orgs = await read(`${deps.apiUrl}/user/orgs?per_page=100&page=${page}`, { headers }, 'not_allowed');
    if (!Array.isArray(orgs)) throw new SignInRefused('not_allowed');
    for (const org of orgs as Array<{ login?: unknown }>) {
      if (typeof org.login === 'string' && deps.allowedOrgs.includes(org.login.toLowerCase())) return login;
    }
    if (orgs.length < 100) break;
  }
  throw new SignInRefused('not_allowed');
}
