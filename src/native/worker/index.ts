/**
 * The native edge worker (review-engine 1.4, 4.1): the public fetch handler answers only `GET /health`
 * and `POST /github/webhooks`; every other path (the operator API included) is 404.
 */
import type { Env } from './env.js';
import { handleWebhook, json } from './ingress.js';

export async function handleFetch(request: Request, env: Env): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (pathname === '/health' && request.method === 'GET') return json(200, { ok: true });
  if (pathname === '/github/webhooks' && request.method === 'POST') return handleWebhook(request, env);
  return json(404, { error: 'not_found' });
}

export default {
  fetch: (request: Request, env: Env) => handleFetch(request, env),
};
