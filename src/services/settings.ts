import { z } from 'zod';
import { POLICY_MAX_BODY_BYTES } from '../policy/policy.schema.js';
import { dayParam } from '../reports/params.js';
import type { StoredPolicy } from '../store/policy.js';
import { usageWindow, UsageTooLargeError } from '../store/usage.js';
import {
  ADMIN,
  defineOperation,
  OperatorError,
  pageParams,
  READ,
  READ_OR_KEY,
  searchParam,
} from './operation.js';

const NOT_INITIALIZED = 'Review policy schema is not initialized';
const CONFLICT = 'Review policy revision conflict';
const UNAVAILABLE = 'Review policy storage is unavailable';

const notInitialized = () => new OperatorError(503, 'policy_not_initialized', NOT_INITIALIZED);
const unavailable = () => new OperatorError(500, 'policy_unavailable', UNAVAILABLE);

/** A UTC calendar day `YYYY-MM-DD` that exists, as the epoch milliseconds of its midnight. */
const utcDay = dayParam.transform((s) => Date.parse(`${s}T00:00:00Z`));

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The policy as `GET` and `PATCH /settings` answer it. */
const policyAnswer = (policy: StoredPolicy) => ({
  settings: policy.settings,
  revision: policy.revision,
  updatedAt: new Date(policy.updatedAt).toISOString(),
});

export const settingsOperations = {
  /** `GET /settings`: read token only (an API key can never read the policy). */
  get: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      let policy;
      try {
        policy = await ctx.store.policy.get();
      } catch (error) {
        ctx.log.error({ event: 'policy-read-failed', err: error }, UNAVAILABLE);
        throw unavailable();
      }
      if (!policy) throw notInitialized();
      return { ...policyAnswer(policy), ...(ctx.server && { server: ctx.server }) };
    },
  }),

  /** `PATCH /settings`: `{revision, settings}` merged over the saved document (operator-api 2.9, 3, 7). */
  patch: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({
      revision: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      settings: z.unknown(),
    }),
    async run(ctx, body) {
      if (Buffer.byteLength(JSON.stringify(body.settings ?? null)) > POLICY_MAX_BODY_BYTES) {
        throw new OperatorError(413, 'payload_too_large', 'Request body is too large');
      }
      let result;
      try {
        result = await ctx.store.policy.update(body.revision, body.settings, ctx.principal.actor);
      } catch (error) {
        ctx.log.error({ event: 'policy-write-failed', err: error }, UNAVAILABLE);
        throw unavailable();
      }
      if (result.ok) return policyAnswer(result.policy);
      switch (result.code) {
        case 'not_initialized':
          throw notInitialized();
        case 'revision_conflict':
          throw new OperatorError(409, 'revision_conflict', CONFLICT, { revision: result.revision });
        case 'invalid':
          throw new OperatorError(400, 'invalid_settings', result.message, { path: result.path });
      }
    },
  }),

  /** `GET /settings/audit` (`q`, `limit` 1..100 default 50, `offset`). */
  audit: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({
      q: searchParam.optional(),
      ...pageParams,
    }),
    async run(ctx, input) {
      const q = input.q?.trim().toLowerCase() || undefined;
      const entries = await ctx.store.audit.search({ q, limit: input.limit, offset: input.offset });
      return { entries, limit: input.limit, offset: input.offset };
    },
  }),

  /**
   * `GET /settings/usage` (`from`, `to`: UTC days, inclusive; month start through today by default):
   * model and chat telemetry. A total that some call did not report is null (unknown), never 0; more than
   * 50,000 source rows is 413.
   */
  usage: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z
      .object({ from: utcDay.optional(), to: utcDay.optional() })
      .refine((r) => r.from === undefined || r.to === undefined || r.from <= r.to, {
        message: 'must not be after to',
        path: ['from'],
      }),
    async run(ctx, input) {
      const { from, to, toExclusive } = usageWindow(ctx.now(), input);
      try {
        const report = await ctx.store.reads.usage(from, toExclusive);
        const notes: string[] = [];
        if (report.model.runsWithoutTelemetry > 0) {
          notes.push(
            `${report.model.runsWithoutTelemetry} analysed run(s) recorded no model telemetry: model totals are unknown`,
          );
        }
        for (const [name, section] of [
          ['model', report.model],
          ['chat', report.chat],
        ] as const) {
          const { inputTokens, outputTokens, costUsd } = section.unreported;
          if (inputTokens + outputTokens + costUsd > 0) {
            notes.push(
              `${name}: some calls did not report usage (input tokens ${inputTokens}, output tokens ${outputTokens}, cost ${costUsd}); those totals are unknown`,
            );
          }
        }
        return { from: day(from), to: day(to), ...report, notes };
      } catch (error) {
        if (error instanceof UsageTooLargeError) {
          throw new OperatorError(413, 'usage_too_large', error.message, { sourceRows: error.rows });
        }
        throw error;
      }
    },
  }),
};
