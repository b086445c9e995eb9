import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import { defineOperation, notFound } from './operation.js';

/** Test Lab reads: the read token, or an API key with `read` (operator-api 5.2 rule 2). */
const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };

/** Test Lab records: the harness records saved from analysed runs (newest first, at most 100). */
export const testLabOperations = {
  list: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { runs: await ctx.store.harness.list(100) };
    },
  }),
  get: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ id: z.string().min(1).max(200) }),
    async run(ctx, { id }) {
      const run = await ctx.store.harness.get(id);
      if (!run) throw notFound('Not found');
      return { run };
    },
  }),
};
