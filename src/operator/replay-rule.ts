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
