/**
 * The native queue consumer (review-engine 3.4, 6.3, 8): one message at a time, its own attempt counter
 * (`MAX_ATTEMPTS`, default 8) beside the queue's `max_retries`, a dispatch lease per run in a Durable
 * Object, the PR head resolved before dispatch, and the review handed to the container's `POST /review`.
 */
import { REQUEUE_TRIGGER } from '../../review/requeue-rules.js';
import { parseCommand, botHandlesFromEnv } from '../../comment-commands/parse.js';
import { reviewKey } from '../../review/keys.js';
import { containerReviewResponseSchema, type ContainerReviewRequest } from '../protocol.js';
import type { Env, QueueMessage } from './env.js';
import { resolveHeadSha } from './github.js';
import { DEFAULT_LEASE_MS, renewEveryMs, type LeaseAnswer, type LeaseVerb } from './lease.js';
import { ensureSchema } from './schema.js';

export type QueuedMessage = { body: QueueMessage; attempts: number; ack(): void; retry(): void };
export type Outcome = { outcome: string; reason?: string; runId?: string };

const log = (fields: Record<string, unknown>) => console.log(JSON.stringify(fields));
export const intEnv = (v: string | undefined, d: number) =>
  Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : d;

export async function leaseCall(
  env: Env,
  runId: string,
  verb: LeaseVerb,
  body: object,
): Promise<LeaseAnswer['status']> {
  const stub = env.LEASES.get(env.LEASES.idFromName(runId));
  const res = await stub.fetch(`https://lease/${verb}`, { method: 'POST', body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`lease ${verb}: ${res.status}`);
  return ((await res.json()) as LeaseAnswer).status;
}

type Target = {
  repo: string;
  prNumber: number;
  installationId: number;
  headSha: string | null;
  trigger: string;
  variant: string | null;
};

/** Who the delivery is about; null when it names no repository, pull request or installation. */
export function target(
  event: string,
  p: any,
  handles: readonly string[],
): Target | 'no_review_command' | null {
  const repo = p?.repository?.full_name;
  const installationId = p?.installation?.id;
  if (typeof repo !== 'string' || !Number.isSafeInteger(installationId)) return null;
  if (event === 'issue_comment') {
    const command = parseCommand(p?.comment?.body, handles);
    if (command.kind !== 'command' || (command.verb !== 'review' && command.verb !== 'rerun'))
      return 'no_review_command';
    const prNumber = p?.issue?.number;
    if (!Number.isSafeInteger(prNumber) || !Number.isSafeInteger(p?.comment?.id)) return null;
    // Identity scoped to the comment id (4.7): an edit of the same comment is the same request.
    return {
      repo,
      prNumber,
      installationId,
      headSha: null,
      trigger: 'comment',
      variant: `comment-${p.comment.id}`,
    };
  }
  const prNumber = p?.pull_request?.number ?? p?.number;
  if (!Number.isSafeInteger(prNumber)) return null;
  const headSha = typeof p?.pull_request?.head?.sha === 'string' ? p.pull_request.head.sha : null;
  // A requeue (the bridge's, never GitHub's) names its variant: the run of its own review key.
  const requeued = p?.action === REQUEUE_TRIGGER && typeof p?.variant === 'string' ? p.variant : null;
  return {
    repo,
    prNumber,
    installationId,
    headSha,
    trigger: String(p?.action ?? 'pull_request'),
    variant: requeued,
  };
}

async function loadPayload(env: Env, m: QueueMessage): Promise<any> {
  if (m.body !== undefined) return JSON.parse(m.body);
  const stored = m.bodyKey && env.PAYLOADS ? await env.PAYLOADS.get(m.bodyKey) : null;
  if (!stored) throw new Error(`offloaded payload ${m.bodyKey} is missing`);
  return JSON.parse(await stored.text());
}

async function finish(env: Env, deliveryId: string, o: Outcome): Promise<Outcome> {
  await env.DB.prepare('UPDATE native_deliveries SET dispatch_outcome = ?, dispatch_reason = ? WHERE id = ?')
    .bind(o.outcome, o.reason ?? null, deliveryId)
    .run();
  log({ event: 'dispatch', deliveryId, ...o });
  return o;
}

/** What the worker records of a run it queues (`native_runs`): its target at a known head. */
export type RunToQueue = Omit<Target, 'variant'> & { headSha: string };

/** Records a new `queued` run of the review key; answers its id. */
export async function insertRun(env: Env, t: RunToQueue, key: string, deliveryId: string): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.prepare(
    `INSERT INTO native_runs (id, review_key, repo, pr_number, head_sha, trigger, status, installation_id, delivery_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
  )
    .bind(id, key, t.repo, t.prNumber, t.headSha, t.trigger, t.installationId, deliveryId, now, now)
    .run();
  return id;
}

/** The run of this review key, created when new; an earlier open run of the same PR is superseded. */
async function upsertRun(env: Env, t: Target & { headSha: string }, deliveryId: string) {
  const [owner, name] = t.repo.split('/') as [string, string];
  const key = reviewKey(owner, name, t.prNumber, t.headSha, t.variant);
  const found = await env.DB.prepare('SELECT id, status FROM native_runs WHERE review_key = ?')
    .bind(key)
    .first<{ id: string; status: string }>();
  if (found) return { id: found.id, key, status: found.status };
  await env.DB.prepare(
    `UPDATE native_runs SET status = 'superseded', updated_at = ? WHERE repo = ? AND pr_number = ? AND status IN ('queued', 'running') AND head_sha <> ?`,
  )
    .bind(new Date().toISOString(), t.repo, t.prNumber, t.headSha)
    .run();
  return { id: await insertRun(env, t, key, deliveryId), key, status: 'queued' };
}

const setRun = (env: Env, id: string, status: string) =>
  env.DB.prepare('UPDATE native_runs SET status = ?, updated_at = ? WHERE id = ?')
    .bind(status, new Date().toISOString(), id)
    .run();

const touchRun = (env: Env, id: string) =>
  env.DB.prepare("UPDATE native_runs SET updated_at = ? WHERE id = ? AND status = 'running'")
    .bind(new Date().toISOString(), id)
    .run();

/** Handles one queue message; acknowledges or retries it and answers the dispatch outcome. */
export async function consume(msg: QueuedMessage, env: Env): Promise<Outcome> {
  await ensureSchema(env.DB);
  const { deliveryId, event } = msg.body;
  const row = await env.DB.prepare(
    'UPDATE native_deliveries SET attempts = attempts + 1 WHERE id = ? RETURNING attempts',
  )
    .bind(deliveryId)
    .first<{ attempts: number }>();
  const attempts = row?.attempts ?? msg.attempts;
  if (attempts > intEnv(env.MAX_ATTEMPTS, 8)) {
    msg.ack();
    return finish(env, deliveryId, { outcome: 'dead_lettered', reason: 'max_attempts' });
  }
  const t = target(event, await loadPayload(env, msg.body), botHandlesFromEnv(env.VERDICT_BOT_HANDLES));
  if (t === null) {
    msg.ack();
    return finish(env, deliveryId, { outcome: 'dead_lettered', reason: 'unroutable' });
  }
  if (t === 'no_review_command') {
    msg.ack();
    return finish(env, deliveryId, { outcome: 'ignored', reason: 'no_review_command' });
  }
  const headSha = t.headSha ?? (await resolveHeadSha(env, t.installationId, t.repo, t.prNumber));
  const run = await upsertRun(env, { ...t, headSha }, deliveryId);
  if (run.status === 'superseded' || run.status === 'abandoned') {
    msg.ack();
    return finish(env, deliveryId, { outcome: 'skipped_obsolete', runId: run.id });
  }
  return dispatch(msg, env, { ...t, headSha }, run, attempts);
}

async function dispatch(
  msg: QueuedMessage,
  env: Env,
  t: Target & { headSha: string },
  run: { id: string; key: string },
  attempt: number,
): Promise<Outcome> {
  const { deliveryId } = msg.body;
  const leaseMs = intEnv(env.LEASE_MS, DEFAULT_LEASE_MS);
  const token = crypto.randomUUID();
  const got = await leaseCall(env, run.id, 'acquire', { token, leaseMs });
  if (got === 'completed') {
    await setRun(env, run.id, 'completed');
    msg.ack();
    return finish(env, deliveryId, { outcome: 'skipped_completed', runId: run.id });
  }
  if (got === 'locked') {
    msg.retry();
    return finish(env, deliveryId, { outcome: 'skipped_locked', runId: run.id });
  }
  await setRun(env, run.id, 'running');
  const request: ContainerReviewRequest = {
    runId: run.id,
    reviewKey: run.key,
    repo: t.repo,
    prNumber: t.prNumber,
    headSha: t.headSha,
    installationId: t.installationId,
    trigger: t.trigger,
    variant: t.variant,
    publishMode: env.VERDICT_PUBLISH_MODE === 'live' ? 'live' : 'shadow',
    leaseToken: token,
    attempt,
    mode: 'review',
  };
  const result = await callContainer(env, request, leaseMs);
  const completed = result.ok && result.status !== 'failed';
  try {
    const released = await leaseCall(env, run.id, 'release', {
      token,
      outcome: completed ? 'completed' : 'failed',
    });
    if (released === 'lost') log({ event: 'lease-release-failed', runId: run.id, reason: 'lost' });
  } catch (err) {
    log({ event: 'lease-release-failed', runId: run.id, err: String(err) });
  }
  await setRun(env, run.id, completed ? (result.status ?? 'completed') : 'failed');
  if (completed || result.retry === false) msg.ack();
  else msg.retry();
  return finish(env, deliveryId, {
    outcome: completed ? 'dispatched' : 'dispatch_failed',
    reason: result.reason,
    runId: run.id,
  });
}

/**
 * `POST /review` to the run's container: its own ReviewContainer instance on Cloudflare, else the
 * service binding (tests), else the local container's URL (VERDICT_CONTAINER_URL).
 */
function postReview(env: Env, runId: string, init: RequestInit): Promise<Response> {
  const ns = env.REVIEW_CONTAINERS;
  if (ns) return ns.get(ns.idFromName(runId)).fetch('http://container/review', init);
  if (env.CONTAINER) return env.CONTAINER.fetch('http://container/review', init);
  return fetch(`${env.VERDICT_CONTAINER_URL ?? 'http://127.0.0.1:8080'}/review`, init);
}

export type Dispatched = { ok: boolean; status?: string; reason?: string; error?: string; retry?: boolean };

/** POST /review on the container, renewing the lease meanwhile; a lost lease aborts the request. */
export async function callContainer(
  env: Env,
  request: ContainerReviewRequest,
  leaseMs: number,
): Promise<Dispatched> {
  const abort = new AbortController();
  const renew = setInterval(() => {
    leaseCall(env, request.leaseName ?? request.runId, 'renew', { token: request.leaseToken, leaseMs })
      .then(async (s) => {
        // A renewed lease keeps the run's row fresh: the reactions step waits while a review runs.
        if (s === 'renewed') await touchRun(env, request.runId);
        if (s !== 'lost') return;
        log({ event: 'lease_lost_aborted', runId: request.runId });
        abort.abort();
      })
      .catch((err) => log({ event: 'lease_renew_failed', runId: request.runId, err: String(err) }));
  }, renewEveryMs(leaseMs));
  try {
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: abort.signal,
    };
    const res = await postReview(env, request.runId, init);
    const text = await res.text();
    if (!res.ok) {
      // The container's error body is kept (3.4).
      log({ event: 'container-dispatch-failed', runId: request.runId, status: res.status, body: text });
      return { ok: false, reason: `container ${res.status}: ${text.slice(0, 500)}` };
    }
    const answer = containerReviewResponseSchema.parse(JSON.parse(text));
    return {
      ok: true,
      status: answer.status,
      reason: answer.reason ?? answer.error,
      error: answer.error,
      retry: answer.retry,
    };
  } catch (err) {
    log({ event: 'container-dispatch-error', runId: request.runId, err: String(err) });
    return { ok: false, reason: String(err) };
  } finally {
    clearInterval(renew);
  }
}
