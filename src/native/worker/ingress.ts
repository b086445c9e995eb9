/**
 * The native public ingress (review-engine 4.1, 6.1, 6.2, 7.1): `POST /github/webhooks` in the order
 * headers, HMAC over the raw body, JSON, delivery marker, delivery record, enqueue. The signature check,
 * event filter and command parsing are the Node runtime's own modules (src/ingress/).
 */
import { Buffer } from 'node:buffer';
import { botHandlesFromEnv } from '../../comment-commands/parse.js';
import { classifyDelivery, MAX_DELIVERY_ID_CHARS, MAX_EVENT_CHARS } from '../../ingress/classify.js';
import { verifySignature } from '../../ingress/signature.js';
import { dedupeTtl, OFFLOAD_BYTES, type Env, type QueueMessage } from './env.js';
import { ensureSchema } from './schema.js';

const REQUIRED_HEADERS = ['x-github-delivery', 'x-github-event', 'x-hub-signature-256'] as const;

export const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

export type Routing = { outcome: string; enqueue: boolean; repo: string | null; prNumber: number | null };

/**
 * What the native ingress does with a verified delivery. Only reviews and comment commands reach the
 * queue; `edited` pull requests are recorded as ignored `unsupported_action` (6.1), and issue comments
 * are read when created or edited (4.7).
 */
export function routeDelivery(event: string, payload: any, handles: readonly string[]): Routing {
  const asCreated =
    event === 'issue_comment' && payload?.action === 'edited' ? { ...payload, action: 'created' } : payload;
  const c = classifyDelivery(event, asCreated, handles);
  const base = { repo: c.repo, prNumber: c.prNumber };
  if (event === 'pull_request' && payload?.action === 'edited')
    return { ...base, outcome: 'unsupported_action', enqueue: false };
  const native = event === 'pull_request' || event === 'issue_comment';
  if (!c.actionable || c.outcome !== 'enqueued') return { ...base, outcome: c.outcome, enqueue: false };
  if (!native) return { ...base, outcome: 'unsupported_event', enqueue: false };
  return { ...base, outcome: 'enqueued', enqueue: true };
}

/**
 * How a delivery travels (review-engine 8): inline when its queue message stays within 96 KiB, else its body
 * goes to R2 and the message carries the key. `kept` is what the record keeps of it, so that a replay
 * command can send it again: the body (inline) or the key.
 */
export type PlannedMessage = { message: QueueMessage; kept: { body: string | null; bodyKey: string | null } };

export function planMessage(env: Env, deliveryId: string, event: string, body: string): PlannedMessage {
  const inline: QueueMessage = { deliveryId, event, body };
  if (new TextEncoder().encode(JSON.stringify(inline)).length <= OFFLOAD_BYTES)
    return { message: inline, kept: { body, bodyKey: null } };
  // Without the object store an oversized message is sent inline (the queue may refuse it, 8), not kept.
  if (!env.PAYLOADS) return { message: inline, kept: { body: null, bodyKey: null } };
  const bodyKey = `deliveries/${deliveryId}.json`;
  return { message: { deliveryId, event, bodyKey }, kept: { body: null, bodyKey } };
}

/**
 * Records the delivery, with what it keeps of the body when it is queued. A redelivery after a failed
 * enqueue (its marker was deleted) replaces the earlier record.
 */
export async function recordDelivery(
  env: Env,
  id: string,
  event: string,
  action: string | null,
  r: Routing,
  bytes: number,
  planned: PlannedMessage | null = null,
) {
  await ensureSchema(env.DB);
  await env.DB.prepare(
    `INSERT OR REPLACE INTO native_deliveries (id, event, action, repo, pr_number, outcome, bytes, received_at, body, body_key)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      event,
      action,
      r.repo,
      r.prNumber,
      r.outcome,
      bytes,
      new Date().toISOString(),
      planned?.kept.body ?? null,
      planned?.kept.bodyKey ?? null,
    )
    .run();
}

/** Sends a planned message to the review queue, its body to R2 first when it was offloaded. */
export async function enqueue(env: Env, { message }: PlannedMessage, body: string): Promise<void> {
  if (message.bodyKey) await env.PAYLOADS!.put(message.bodyKey, body);
  await env.REVIEW_QUEUE.send(message);
}

/** A review this runtime asks for itself (the catch-up, a requeue): what its message names. */
export type SelfQueuedReview = {
  repo: string;
  prNumber: number;
  headSha: string;
  installationId: number;
  /** Only a requeue's (the consumer reads it for that trigger alone). */
  variant?: string;
};

/**
 * Queues a review the runtime asks for itself as a `pull_request` delivery with `action` as its trigger: the
 * consumer dispatches its message as a webhook's. It is recorded under `id` (so a replay can send it
 * again) and sent as ingress sends a delivery.
 */
export async function queueReview(env: Env, id: string, action: string, r: SelfQueuedReview): Promise<void> {
  const payload = {
    action,
    number: r.prNumber,
    pull_request: { number: r.prNumber, head: { sha: r.headSha } },
    repository: { full_name: r.repo },
    installation: { id: r.installationId },
    ...(r.variant ? { variant: r.variant } : {}),
  };
  const body = JSON.stringify(payload);
  const routing = { outcome: 'enqueued', enqueue: true, repo: r.repo, prNumber: r.prNumber };
  const planned = planMessage(env, id, 'pull_request', body);
  await recordDelivery(env, id, 'pull_request', action, routing, body.length, planned);
  await enqueue(env, planned, body);
}

export async function handleWebhook(request: Request, env: Env): Promise<Response> {
  const get = (name: string) => request.headers.get(name)?.trim() || null;
  const missing = REQUIRED_HEADERS.filter((name) => !get(name));
  if (missing.length > 0) {
    return json(400, {
      error: 'missing_headers',
      missing,
      message: `Missing required header${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
    });
  }
  const deliveryId = get('x-github-delivery')!;
  const event = get('x-github-event')!;
  if (deliveryId.length > MAX_DELIVERY_ID_CHARS || event.length > MAX_EVENT_CHARS)
    return json(400, { error: 'invalid_headers' });
  const raw = Buffer.from(await request.arrayBuffer());
  const secret = env.GITHUB_WEBHOOK_SECRET ?? '';
  if (!verifySignature(secret, raw, get('x-hub-signature-256')))
    return json(401, { error: 'invalid_signature' });
  const text = raw.toString('utf8');
  let payload: any;
  try {
    payload = JSON.parse(text);
  } catch {
    return json(400, { error: 'invalid_json' });
  }
  const marker = `delivery:${deliveryId}`;
  if ((await env.DELIVERIES.get(marker)) !== null)
    return json(200, { accepted: true, ignored: true, outcome: 'duplicate_delivery', deliveryId });
  await env.DELIVERIES.put(marker, new Date().toISOString(), { expirationTtl: dedupeTtl(env) });
  const routing = routeDelivery(event, payload, botHandlesFromEnv(env.VERDICT_BOT_HANDLES));
  const action = typeof payload?.action === 'string' ? payload.action : null;
  let stage: 'delivery_record_failed' | 'enqueue_failed' = routing.enqueue
    ? 'enqueue_failed'
    : 'delivery_record_failed';
  try {
    const planned = routing.enqueue ? planMessage(env, deliveryId, event, text) : null;
    await recordDelivery(env, deliveryId, event, action, routing, raw.length, planned);
    stage = 'enqueue_failed';
    if (planned) await enqueue(env, planned, text);
  } catch (err) {
    console.error(
      JSON.stringify({
        event: stage === 'enqueue_failed' ? 'enqueue-failed' : 'delivery-record-failed',
        deliveryId,
        err: String(err),
      }),
    );
    await env.DELIVERIES.delete(marker).catch(() => undefined);
    return json(500, { error: stage });
  }
  if (routing.enqueue) return json(202, { accepted: true, ignored: false, outcome: 'enqueued', deliveryId });
  return json(200, { accepted: true, ignored: true, outcome: routing.outcome, deliveryId });
}
