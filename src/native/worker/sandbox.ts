/**
 * `sandbox.internal` (review-engine 4.2: "`sandbox.internal` handles validation"): the container's
 * `POST /run` carries a validation plan and the checkout (src/native/container/sandbox.ts). The worker
 * checks the run's lease, then hands the job to the run's sandbox, a process with the validation
 * executors (src/native/sandbox/): its own ValidationSandbox instance on Cloudflare, else the service
 * binding `SANDBOX` (tests), else `VERDICT_SANDBOX_URL` (local runs). A deployment with none answers 503
 * `no_sandbox`, which the review reports as "no sandbox binding available" (7.4).
 */
import { sandboxRunRequestSchema, validationOutcomeSchema, type SandboxJob } from '../protocol.js';
import type { Env } from './env.js';
import { json } from './ingress.js';
import { leasedRun, parse, refuse } from './internal-call.js';

function postJob(env: Env, runId: string, init: RequestInit): Promise<Response> | null {
  const ns = env.VALIDATION_SANDBOXES;
  if (ns) return ns.get(ns.idFromName(runId)).fetch('http://sandbox/run', init);
  if (env.SANDBOX) return env.SANDBOX.fetch('http://sandbox/run', init);
  if (env.VERDICT_SANDBOX_URL) return fetch(`${env.VERDICT_SANDBOX_URL.replace(/\/$/, '')}/run`, init);
  return null;
}

export async function sandboxRun(request: Request, env: Env): Promise<Response> {
  const body = await parse(request, sandboxRunRequestSchema);
  if (body instanceof Response) return body;
  const run = await leasedRun(env, body);
  if (run instanceof Response) return run;
  const { runId, leaseToken: _token, leaseName: _name, ...rest } = body;
  const job: SandboxJob = rest;
  const sent = postJob(env, runId, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(job),
  });
  if (!sent) return refuse(503, 'no_sandbox', 'this deployment has no validation sandbox');
  let answer: Response;
  try {
    answer = await sent;
  } catch (error) {
    return refuse(502, 'sandbox_unreachable', `the sandbox did not answer: ${String(error)}`);
  }
  const text = await answer.text();
  if (!answer.ok) {
    const status = answer.status === 503 ? 503 : 502;
    return refuse(status, 'sandbox_failed', `the sandbox answered ${answer.status}: ${text.slice(0, 500)}`);
  }
  let outcome: unknown;
  try {
    outcome = JSON.parse(text);
  } catch {
    outcome = null;
  }
  const parsed = validationOutcomeSchema.safeParse(outcome);
  if (!parsed.success) return refuse(502, 'sandbox_failed', 'the sandbox answered no validation outcome');
  return json(200, parsed.data);
}
