import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import { defineOperation, notFound, REPO_PATTERN, text } from './operation.js';

/** Repository list: the read token, or an API key with `read`; configuration: the admin token. */
const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
const ADMIN: AccessRule = { classes: ['operatorAdmin'] };
const branchList = z.array(text(255).min(1)).max(100);

/** The repository configuration PATCH body (operator-api 2.8): unknown fields at any level are refused. */
export const repoConfigPatch = z
  .strictObject({
    enabled: z.boolean().optional(),
    branches: z.strictObject({ include: branchList.optional(), exclude: branchList.optional() }).optional(),
    validation: z
      .strictObject({
        provider: z.enum(['local', 'executor_a', 'executor_b', 'shadow']).optional(),
        codeChangesOnly: z.boolean().optional(),
      })
      .optional(),
    model: z
      .strictObject({
        provider: text(100).min(1).optional(),
        model: text(200).min(1).optional(),
        fallbackProvider: text(100).min(1).optional(),
        fallbackModel: text(200).min(1).optional(),
        reasoningEffort: text(50).min(1).optional(),
      })
      .optional(),
    alerts: z.strictObject({ telegram: z.boolean().optional(), target: text(300).optional() }).optional(),
    reason: text(1000).optional(),
  })
  .refine((b) => Object.keys(b).some((k) => k !== 'reason'), {
    message: 'give at least one configuration field',
    path: ['enabled'],
  });

export const repoOperations = {
  list: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { repos: await ctx.store.repositories.list() };
    },
  }),

  /** `PATCH /operator/api/repos/:encodedRepo` (operator-api 2.8), audited with the change. */
  configure: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({
      repo: z.string().regex(REPO_PATTERN, 'use one URL-encoded owner%2Fname segment'),
      body: repoConfigPatch,
    }),
    async run(ctx, { repo: fullName, body }) {
      const { reason, ...patch } = body;
      const repo = await ctx.store.repositories.configure(fullName, patch, {
        actor: ctx.principal.actor,
        reason: reason ?? null,
      });
      if (!repo) throw notFound(`No repository ${fullName}`);
      return { repo };
    },
  }),
};
