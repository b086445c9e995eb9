import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import { guard, type AccessRule, type ServiceTokens } from '../http/auth.js';
import type { AuthThrottle } from '../http/throttle.js';
import { REVIEW_QUEUE } from '../review/request.js';
import { readJsonBody } from '../http/json.js';
import { parseLimit } from '../http/query.js';
import { sendJson, type RouteHandler, type Router } from '../http/router.js';
import type { QueueBackend } from './types.js';
import { plainText } from '../http/text.js';

const ADMIN: AccessRule = { classes: ['queueAdmin'] };
const ENQUEUE: AccessRule = { classes: ['queueEnqueue'] };
const WORKER: AccessRule = { classes: ['queueWorker'] };
const STATUSES = ['waiting', 'running', 'done', 'dead'] as const;
const BODY_LIMIT = 1024 * 1024;

const NAME = /^[A-Za-z0-9._:-]{1,64}$/;
const name = z.string().regex(NAME, 'must be 1 to 64 letters, digits or . _ : -');
/** 1 to `max` characters, none of them a control character (keys and owners end up in logs). */
const printable = (max: number) => plainText(max, { min: 1 });
const jobId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const receipt = z.string().min(1).max(128);

/**
 * Lanes only Verdict itself fills: a `webhooks` job stands for a stored delivery, and one enqueued here
 * would replay a processed delivery without the `force` rule (replay it with the `replay-webhook` command).
 */
export const INTERNAL_LANES: ReadonlySet<string> = new Set(['webhooks']);

export const enqueueBody = z.strictObject({
  queue: name.refine(
    (q) => !INTERNAL_LANES.has(q),
    'is an internal lane of Verdict: its jobs are enqueued only with a stored delivery (use the replay-webhook command)',
  ),
  kind: name,
  key: printable(500).nullable().optional(),
  payload: z.unknown().refine((v) => v !== undefined, 'is required (null is allowed)'),
  mode: z.enum(['replace_waiting', 'keep_existing']).optional(),
  maxAttempts: z.number().int().min(1).max(100).optional(),
  priority: z.number().int().min(-1000).max(1000).optional(),
  runAt: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

export const claimBody = (maxLeaseMs: number) =>
  z.strictObject({
    queue: name,
    owner: printable(255),
    leaseMs: z.number().int().min(1).max(maxLeaseMs).optional(),
  });

export const renewBody = (maxLeaseMs: number) =>
  z.strictObject({ jobId, receipt, leaseMs: z.number().int().min(1).max(maxLeaseMs).optional() });
export const ackBody = z.strictObject({ jobId, receipt });
export const failBody = z.strictObject({
  jobId,
  receipt,
  error: z.string().max(4000),
  deadReason: name.optional(),
});
export const releaseBody = z.strictObject({
  jobId,
  receipt,
  delayMs: z.number().int().min(0).max(86_400_000).optional(),
});

const STALE = {
  ok: false,
  error: 'stale_receipt',
  message: 'The receipt is not the current lease of this job',
};

export type QueueRouteDeps = {
  queue: QueueBackend;
  tokens: ServiceTokens;
  /** Failed authentications per client address (429 past the limit). */
  throttle?: AuthThrottle | null;
  /**
   * The status of a review run, for refusing a `reviews` job that would re-run one that has ended (or is
   * running): that goes through the requeue command, which the audit records. Absent: not checked.
   */
  runStatus?: (runId: string) => Promise<string | null>;
  defaultLeaseMs: number;
  maxLeaseMs?: number;
  log: Logger;
};

/** Adds routes behind an access rule. Queue failures are 500 `queue_unavailable`, logged; never a half-answer. */
function guardedRoutes(router: Router, deps: QueueRouteDeps) {
  const auth = { tokens: deps.tokens, throttle: deps.throttle };
  return (method: 'GET' | 'POST', path: string, rule: AccessRule, handler: RouteHandler) =>
    router.add(method, path, async (req, res, params, url) => {
      if (!(await guard(req, res, auth, rule))) return;
      try {
        await handler(req, res, params, url);
      } catch (error) {
        deps.log.error(
          { event: 'queue-route-failed', err: error, path: url.pathname },
          'queue operation failed',
        );
        if (!res.headersSent) {
          sendJson(res, 500, {
            ok: false,
            error: 'queue_unavailable',
            message: 'The queue is unavailable; try again later',
          });
        } else res.destroy();
      }
    });
}

/** `GET /queue/jobs`: the jobs, filtered by status and lane. */
async function listJobs(queue: QueueBackend, res: ServerResponse, url: URL): Promise<void> {
  const invalid = (message: string) => sendJson(res, 400, { ok: false, error: 'invalid_request', message });
  const status = url.searchParams.get('status') || null;
  if (status !== null && !(STATUSES as readonly string[]).includes(status)) {
    return invalid(`Invalid parameter status: one of ${STATUSES.join(', ')}`);
  }
  const queueName = url.searchParams.get('queue') || undefined;
  if (queueName !== undefined && !NAME.test(queueName)) {
    return invalid('Invalid parameter queue: must be 1 to 64 letters, digits or . _ : -');
  }
  const jobs = await queue.list({
    queue: queueName,
    status: (status ?? undefined) as (typeof STATUSES)[number] | undefined,
    limit: parseLimit(url.searchParams.get('limit')),
  });
  sendJson(res, 200, { ok: true, jobs });
}

/**
 * The queue routes (operator-api 4.5, 5.1): `GET /queue/jobs` and `/queue/stats` (queue admin token),
 * `POST /queue/enqueue` (enqueue token), `POST /queue/claim`, `/renew`, `/ack`, `/fail` and `/release`
 * (worker token; `/release` is a Verdict extension for graceful shutdown). The token is checked before
 * the body is read; a receipt that is no longer current is 409 `stale_receipt`; a store failure is 500
 * `queue_unavailable` (logged). Bodies and answers are in docs/queue-api.md.
 */
export function registerQueueRoutes(router: Router, deps: QueueRouteDeps): void {
  const { queue } = deps;
  /** A `reviews` job naming a run that is no longer waiting for one (NAMES.md: re-runs are commands). */
  const endedRun = async (job: { queue: string; payload: unknown }) => {
    if (job.queue !== REVIEW_QUEUE || !deps.runStatus) return null;
    const runId = (job.payload as { runId?: unknown } | null)?.runId;
    if (typeof runId !== 'string') return null;
    const status = await deps.runStatus(runId);
    return status === null || status === 'queued' ? null : { runId, status };
  };
  const maxLeaseMs = deps.maxLeaseMs ?? 7 * 86_400_000;
  /** A claim or renewal that names no lease gets the server default (never over the maximum). */
  const defaultLeaseMs = Math.max(1, Math.min(maxLeaseMs, Math.floor(deps.defaultLeaseMs)));
  const route = guardedRoutes(router, deps);
  /** A POST route whose handler runs once the body is read and valid. */
  const post = <S extends z.ZodType>(
    path: string,
    rule: AccessRule,
    schema: S,
    handle: (body: z.infer<S>, res: ServerResponse) => Promise<void>,
  ) =>
    route('POST', path, rule, async (req, res) => {
      const body = await readJsonBody(req, res, schema, BODY_LIMIT);
      if (body.ok) await handle(body.value, res);
    });

  route('GET', '/queue/jobs', ADMIN, (_req, res, _params, url) => listJobs(queue, res, url));

  route('GET', '/queue/stats', ADMIN, async (_req, res) => {
    sendJson(res, 200, { ok: true, stats: await queue.stats() });
  });

  post('/queue/enqueue', ENQUEUE, enqueueBody, async (job, res) => {
    const ended = await endedRun(job);
    if (ended) {
      return sendJson(res, 409, {
        ok: false,
        error: 'run_ended',
        message: `review run ${ended.runId} is ${ended.status}: re-run it with POST /operator/api/commands/requeue, which records who asked`,
        runId: ended.runId,
        status: ended.status,
      });
    }
    const result = await queue.enqueue(job);
    sendJson(res, result.outcome === 'enqueued' ? 201 : 200, { ok: true, ...result });
  });

  post('/queue/claim', WORKER, claimBody(maxLeaseMs), async (body, res) => {
    const job = await queue.claim(body.queue, body.owner, body.leaseMs ?? defaultLeaseMs);
    sendJson(res, 200, { ok: true, job });
  });

  post('/queue/renew', WORKER, renewBody(maxLeaseMs), async ({ jobId: id, receipt: r, leaseMs }, res) => {
    const expires = await queue.renew(id, r, leaseMs ?? defaultLeaseMs);
    if (expires === null) return sendJson(res, 409, STALE);
    sendJson(res, 200, { ok: true, leaseExpiresAt: expires });
  });

  post('/queue/ack', WORKER, ackBody, async ({ jobId: id, receipt: r }, res) => {
    if (!(await queue.ack(id, r))) return sendJson(res, 409, STALE);
    sendJson(res, 200, { ok: true });
  });

  post('/queue/fail', WORKER, failBody, async ({ jobId: id, receipt: r, error, deadReason }, res) => {
    const result = await queue.fail(id, r, error, deadReason ? { deadReason } : {});
    if (result === null) return sendJson(res, 409, STALE);
    sendJson(res, 200, { ok: true, result });
  });

  post('/queue/release', WORKER, releaseBody, async ({ jobId: id, receipt: r, delayMs }, res) => {
    if (!(await queue.release(id, r, { delayMs }))) return sendJson(res, 409, STALE);
    sendJson(res, 200, { ok: true });
  });
}
