import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import { guard, type ServiceTokens } from '../http/auth.js';
import { readJsonBody } from '../http/json.js';
import { sendJson, type Router } from '../http/router.js';
import { API_KEY_SCOPES } from '../store/api-keys.js';
import type { Store } from '../store/index.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export const createKeyBody = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters'),
  scopes: z.array(z.enum(API_KEY_SCOPES)).min(1).max(API_KEY_SCOPES.length).default(['read']),
});

const ADMIN = { classes: ['operatorAdmin'] } as const;

/** Where a key's holder sends requests: VERDICT_PUBLIC_URL, else this request's own host. */
function apiBaseUrl(req: IncomingMessage, publicUrl: string | null): string {
  if (publicUrl) return `${publicUrl.replace(/\/+$/, '')}/operator/api`;
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() || 'http';
  return `${proto}://${req.headers.host ?? 'localhost'}/operator/api`;
}

/**
 * Key management (operator-api 4.6, 5.2): operator admin token only; a generated key can never manage
 * keys (it gets 403). The token is returned once, at creation. Creation and revocation are audited.
 */
export function registerKeyRoutes(
  router: Router,
  deps: { store: Store; tokens: ServiceTokens; log: Logger; publicUrl: string | null },
): void {
  const { store } = deps;
  const auth = { tokens: deps.tokens, apiKeys: store.apiKeys };

  router.add('POST', '/operator/api/keys', async (req, res) => {
    const who = await guard(req, res, auth, ADMIN);
    if (!who) return;
    const body = await readJsonBody(req, res, createKeyBody, 64 * 1024);
    if (!body.ok) return;
    const { key, token } = await store.apiKeys.create({ ...body.value, actor: who.actor });
    await store.audit
      .record({ actor: who.actor, action: 'keys.create', target: key.id, detail: { scopes: key.scopes } })
      .catch((error) => deps.log.error({ event: 'audit-failed', err: error }, 'key creation not audited'));
    sendJson(res, 201, { ok: true, key, token, apiBaseUrl: apiBaseUrl(req, deps.publicUrl) });
  });

  router.add('GET', '/operator/api/keys', async (req, res, _params, url) => {
    if (!(await guard(req, res, auth, ADMIN))) return;
    const q = url.searchParams.get('q') ?? undefined;
    if (q !== undefined && q.length > 300) {
      return sendJson(res, 400, {
        ok: false,
        error: 'invalid_request',
        message: 'Invalid parameter q: at most 300 characters',
      });
    }
    sendJson(res, 200, { ok: true, keys: await store.apiKeys.list({ q }) });
  });

  router.add('POST', '/operator/api/keys/:id/revoke', async (req, res, params) => {
    const who = await guard(req, res, auth, ADMIN);
    if (!who) return;
    req.resume();
    const existing = await store.apiKeys.get(params.id!);
    if (!existing) return sendJson(res, 404, { ok: false, error: 'not_found', message: 'No such API key' });
    const key = await store.apiKeys.revoke(existing.id, who.actor);
    if (existing.status === 'active') {
      await store.audit
        .record({ actor: who.actor, action: 'keys.revoke', target: existing.id })
        .catch((error) =>
          deps.log.error({ event: 'audit-failed', err: error }, 'key revocation not audited'),
        );
    }
    sendJson(res, 200, { ok: true, key });
  });
}
