import { verify } from 'node:crypto';

/**
 * Answers of GitHub and the model providers, shaped as the real APIs answer (their documentation's
 * examples, with our values), for the checks of `verdict doctor`.
 */

/** `GET /app` with the App's JWT: the App (GitHub REST "Get the authenticated app"). */
export function githubApp(overrides: { id?: number; slug?: string; name?: string; owner?: string } = {}) {
  const owner = overrides.owner ?? 'acme';
  const slug = overrides.slug ?? 'verdict-acme';
  return {
    id: overrides.id ?? 123456,
    slug,
    client_id: 'Iv23liAbCdEfGh123456',
    node_id: 'A_kwDOBQ0xYc4AAeJA',
    owner: {
      login: owner,
      id: 4242,
      node_id: 'O_kgDOAAAQkg',
      avatar_url: 'https://avatars.githubusercontent.com/u/4242?v=4',
      gravatar_id: '',
      url: `https://api.github.com/users/${owner}`,
      html_url: `https://github.com/${owner}`,
      followers_url: `https://api.github.com/users/${owner}/followers`,
      following_url: `https://api.github.com/users/${owner}/following{/other_user}`,
      gists_url: `https://api.github.com/users/${owner}/gists{/gist_id}`,
      starred_url: `https://api.github.com/users/${owner}/starred{/owner}{/repo}`,
      subscriptions_url: `https://api.github.com/users/${owner}/subscriptions`,
      organizations_url: `https://api.github.com/users/${owner}/orgs`,
      repos_url: `https://api.github.com/users/${owner}/repos`,
      events_url: `https://api.github.com/users/${owner}/events{/privacy}`,
      received_events_url: `https://api.github.com/users/${owner}/received_events`,
      type: 'Organization',
      user_view_type: 'public',
      site_admin: false,
    },
    name: overrides.name ?? 'Verdict (acme)',
    description: 'Reviews pull requests',
    external_url: 'https://verdict.acme.example',
    html_url: `https://github.com/apps/${slug}`,
    created_at: '2026-11-01T10:00:00Z',
    updated_at: '2026-11-01T10:00:00Z',
    permissions: {
      checks: 'write',
      contents: 'read',
      issues: 'write',
      metadata: 'read',
      pull_requests: 'write',
    },
    events: ['check_run', 'issue_comment', 'pull_request', 'pull_request_review'],
    installations_count: 1,
  };
}

/** GitHub's 401 for a JWT it cannot use. */
export const GITHUB_BAD_JWT = {
  message: 'A JSON web token could not be decoded',
  documentation_url: 'https://docs.github.com/rest',
  status: '401',
};

/**
 * Checks an App JWT as GitHub does: RS256 signed by `publicKey`, `iss` the App id, issued before `nowS`
 * and expiring after it, at most 10 minutes after it was issued.
 */
export function validAppJwt(authorization: string, publicKey: string, appId: number, nowS: number): boolean {
  const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(authorization);
  if (!m) return false;
  const [, header, payload, signature] = m as unknown as [string, string, string, string];
  const ok = verify(
    'sha256',
    Buffer.from(`${header}.${payload}`),
    publicKey,
    Buffer.from(signature, 'base64url'),
  );
  const h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  const p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  return ok && h.alg === 'RS256' && p.iss === appId && p.iat <= nowS && p.exp > nowS && p.exp - p.iat <= 600;
}

/** OpenAI `GET /v1/models`. */
export function openaiModels(ids: string[]) {
  return {
    object: 'list',
    data: ids.map((id, i) => ({ id, object: 'model', created: 1_715_367_049 + i, owned_by: 'system' })),
  };
}

/** OpenAI's 401 for a wrong key. */
export const OPENAI_BAD_KEY = {
  error: {
    message:
      'Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_api_key',
  },
};

/** Anthropic `GET /v1/models`. */
export function anthropicModels(ids: string[]) {
  return {
    data: ids.map((id) => ({
      type: 'model',
      id,
      display_name: id,
      created_at: '2025-05-22T00:00:00Z',
    })),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids[ids.length - 1] ?? null,
  };
}

/** Anthropic's 401 for a wrong key. */
export const ANTHROPIC_BAD_KEY = {
  type: 'error',
  error: { type: 'authentication_error', message: 'invalid x-api-key' },
};

const FREE = { prompt: '0', completion: '0', request: '0', image: '0' };
const PAID = { prompt: '0.0000025', completion: '0.00001', request: '0', image: '0.003613' };

/** OpenRouter `GET /api/v1/models`: each model free or paid. */
export function openrouterModels(models: Array<{ id: string; free: boolean }>) {
  return {
    data: models.map((m) => ({
      id: m.id,
      canonical_slug: m.id,
      name: m.id,
      created: 1_740_000_000,
      description: 'A model.',
      context_length: 131072,
      architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'] },
      pricing: m.free ? FREE : PAID,
      top_provider: { context_length: 131072, max_completion_tokens: 8192, is_moderated: false },
      per_request_limits: null,
    })),
  };
}
