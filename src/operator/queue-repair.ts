import type { Logger } from 'pino';
import { z } from 'zod';
import { guard, type ServiceTokens } from '../http/auth.js';
import { readJsonBody } from '../http/json.js';
import { sendJson, type Router } from '../http/router.js';
import type { Store } from '../store/index.js';
import type { RepairResult } from '../store/jobs.js';
import { plainText } from '../http/text.js';

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
 * Queue repair (operator-api 4.4), admin token only. The repair runs first and its audit event is
 * written after it; the two are not atomic, so an audit write that fails is logged and reported as
 * `audited: false` while the repair stands. The actor is the `x-operator-actor` header (default
 * `service-admin`); a body `actorId` is kept in the audit detail as the caller's claim, never as identity.
 */
export function registerQueueRepairRoutes(
  router: Router,
  deps: { store: Store; tokens: ServiceTokens; log: Logger },
): void {
  const { store, tokens, log } = deps;

  const finish = async (
    res: Parameters<Parameters<Router['add']>[2]>[1],
    action: string,
    actor: string,
    body: { reason?: string | undefined; actorId?: string | undefined },
    target: string,
    result: RepairResult,
    detail: Record<string, unknown>,
  ) => {
    if (!result.ok) {
      const { ok: _ok, code, ...rest } = result;
      return sendJson(res, REFUSAL_STATUS[code], { ok: false, error: code, ...rest });
    }
    let audited = true;
    try {
      await store.audit.record({
        actor,
        action,
        target,
        reason: body.reason ?? null,
        detail: { ...detail, jobId: result.job.id, requestedActorId: body.actorId ?? null },
      });
    } catch (error) {
      audited = false;
      log.error(
        { event: 'queue-repair-audit-failed', err: error, action, target },
        'audit event not recorded',
      );
    }
    log.info({ event: action, actor, target, jobId: result.job.id }, 'queue repaired');
    sendJson(res, 200, { ok: true, job: result.job, audited });
  };

  const auth = { tokens, apiKeys: store.apiKeys };
  const ADMIN = { classes: ['operatorAdmin'] } as const;

  router.add('POST', '/operator/api/queue/requeue-dead', async (req, res) => {
    const who = await guard(req, res, auth, ADMIN);
    if (!who) return;
    const body = await readJsonBody(req, res, requeueDeadBody);
    if (!body.ok) return;
    const result = await store.jobs.requeueDead(body.value.jobKey, {
      resetAttempts: body.value.resetAttempts,
    });
    await finish(res, 'queue.requeue_dead', who.actor, body.value, body.value.jobKey, result, {
      resetAttempts: body.value.resetAttempts,
    });
  });

  router.add('POST', '/operator/api/queue/release-lease', async (req, res) => {
    const who = await guard(req, res, auth, ADMIN);
    if (!who) return;
    const body = await readJsonBody(req, res, releaseLeaseBody);
    if (!body.ok) return;
    const { jobKey: key, receiptId, force } = body.value;
    const result = await store.jobs.releaseLease(
      key !== undefined ? { jobKey: key } : { receipt: receiptId! },
      { force },
    );
    const target = key ?? `receipt:${receiptId}`;
    await finish(res, 'queue.release_lease', who.actor, body.value, target, result, { force });
  });
}
