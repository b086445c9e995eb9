import { z } from 'zod';
import { plainText } from '../http/text.js';
import type { RepairResult } from '../store/jobs.js';
import { ADMIN, defineOperation, OperatorError, type OperationContext } from './operation.js';

/** Free text (a reason may span lines): tab, newline and CR allowed, other control characters not. */
const text = (max: number) => plainText(max, { whitespace: true });

const jobKey = text(500).min(1);

export const requeueDeadBody = z.strictObject({
  jobKey,
  resetAttempts: z.boolean().default(false),
  reason: text(1000).optional(),
  actorId: text(200).optional(),
});

export const releaseLeaseBody = z
  .strictObject({
    jobKey: jobKey.optional(),
    receiptId: text(64).min(1).optional(),
    force: z.boolean().default(false),
    reason: text(1000).optional(),
    actorId: text(200).optional(),
  })
  .refine((b) => (b.jobKey === undefined) !== (b.receiptId === undefined), {
    message: 'give exactly one of jobKey and receiptId',
    path: ['jobKey'],
  });

const REFUSAL_STATUS = { not_found: 404, waiting_job_exists: 409, lease_active: 409 } as const;

/**
 * A repair's answer: a refusal is thrown with its status and fields; a repair is audited after it. The
 * two are not atomic, so an audit write that fails is logged and reported as `audited: false` while the
 * repair stands. The actor is the caller's principal (the `x-operator-actor` header for static tokens,
 * default `service-admin`); a body `actorId` is kept in the audit detail as the caller's claim, never as
 * identity.
 */
async function audited(
  ctx: OperationContext,
  action: string,
  body: { reason?: string | undefined; actorId?: string | undefined },
  target: string,
  result: RepairResult,
  detail: Record<string, unknown>,
) {
  if (!result.ok) {
    const { ok: _ok, code, message, ...rest } = result;
    throw new OperatorError(REFUSAL_STATUS[code], code, message, rest);
  }
  let recorded = true;
  try {
    await ctx.store.audit.record({
      actor: ctx.principal.actor,
      action,
      target,
      reason: body.reason ?? null,
      detail: { ...detail, jobId: result.job.id, requestedActorId: body.actorId ?? null },
    });
  } catch (error) {
    recorded = false;
    ctx.log.error(
      { event: 'queue-repair-audit-failed', err: error, action, target },
      'audit event not recorded',
    );
  }
  ctx.log.info({ event: action, actor: ctx.principal.actor, target, jobId: result.job.id }, 'queue repaired');
  return { job: result.job, audited: recorded };
}

/** Queue repair (operator-api 4.4), admin token only: repair, then audit. Served by REST and tRPC. */
export const queueRepairOperations = {
  requeueDead: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: requeueDeadBody,
    async run(ctx, body) {
      const result = await ctx.store.jobs.requeueDead(body.jobKey, { resetAttempts: body.resetAttempts });
      return audited(ctx, 'queue.requeue_dead', body, body.jobKey, result, {
        resetAttempts: body.resetAttempts,
      });
    },
  }),
  releaseLease: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: releaseLeaseBody,
    async run(ctx, body) {
      const { jobKey: key, receiptId, force } = body;
      const result = await ctx.store.jobs.releaseLease(
        key !== undefined ? { jobKey: key } : { receipt: receiptId! },
        { force },
      );
      return audited(ctx, 'queue.release_lease', body, key ?? `receipt:${receiptId}`, result, { force });
    },
  }),
};
