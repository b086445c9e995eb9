import type { QueueBackend } from '../queue/types.js';
import { requeueReview, RequeueError, type RequeueRef, type RequeueResult } from '../review/requeue.js';
import { OperatorError, type ServiceContext } from './operation.js';

/** The status of each refusal of a requeue, as the operator API would answer it. */
const REFUSAL_STATUS: Record<RequeueError['code'], number> = {
  invalid_request: 400,
  invalid_variant: 400,
  review_not_found: 404,
  pr_not_found: 404,
  installation_missing: 409,
  review_exists: 409,
};

/**
 * Requeue now (review-engine 4.5; the bridge's `requeue` command and the CLI's `requeue`): a new run of
 * the stored head under `variant` (default `operator-{now}`), enqueued on the `reviews` lane, in the
 * store's job table or in `queue` when given. A refusal is an `OperatorError` with the requeue's code
 * (`invalid_request`, `invalid_variant`, `review_not_found`, `pr_not_found`, `installation_missing`,
 * `review_exists`) and message.
 */
export async function requeue(
  ctx: ServiceContext,
  ref: RequeueRef,
  opts: { variant?: string | null; queue?: QueueBackend } = {},
): Promise<RequeueResult> {
  try {
    return await requeueReview(ctx.store, ref, { variant: opts.variant, now: ctx.now(), queue: opts.queue });
  } catch (error) {
    if (error instanceof RequeueError) {
      throw new OperatorError(REFUSAL_STATUS[error.code], error.code, error.message);
    }
    throw error;
  }
}
