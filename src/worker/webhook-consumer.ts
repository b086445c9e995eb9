import type { Probot } from 'probot';
import type { Store } from '../store/index.js';
import type { ClaimedJob } from '../queue/types.js';
import type { JobHandler } from './runner.js';

/**
 * Handler of the `webhooks` lane: loads the stored delivery and dispatches it into the Probot app, so
 * handlers get an installation-authenticated Octokit when App credentials exist. The delivery ends
 * `processed` (with the outcome its handler recorded) or `failed`.
 */
export function webhookJobHandler(store: Store, probot: Probot): JobHandler {
  return async (job: ClaimedJob) => {
    const deliveryId = (job.payload as { deliveryId?: unknown } | null)?.deliveryId;
    if (typeof deliveryId !== 'string') {
      return { type: 'dead', reason: 'unroutable', error: 'webhook job without a delivery id' };
    }
    const received = await receiveStored(store, probot, deliveryId);
    if (received.type === 'missing') {
      return { type: 'dead', reason: 'unroutable', error: `delivery ${deliveryId} is not recorded` };
    }
    if (received.type === 'failed') {
      const last = job.attempts >= job.maxAttempts;
      if (last) await store.deliveries.finish(deliveryId, 'failed', undefined, received.error);
      return { type: 'retry', error: received.error };
    }
    await store.deliveries.finish(deliveryId, 'processed', undefined);
    return { type: 'ack' };
  };
}

/**
 * Dispatches a stored delivery into the Probot app and marks it `processed` (a replay by the command
 * bridge). Throws when it is not recorded or a handler fails; the failure is recorded on the delivery.
 */
export async function dispatchStoredDelivery(
  store: Store,
  probot: Probot,
  deliveryId: string,
): Promise<void> {
  const received = await receiveStored(store, probot, deliveryId);
  if (received.type === 'missing') throw new Error(`delivery ${deliveryId} is not recorded`);
  if (received.type === 'failed') {
    await store.deliveries.finish(deliveryId, 'failed', undefined, received.error);
    throw new Error(received.error);
  }
  await store.deliveries.finish(deliveryId, 'processed', undefined);
}

/** Loads a stored delivery and hands it to the Probot app; what to record is the caller's decision. */
async function receiveStored(
  store: Store,
  probot: Probot,
  deliveryId: string,
): Promise<{ type: 'missing' } | { type: 'failed'; error: string } | { type: 'received' }> {
  const delivery = await store.deliveries.get(deliveryId);
  const raw = delivery ? await store.deliveries.payload(deliveryId) : null;
  if (!delivery || raw === null) return { type: 'missing' };
  try {
    await probot.receive({ id: deliveryId, name: delivery.event as any, payload: JSON.parse(raw) });
  } catch (error) {
    return { type: 'failed', error: errorMessage(error) };
  }
  return { type: 'received' };
}

function errorMessage(error: unknown): string {
  if (error instanceof AggregateError) return error.errors.map(errorMessage).join('; ');
  return (error as Error)?.message ?? String(error);
}
