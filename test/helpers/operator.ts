/** Every static service token class set, for route × token tests (operator-api 5.1). */
export const TOKENS = {
  VERDICT_OPERATOR_ADMIN_TOKEN: 'admin-secret',
  VERDICT_OPERATOR_READ_TOKEN: 'read-secret',
  VERDICT_OPERATOR_COMMAND_TOKEN: 'command-secret',
  VERDICT_OPERATOR_BRIDGE_TOKEN: 'bridge-secret',
  VERDICT_QUEUE_ADMIN_TOKEN: 'qadmin-secret',
  VERDICT_QUEUE_ENQUEUE_TOKEN: 'qenqueue-secret',
  VERDICT_QUEUE_WORKER_TOKEN: 'qworker-secret',
};

/**
 * One call of a running Verdict's HTTP routes: `token` as the bearer token (none when null), `body` sent as
 * JSON (a string is sent as it is), and any extra `headers`. The JSON answer is parsed.
 */
export async function callApi(
  baseUrl: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as any,
    headers: res.headers,
    cacheControl: res.headers.get('cache-control'),
  };
}
