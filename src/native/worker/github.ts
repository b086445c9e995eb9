/**
 * GitHub App authentication in the worker (WebCrypto only, no Node crypto): an RS256 JWT signed with
 * `PRIVATE_KEY` (PKCS#1 or PKCS#8 PEM), exchanged for an installation token. The key never leaves the
 * worker; the container asks `broker.internal` for tokens.
 */
export type GitHubEnv = { APP_ID?: string; PRIVATE_KEY?: string; GHE_HOST?: string; GITHUB_API_URL?: string };

export function apiBase(env: GitHubEnv): string {
  if (env.GITHUB_API_URL) return env.GITHUB_API_URL.replace(/\/$/, '');
  return env.GHE_HOST ? `https://${env.GHE_HOST}/api/v3` : 'https://api.github.com';
}

function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return [0x80 | bytes.length, ...bytes];
}
const der = (tag: number, body: Uint8Array): Uint8Array =>
  new Uint8Array([tag, ...derLength(body.length), ...body]);

/** PKCS#1 RSAPrivateKey wrapped as PKCS#8 PrivateKeyInfo (WebCrypto imports only the latter). */
function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  const version = new Uint8Array([0x02, 0x01, 0x00]);
  // SEQUENCE { OID 1.2.840.113549.1.1.1 rsaEncryption, NULL }
  const algorithm = new Uint8Array([
    0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
  ]);
  const octets = der(0x04, pkcs1);
  return der(0x30, new Uint8Array([...version, ...algorithm, ...octets]));
}

function pemBytes(pem: string): Uint8Array {
  const b64 = pem
    .replace(/-----[^-]+-----/g, '')
    .replace(/\\n/g, '')
    .replace(/\s+/g, '');
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

const b64url = (bytes: Uint8Array | string): string => {
  const s = typeof bytes === 'string' ? bytes : String.fromCharCode(...bytes);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

export async function appJwt(
  appId: string,
  privateKey: string,
  nowSec = Math.floor(Date.now() / 1000),
): Promise<string> {
  const raw = pemBytes(privateKey);
  const pkcs8 = privateKey.includes('BEGIN RSA PRIVATE KEY') ? pkcs1ToPkcs8(raw) : raw;
  const key = await crypto.subtle.importKey(
    'pkcs8',
    pkcs8,
    { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ iat: nowSec - 60, exp: nowSec + 540, iss: appId }));
  const signed = new Uint8Array(
    await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, new TextEncoder().encode(`${header}.${claims}`)),
  );
  return `${header}.${claims}.${b64url(signed)}`;
}

export const headers = (auth: string) => ({
  authorization: auth,
  accept: 'application/vnd.github+json',
  'user-agent': 'verdict-native',
});

export async function installationToken(
  env: GitHubEnv,
  installationId: number,
): Promise<{ token: string; expiresAt: string }> {
  if (!env.APP_ID || !env.PRIVATE_KEY)
    throw new Error('APP_ID and PRIVATE_KEY are required to mint installation tokens');
  const jwt = await appJwt(env.APP_ID, env.PRIVATE_KEY);
  const res = await fetch(`${apiBase(env)}/app/installations/${installationId}/access_tokens`, {
    method: 'POST',
    headers: headers(`Bearer ${jwt}`),
  });
  if (!res.ok) throw new Error(`installation token: GitHub answered ${res.status}`);
  const body = (await res.json()) as { token: string; expires_at: string };
  return { token: body.token, expiresAt: body.expires_at };
}

/** The pull request's current head SHA, read from GitHub before dispatch (review-engine 3.4). */
export async function resolveHeadSha(
  env: GitHubEnv,
  installationId: number,
  repo: string,
  pr: number,
): Promise<string> {
  const { token } = await installationToken(env, installationId);
  const res = await fetch(`${apiBase(env)}/repos/${repo}/pulls/${pr}`, {
    headers: headers(`token ${token}`),
  });
  if (!res.ok) throw new Error(`pull request head: GitHub answered ${res.status}`);
  const body = (await res.json()) as { head?: { sha?: string } };
  if (!body.head?.sha) throw new Error('the review run has no headSha');
  return body.head.sha;
}

/** `Bearer <App JWT>`, for the App's own endpoints (`/app/...`). */
export async function appAuth(env: GitHubEnv): Promise<string> {
  if (!env.APP_ID || !env.PRIVATE_KEY) throw new Error('APP_ID and PRIVATE_KEY are required');
  return `Bearer ${await appJwt(env.APP_ID, env.PRIVATE_KEY)}`;
}

/**
 * Every page of a GitHub list (`per_page=100`, the `link` header's `rel="next"` followed), each page's
 * items picked by `items`; stops early when `enough` says so of a page. A refused page throws an error
 * carrying GitHub's `status`.
 */
export async function githubPages<T>(
  env: GitHubEnv,
  path: string,
  auth: string,
  items: (body: any) => T[],
  enough: (page: T[]) => boolean = () => false,
): Promise<T[]> {
  const out: T[] = [];
  let url: string | null = `${apiBase(env)}${path}${path.includes('?') ? '&' : '?'}per_page=100`;
  while (url) {
    const res: Response = await fetch(url, { headers: headers(auth) });
    if (!res.ok)
      throw Object.assign(new Error(`GET ${path}: GitHub answered ${res.status}`), { status: res.status });
    const page = items(await res.json());
    out.push(...page);
    if (enough(page)) break;
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
  }
  return out;
}
