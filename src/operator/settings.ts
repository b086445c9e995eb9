import type { Logger } from 'pino';
import { z } from 'zod';
import { guard, type AccessRule, type ServiceTokens } from '../http/auth.js';
import { parseLimit } from '../http/query.js';
import { BodyTooLargeError, readBody, sendJson, type Router } from '../http/router.js';
import { POLICY_MAX_BODY_BYTES } from '../policy/policy.schema.js';
import type { Store } from '../store/index.js';

const READ: AccessRule = { classes: ['operatorRead'] };
const ADMIN: AccessRule = { classes: ['operatorAdmin'] };

export const settingsPatchBody = z.strictObject({
  revision: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  settings: z.unknown(),
});

const NOT_INITIALIZED = 'Review policy schema is not initialized';
const CONFLICT = 'Review policy revision conflict';
const UNAVAILABLE = 'Review policy storage is unavailable';

/**
 * The workspace review policy (operator-api 2.9, 3 "Policy revision", 4.6, 7): `GET /settings` (read
 * token; API keys can never read it), `PATCH /settings` (admin token; `{revision, settings}` merged over
 * the saved document), and `GET /settings/audit` (read token).
 */
export function registerSettingsRoutes(
  router: Router,
  deps: { store: Store; tokens: ServiceTokens; log: Logger },
): void {
  const { store, log } = deps;
  const auth = { tokens: deps.tokens, apiKeys: store.apiKeys };

  router.add('GET', '/operator/api/settings', async (req, res) => {
    if (!(await guard(req, res, auth, READ))) return;
    let policy;
    try {
      policy = await store.policy.get();
    } catch (error) {
      log.error({ event: 'policy-read-failed', err: error }, UNAVAILABLE);
      return sendJson(res, 500, { ok: false, error: 'policy_unavailable', message: UNAVAILABLE });
    }
    if (!policy)
      return sendJson(res, 503, { ok: false, error: 'policy_not_initialized', message: NOT_INITIALIZED });
    sendJson(res, 200, {
      ok: true,
      settings: policy.settings,
      revision: policy.revision,
      updatedAt: new Date(policy.updatedAt).toISOString(),
    });
  });

  router.add('PATCH', '/operator/api/settings', async (req, res) => {
    const who = await guard(req, res, auth, ADMIN);
    if (!who) return;
    let raw: Buffer;
    try {
      raw = await readBody(req, POLICY_MAX_BODY_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        return sendJson(res, 413, {
          ok: false,
          error: 'payload_too_large',
          message: 'Request body is too large',
        });
      }
      throw error;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      return sendJson(res, 400, {
        ok: false,
        error: 'invalid_json',
        message: 'Request body is not valid JSON',
      });
    }
    const body = settingsPatchBody.safeParse(json);
    if (!body.success) {
      const issue = body.error.issues[0];
      const field =
        issue?.code === 'unrecognized_keys' ? issue.keys[0] : (issue?.path.join('.') ?? 'body') || 'body';
      return sendJson(res, 400, {
        ok: false,
        error: 'invalid_request',
        message: `Unknown or invalid field: ${field}`,
      });
    }
    let result;
    try {
      result = await store.policy.update(body.data.revision, body.data.settings, who.actor);
    } catch (error) {
      log.error({ event: 'policy-write-failed', err: error }, UNAVAILABLE);
      return sendJson(res, 500, { ok: false, error: 'policy_unavailable', message: UNAVAILABLE });
    }
    if (result.ok) {
      return sendJson(res, 200, {
        ok: true,
        settings: result.policy.settings,
        revision: result.policy.revision,
        updatedAt: new Date(result.policy.updatedAt).toISOString(),
      });
    }
    switch (result.code) {
      case 'not_initialized':
        return sendJson(res, 503, { ok: false, error: 'policy_not_initialized', message: NOT_INITIALIZED });
      case 'revision_conflict':
        return sendJson(res, 409, {
          ok: false,
          error: 'revision_conflict',
          message: CONFLICT,
          revision: result.revision,
        });
      case 'invalid':
        return sendJson(res, 400, {
          ok: false,
          error: 'invalid_settings',
          message: result.message,
          path: result.path,
        });
    }
  });

  router.add('GET', '/operator/api/settings/audit', async (req, res, _params, url) => {
    if (!(await guard(req, res, auth, READ))) return;
    const q = url.searchParams.get('q')?.trim().toLowerCase() || undefined;
    if (q !== undefined && q.length > 300) {
      return sendJson(res, 400, {
        ok: false,
        error: 'invalid_request',
        message: 'Invalid parameter q: at most 300 characters',
      });
    }
    const limit = parseLimit(url.searchParams.get('limit'));
    const offsetText = url.searchParams.get('offset');
    const offset = offsetText !== null && /^\d{1,9}$/.test(offsetText) ? Number(offsetText) : 0;
    const entries = await store.audit.search({ q, limit, offset });
    sendJson(res, 200, { ok: true, entries, limit, offset });
  });
}
