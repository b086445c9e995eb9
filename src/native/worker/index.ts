/**
 * The native edge worker (review-engine 1.4, 4.1): the public fetch handler answers only `GET /health`
 * and `POST /github/webhooks`; every other path (the operator API included) is 404. The queue handler
 * is the review consumer; the lease Durable Object is exported for its binding.
 */
import { consume, type QueuedMessage } from './consumer.js';
import type { Env } from './env.js';
import { handleWebhook, json } from './ingress.js';
import { runScheduled } from './scheduled.js';

export { DispatchLease } from './lease.js';

export async function handleFetch(request: Request, env: Env): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (pathname === '/health' && request.method === 'GET') return json(200, { ok: true });
  if (pathname === '/github/webhooks' && request.method === 'POST') return handleWebhook(request, env);
  return json(404, { error: 'not_found' });
}

export async function handleQueue(batch: { messages: readonly QueuedMessage[] }, env: Env): Promise<void> {
  for (const message of batch.messages) {
    try {
      await consume(message, env);
    } catch (err) {
      console.log(
        JSON.stringify({ event: 'dispatch-error', deliveryId: message.body.deliveryId, err: String(err) }),
      );
      message.retry();
    }
  }
}

export default {
  fetch: (request: Request, env: Env) => handleFetch(request, env),
  scheduled: (controller: { cron: string; scheduledTime: number }, env: Env) =>
    runScheduled(controller.cron, controller.scheduledTime, env).then(() => undefined),
  queue: (batch: { messages: readonly QueuedMessage[] }, env: Env) => handleQueue(batch, env),
};
