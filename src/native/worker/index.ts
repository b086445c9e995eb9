/**
 * The native edge worker (review-engine 1.4, 4.1): the public fetch handler answers only `GET /health`
 * and `POST /github/webhooks`; every other path (the operator API included) is 404. The queue handler
 * is the review consumer; the lease Durable Object is exported for its binding.
 */
import { consume, type QueuedMessage } from './consumer.js';
import type { Env } from './env.js';
import { handleWebhook, json } from './ingress.js';
import { runScheduled } from './scheduled.js';
import { handleInternal } from './state.js';
import {
  INTERNAL_HOST_HEADER,
  INTERNAL_HOSTS,
  INTERNAL_TOKEN_HEADER,
  type InternalHost,
} from '../protocol.js';

export { DispatchLease } from './lease.js';
export { ContainerProxy, ReviewContainer, ValidationSandbox } from './review-container.js';

/**
 * A local run's container call to an internal host: only when `VERDICT_INTERNAL_DEV_TOKEN` is set (never
 * on Cloudflare) and the request carries it; otherwise null and the request is answered as any other.
 */
function devInternalHost(request: Request, env: Env): InternalHost | null {
  const expected = env.VERDICT_INTERNAL_DEV_TOKEN;
  if (!expected || request.headers.get(INTERNAL_TOKEN_HEADER) !== expected) return null;
  const host = request.headers.get(INTERNAL_HOST_HEADER);
  return (INTERNAL_HOSTS as readonly string[]).includes(host ?? '') ? (host as InternalHost) : null;
}

export async function handleFetch(request: Request, env: Env): Promise<Response> {
  const internal = devInternalHost(request, env);
  if (internal) return handleInternal(internal, request, env);
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
