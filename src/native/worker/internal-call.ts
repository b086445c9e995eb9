/**
 * What every call of the container to an internal host goes through (state.ts, sandbox.ts): its body
 * parsed with the protocol's schema, and the run it names checked against the lease its token holds.
 */
import type { z } from 'zod';
import { leaseCall } from './consumer.js';
import type { Env } from './env.js';
import { json } from './ingress.js';

export const refuse = (status: number, code: string, message: string): Response =>
  json(status, { error: { code, message } });

export type NativeRun = { id: string; repo: string; pr_number: number; installation_id: number | null };

export async function parse<S extends z.ZodTypeAny>(
  request: Request,
  schema: S,
): Promise<z.infer<S> | Response> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return refuse(400, 'invalid_json', 'the body is not JSON');
  }
  const parsed = schema.safeParse(body);
  return parsed.success ? parsed.data : refuse(400, 'invalid_request', parsed.error.message);
}

/** The run the lease token holds, or the refusal: 404 `run_not_found`, 409 `lease_lost`. */
export async function leasedRun(
  env: Env,
  { runId, leaseToken, leaseName }: { runId: string; leaseToken: string; leaseName?: string },
): Promise<NativeRun | Response> {
  const run = await env.DB.prepare(
    'SELECT id, repo, pr_number, installation_id FROM native_runs WHERE id = ?',
  )
    .bind(runId)
    .first<NativeRun>();
  if (!run) return refuse(404, 'run_not_found', `no native run ${runId}`);
  const lease = await leaseCall(env, leaseName ?? runId, 'check', { token: leaseToken });
  if (lease !== 'valid')
    return refuse(409, 'lease_lost', `the dispatch lease of ${runId} is not held by this token`);
  return run;
}
