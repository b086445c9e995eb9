/**
 * `pr-agent-loop` in the native runtime (review-engine 6.4; NAMES.md "Never missing a pull request"),
 * with the Node loop's selection rules (src/scheduler/redelivery.ts):
 *
 * 1. the App's deliveries of the last 72 hours that no attempt delivered and that this runtime does not
 *    hold (no `delivery:{id}` marker in KV, no record in D1) are redelivered, oldest first, at most 50 a
 *    pass;
 * 2. every open pull request of an installed repository enabled by its stored configuration (as the Node
 *    loop: a catch-up review is never the first thing an operator learns about a repository; in this
 *    runtime a repository is stored once a review ran in it) whose head has no run here is queued as a
 *    `catch_up` review: a queue message the consumer dispatches like a webhook's, recorded under the id
 *    `catch-up:{repo}#{number}@{head}` so a later pass does not queue it again;
 * 3. the reactions on Verdict's line comments of those open pull requests are read into memory feedback
 *    (reactions.ts, with the Node loop's rules: src/scheduler/reaction-pass.ts,
 *    src/memory/feedback-rules.ts), at most 100 pull requests a pass.
 *
 * A failure of one call is recorded and the pass goes on.
 */
import type { CatchUpArtifact } from '../../scheduler/catch-up.js';
import {
  catchUpAlerts,
  CATCH_UP_TRIGGER,
  MAX_REDELIVERIES_PER_PASS,
  REDELIVERY_WINDOW_MS,
  hookDelivery,
  undelivered,
} from '../../scheduler/redelivery.js';
import { MAX_REACTION_PRS_PER_PASS } from '../../scheduler/reaction-pass.js';
import { raiseNativeAlert } from './alerts.js';
import type { Env } from './env.js';
import { apiBase, appAuth, githubPages, headers, installationToken } from './github.js';
import { queueReview } from './ingress.js';
import { readNativeReactions, reviewRunning } from './reactions.js';

export type NativeCatchUp = CatchUpArtifact & {
  /** When the pass ran (the artifact field of NAMES.md "Never missing a pull request"). */
  generatedAt?: string;
  /** The feedback step (3): new reactions counted on Verdict's line comments of open pull requests. */
  reactions: number;
  /** Repositories whose reactions wait for the next pass: a review of them was running (reactions.ts). */
  reactionsWaiting: string[];
};

type OpenPull = { number: number; head: { sha: string } };

async function held(env: Env, guid: string): Promise<boolean> {
  if ((await env.DELIVERIES.get(`delivery:${guid}`)) !== null) return true;
  return (
    (await env.DB.prepare('SELECT 1 AS x FROM native_deliveries WHERE id = ?').bind(guid).first()) !== null
  );
}

/** Step (1); answers how many deliveries never arrived (for the pass's alerts). */
async function redeliver(env: Env, auth: string, now: number, out: NativeCatchUp): Promise<number> {
  let attempts;
  try {
    attempts = await githubPages(
      env,
      '/app/hook/deliveries',
      auth,
      (body: any[]) => body.map(hookDelivery),
      (page) => page.some((a) => a.deliveredAt < now - REDELIVERY_WINDOW_MS),
    );
  } catch (error) {
    out.errors.push(`listing the App's webhook deliveries failed: ${(error as Error).message}`);
    return 0;
  }
  const failed = [];
  for (const attempt of undelivered(attempts, now))
    if (!(await held(env, attempt.guid))) failed.push(attempt);
  out.deferred = Math.max(0, failed.length - MAX_REDELIVERIES_PER_PASS);
  for (const attempt of failed.slice(0, MAX_REDELIVERIES_PER_PASS)) {
    const res = await fetch(`${apiBase(env)}/app/hook/deliveries/${attempt.id}/attempts`, {
      method: 'POST',
      headers: headers(auth),
    }).catch((error: Error) => error);
    if (res instanceof Response && res.ok) out.redelivered.push(attempt.guid);
    else
      out.errors.push(
        `redelivery of ${attempt.guid} (${attempt.event}) failed: ${res instanceof Response ? `GitHub answered ${res.status}` : res.message}`,
      );
  }
  return failed.length;
}

type StoredRepo = {
  full_name: string;
  installation_id: number | null;
  installed: number;
  config: string | null;
};

/** Enabled by its stored configuration (the Node loop's rule, docs/decisions.md "Scheduled jobs"). */
function enabled(repo: StoredRepo): boolean {
  try {
    return repo.config !== null && (JSON.parse(repo.config) as { enabled?: unknown }).enabled === true;
  } catch {
    return false;
  }
}

/** Queues the catch-up review of one open pull request unless its head has a run or was queued before. */
async function queueOne(
  env: Env,
  repo: string,
  installationId: number,
  pr: OpenPull,
): Promise<string | null> {
  const sha = pr.head.sha;
  const run = await env.DB.prepare(
    `SELECT 1 AS x FROM native_runs WHERE repo = ? AND pr_number = ? AND head_sha = ?
     UNION ALL SELECT 1 FROM runs WHERE repo = ? AND pr_number = ? AND head_sha = ? LIMIT 1`,
  )
    .bind(repo, pr.number, sha, repo, pr.number, sha)
    .first();
  const id = `catch-up:${repo}#${pr.number}@${sha}`;
  if (run || (await held(env, id))) return null;
  await queueReview(env, id, CATCH_UP_TRIGGER, { repo, prNumber: pr.number, headSha: sha, installationId });
  return `${repo}#${pr.number}@${sha}`;
}

/**
 * Steps (2) and (3) for every installed, enabled repository: its open pull requests listed once, the
 * catch-up reviews queued, then the reactions read (reactions.ts) unless a review of it is running.
 */
async function queueCatchUps(env: Env, now: number, out: NativeCatchUp): Promise<void> {
  const { results } = await env.DB.prepare(
    'SELECT full_name, installation_id, installed, config FROM repositories ORDER BY full_name',
  ).all<StoredRepo>();
  const budget = { left: MAX_REACTION_PRS_PER_PASS };
  for (const repo of results) {
    if (!repo.installed || repo.installation_id === null || !enabled(repo)) continue;
    let token: string;
    let pulls: OpenPull[];
    try {
      ({ token } = await installationToken(env, repo.installation_id));
      const path = `/repos/${repo.full_name}/pulls?state=open`;
      pulls = await githubPages(env, path, `token ${token}`, (b: OpenPull[]) => b);
      for (const pr of pulls) {
        const queued = await queueOne(env, repo.full_name, repo.installation_id, pr);
        if (queued) out.enqueued.push(queued);
      }
    } catch (error) {
      out.errors.push(
        `listing the open pull requests of ${repo.full_name} failed: ${(error as Error).message}`,
      );
      continue;
    }
    if (await reviewRunning(env, repo.full_name, now)) {
      out.reactionsWaiting.push(repo.full_name);
      continue;
    }
    const read = await readNativeReactions(env, repo.full_name, token, pulls, budget, now);
    out.reactions += read.reactions;
    out.errors.push(...read.errors);
  }
}

export async function runNativeCatchUp(env: Env, now: number): Promise<NativeCatchUp> {
  const out: NativeCatchUp = {
    redelivered: [],
    enqueued: [],
    deferred: 0,
    errors: [],
    reactions: 0,
    reactionsWaiting: [],
  };
  if (!env.APP_ID || !env.PRIVATE_KEY) return { ...out, skipped: 'app_credentials_missing' };
  const auth = await appAuth(env);
  const failed = await redeliver(env, auth, now, out);
  await queueCatchUps(env, now, out);
  for (const alert of catchUpAlerts(failed, out)) await raiseNativeAlert(env, alert, now);
  return { generatedAt: new Date(now).toISOString(), ...out };
}
