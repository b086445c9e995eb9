import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import {
  BodyBudgetExceededError,
  BodyTooLargeError,
  readBody,
  clientAddress,
  sendJson,
  type BodyLease,
} from '../http/router.js';
import type { BodyBudget } from '../http/body-budget.js';
import type { IncomingDelivery, RecordResult } from '../store/deliveries.js';
import { classifyDelivery, MAX_DELIVERY_ID_CHARS, MAX_EVENT_CHARS } from './classify.js';
import { verifySignature } from './signature.js';

export { classifyDelivery, MAX_DELIVERY_ID_CHARS, MAX_EVENT_CHARS };

export const WEBHOOK_PATHS = ['/github/webhooks', '/api/github/webhooks'];
/** The lane that carries verified deliveries to the Probot app. */
export const WEBHOOK_QUEUE = 'webhooks';

export type WebhookIngressDeps = {
  secret: string | null;
  maxBytes: number;
  /**
   * Webhook body bytes held at once, over all requests (unsigned bodies included, which are read before
   * the signature can be checked); past it a request answers 503 `ingress_busy`.
   */
  budget: BodyBudget;
  botHandles: readonly string[];
  /** Lower-case logins of other review bots (`VERDICT_COMPETITOR_LOGINS`): their reviews are kept. */
  competitorLogins?: readonly string[];
  record: (item: IncomingDelivery) => Promise<RecordResult>;
  /** Called after a delivery was durably enqueued (wakes the local consumer). */
  onEnqueued?: () => void;
  log: Logger;
};

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text && text.trim() !== '' ? text : null;
}

/** The headers every delivery carries (review-engine 4.1), in the order a `missing_headers` answer names them. */
const REQUIRED_HEADERS = ['x-github-delivery', 'x-github-event', 'x-hub-signature-256'] as const;

/**
 * `POST /github/webhooks`, in the order of review-engine 4.1: required headers, HMAC over the raw bytes,
 * JSON, then (group-committed) delivery marker, delivery record and enqueue. The answer is sent only
 * after the delivery is durably stored.
 */
export function createWebhookHandler(deps: WebhookIngressDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const deliveryId = header(req, 'x-github-delivery');
    const event = header(req, 'x-github-event');
    const signature = header(req, 'x-hub-signature-256');
    if (!deliveryId || !event || !signature) {
      req.resume();
      const missing = REQUIRED_HEADERS.filter((name) => !header(req, name));
      sendJson(res, 400, {
        error: 'missing_headers',
        missing,
        message: `Missing required header${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
      });
      return;
    }
    // The store keeps a delivery id of 200 characters and an event name of 100 at most: a longer one is
    // refused here, the same on every dialect (PostgreSQL would refuse it on every retry; GitHub's are
    // a 36-character GUID and a short name).
    if (deliveryId.length > MAX_DELIVERY_ID_CHARS || event.length > MAX_EVENT_CHARS) {
      req.resume();
      sendJson(res, 400, { error: 'invalid_headers' });
      return;
    }
    const declared = Number(req.headers['content-length']);
    const lease = deps.budget.lease(clientAddress(req), Number.isFinite(declared) ? declared : null);
    try {
      await ingest(deps, req, res, lease, { deliveryId, event, signature });
    } finally {
      lease.release();
    }
  };
}

async function ingest(
  deps: WebhookIngressDeps,
  req: IncomingMessage,
  res: ServerResponse,
  lease: BodyLease,
  { deliveryId, event, signature }: { deliveryId: string; event: string; signature: string },
): Promise<void> {
  let raw: Buffer;
  try {
    raw = await readBody(req, deps.maxBytes, lease);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      sendJson(res, 413, { error: 'payload_too_large' }, { connection: 'close' });
      return;
    }
    if (error instanceof BodyBudgetExceededError) {
      deps.log.warn(
        { event: 'ingress-busy', deliveryId, inFlightBytes: deps.budget.inUse },
        'webhook refused: the in-flight body budget is spent',
      );
      sendJson(res, 503, { error: 'ingress_busy' }, { connection: 'close', 'retry-after': '1' });
      return;
    }
    throw error;
  }
  if (!deps.secret || !verifySignature(deps.secret, raw, signature)) {
    sendJson(res, 401, { error: 'invalid_signature' });
    return;
  }
  const text = raw.toString('utf8');
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    sendJson(res, 400, { error: 'invalid_json' });
    return;
  }
  const action = typeof (payload as any)?.action === 'string' ? ((payload as any).action as string) : null;
  const classified = classifyDelivery(event, payload, deps.botHandles, deps.competitorLogins ?? []);
  const result = await deps.record({
    id: deliveryId,
    event,
    action,
    raw,
    bytes: raw.length,
    repo: classified.repo,
    prNumber: classified.prNumber,
    installationId: classified.installationId,
    outcome: classified.outcome,
    job: classified.actionable ? { queue: WEBHOOK_QUEUE, kind: 'webhook', payload: { deliveryId } } : null,
  });
  if (result.status === 'failed') {
    deps.log.error(
      {
        event: result.code === 'enqueue_failed' ? 'enqueue-failed' : 'delivery-record-failed',
        deliveryId,
        err: result.error,
      },
      'webhook delivery was not stored; it left no marker, so a redelivery is accepted',
    );
    sendJson(res, 500, { error: result.code });
    return;
  }
  if (result.status === 'duplicate') {
    sendJson(res, 200, { accepted: true, ignored: true, outcome: 'duplicate_delivery', deliveryId });
    return;
  }
  if (result.enqueued) {
    deps.onEnqueued?.();
    const outcome = classified.outcome === 'recorded' ? 'recorded' : 'enqueued';
    sendJson(res, 202, { accepted: true, ignored: false, outcome, deliveryId });
    return;
  }
  sendJson(res, 200, { accepted: true, ignored: true, outcome: result.outcome, deliveryId });
}
