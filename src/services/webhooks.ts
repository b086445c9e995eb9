import { z } from 'zod';
import {
  defineOperation,
  limitParam,
  notFound,
  OperatorError,
  READ,
  type ServiceContext,
} from './operation.js';

const DELIVERY_STATUSES = ['queued', 'ignored', 'processed', 'failed'] as const;

/** Webhook history: the operator read token only (an API key never reads it, operator-api 5.2 rule 2). */
export const webhookOperations = {
  list: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({
      status: z.enum(DELIVERY_STATUSES, { error: `one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
      limit: limitParam,
    }),
    async run(ctx, input) {
      return {
        deliveries: await ctx.store.deliveries.list({ status: input.status, limit: input.limit }),
      };
    },
  }),

  get: defineOperation({
    rule: READ,
    type: 'query',
    input: z.object({ deliveryId: z.string().min(1).max(1000) }),
    async run(ctx, { deliveryId }) {
      const delivery = await ctx.store.deliveries.get(deliveryId);
      if (!delivery) throw notFound('No such webhook delivery');
      return { delivery };
    },
  }),
};

/**
 * The replay rule of `replay-webhook` (NAMES.md), written once for the API that creates the command and
 * the bridge that runs it: a processed delivery is replayed only with `force`; a delivery still queued is
 * already on its way, and `force` processes it now. Null when the replay may go ahead.
 */
export function replayRefusal(
  deliveryId: string,
  status: string,
  force: boolean,
): { code: 'force_required' | 'delivery_queued'; message: string } | null {
  if (force) return null;
  if (status === 'processed') {
    return {
      code: 'force_required',
      message: `Webhook delivery ${deliveryId} was already processed: send force: true to replay it`,
    };
  }
  if (status === 'queued') {
    return {
      code: 'delivery_queued',
      message: `Webhook delivery ${deliveryId} is still queued for processing: send force: true to process it now`,
    };
  }
  return null;
}

/**
 * Replays a stored delivery (what the bridge does for `replay-webhook`, review-engine 7.5): an unknown
 * delivery is 404 `delivery_not_found`, the replay rule's refusals are 409 with their codes; otherwise the
 * delivery is dispatched into the Probot app again by `dispatch` and its status before and after is told.
 */
export async function replayDelivery(
  ctx: ServiceContext,
  input: { deliveryId: string; force: boolean },
  dispatch: (deliveryId: string) => Promise<void>,
) {
  const { deliveryId: id, force } = input;
  const delivery = await ctx.store.deliveries.get(id);
  if (!delivery) {
    throw new OperatorError(
      404,
      'delivery_not_found',
      `webhook delivery ${id} is not recorded in this store`,
    );
  }
  const refusal = replayRefusal(id, delivery.status, force);
  if (refusal) throw new OperatorError(409, refusal.code, refusal.message);
  await dispatch(id);
  const after = await ctx.store.deliveries.get(id);
  return {
    deliveryId: id,
    event: delivery.event,
    action: delivery.action,
    previousStatus: delivery.status,
    status: after?.status ?? null,
    outcome: after?.outcome ?? null,
    forced: force,
  };
}
