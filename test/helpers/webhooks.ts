import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const examples: Array<{ name: string; examples: any[] }> = require('@octokit/webhooks-examples');

/** A deep copy of the first `@octokit/webhooks-examples` payload of an event (and action). */
export function example(event: string, action?: string): any {
  const group = examples.find((e) => e.name === event);
  const found = group?.examples.find((p) => action === undefined || p.action === action);
  if (!found) throw new Error(`no example for ${event}.${action}`);
  return structuredClone(found);
}

export const TEST_SECRET = 'test-webhook-secret';

export function sign(body: string | Buffer, secret = TEST_SECRET): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** GitHub's issue_comment.created example, moved onto pull request #2 with the given body. */
export function prComment(
  body: string,
  overrides: { commentId?: number; association?: string; login?: string; number?: number } = {},
): any {
  const payload = example('issue_comment', 'created');
  payload.issue.number = overrides.number ?? 2;
  payload.issue.pull_request = {
    url: `https://api.github.com/repos/Codertocat/Hello-World/pulls/${payload.issue.number}`,
  };
  payload.comment.body = body;
  payload.comment.id = overrides.commentId ?? 5550001;
  payload.comment.author_association = overrides.association ?? 'OWNER';
  payload.comment.user.login = overrides.login ?? 'Codertocat';
  payload.installation = { id: 77 };
  return payload;
}

export type PostResult = { status: number; body: any };

export async function postWebhook(
  baseUrl: string,
  event: string,
  payload: unknown,
  opts: { deliveryId?: string; signature?: string | null; raw?: string; path?: string; omit?: string[] } = {},
): Promise<PostResult & { deliveryId: string }> {
  const deliveryId = opts.deliveryId ?? randomUUID();
  const raw = opts.raw ?? JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-github-delivery': deliveryId,
    'x-github-event': event,
    'x-hub-signature-256': opts.signature === undefined ? sign(raw) : (opts.signature ?? ''),
  };
  for (const h of opts.omit ?? []) delete headers[h];
  const res = await fetch(`${baseUrl}${opts.path ?? '/github/webhooks'}`, {
    method: 'POST',
    headers,
    body: raw,
  });
  return { status: res.status, body: await res.json(), deliveryId };
}

/** Polls until `check` returns a truthy value (used to wait for the background worker). */
export async function eventually<T>(
  check: () => Promise<T | null | undefined | false>,
  timeoutMs = 5000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
