import { z } from 'zod';
import { TRACE_STATUSES } from '../store/traces.js';
import {
  defineOperation,
  limitParam,
  notFound,
  positiveIntParam,
  READ_OR_KEY,
  REPO_PATTERN,
  searchParam,
} from './operation.js';

const nonEmpty = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);

export const traceOperations = {
  /** Trace summaries (operator-api 2.6, 4.1): filters on indexed columns; `pr` is `prNumber`'s alias. */
  list: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z
      .object({
        repo: z.string().regex(REPO_PATTERN, 'must be owner/name').optional(),
        prNumber: positiveIntParam.optional(),
        pr: positiveIntParam.optional(),
        reviewKey: searchParam.optional(),
        runId: searchParam.optional(),
        status: z.enum(TRACE_STATUSES, { error: `one of ${TRACE_STATUSES.join(', ')}` }).optional(),
        limit: limitParam,
      })
      .refine((q) => q.pr === undefined || q.prNumber === undefined || q.pr === q.prNumber, {
        message: 'pr and prNumber disagree',
        path: ['pr'],
      }),
    async run(ctx, input) {
      const traces = await ctx.store.traces.list({
        repo: input.repo,
        prNumber: input.prNumber ?? input.pr,
        reviewKey: nonEmpty(input.reviewKey),
        runId: nonEmpty(input.runId),
        status: input.status,
        limit: input.limit,
      });
      return { traces };
    },
  }),

  get: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ traceId: z.string().min(1).max(1000) }),
    async run(ctx, { traceId }) {
      const found = await ctx.store.traces.get(traceId);
      if (!found) throw notFound('No such trace');
      return { trace: found.trace, spans: found.spans };
    },
  }),
};
