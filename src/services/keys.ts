import { z } from 'zod';
import { plainText } from '../http/text.js';
import { API_KEY_SCOPES } from '../store/api-keys.js';
import { ADMIN, defineOperation, notFound, searchParam } from './operation.js';

/**
 * Key management (operator-api 4.6, 5.2): operator admin token only; a generated key can never manage
 * keys. The token is returned once, at creation. Creation and revocation are audited.
 */
export const keyOperations = {
  /** `POST /keys` (201): the key's metadata, its token (shown once) and `apiBaseUrl`; audited. */
  create: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({
      name: plainText(200, { trim: true, min: 1 }),
      scopes: z.array(z.enum(API_KEY_SCOPES)).min(1).max(API_KEY_SCOPES.length).default(['read']),
    }),
    async run(ctx, body) {
      const actor = ctx.principal.actor;
      const { key, token } = await ctx.store.apiKeys.create({ ...body, actor });
      await ctx.store.audit
        .record({ actor, action: 'keys.create', target: key.id, detail: { scopes: key.scopes } })
        .catch((error) => ctx.log.error({ event: 'audit-failed', err: error }, 'key creation not audited'));
      // Where the key's holder sends requests: VERDICT_PUBLIC_URL, else this request's own host.
      const base = ctx.publicUrl ? ctx.publicUrl.replace(/\/+$/, '') : ctx.origin;
      return { key, token, apiBaseUrl: `${base}/operator/api` };
    },
  }),

  /** `GET /keys?q=`: metadata only. */
  list: defineOperation({
    rule: ADMIN,
    type: 'query',
    input: z.object({ q: searchParam.optional() }),
    async run(ctx, { q }) {
      return { keys: await ctx.store.apiKeys.list({ q }) };
    },
  }),

  /** `POST /keys/:id/revoke`: a revoked key fails authentication afterwards; audited once. */
  revoke: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.object({ id: z.string().min(1).max(1000) }),
    async run(ctx, { id }) {
      const existing = await ctx.store.apiKeys.get(id);
      if (!existing) throw notFound('No such API key');
      const actor = ctx.principal.actor;
      const key = await ctx.store.apiKeys.revoke(existing.id, actor);
      if (existing.status === 'active') {
        await ctx.store.audit
          .record({ actor, action: 'keys.revoke', target: existing.id })
          .catch((error) =>
            ctx.log.error({ event: 'audit-failed', err: error }, 'key revocation not audited'),
          );
      }
      return { key };
    },
  }),
};
