/**
 * Miniflare's `outboundService` for local runs of the native worker: workerd's default network refuses
 * loopback and private addresses, so the worker's outbound requests (the container's local URL, a local
 * GitHub or fake) are sent by this Node process instead.
 */
export async function relay(request: Request): Promise<Response> {
  const body = ['GET', 'HEAD'].includes(request.method) ? undefined : await request.arrayBuffer();
  const res = await fetch(request.url, { method: request.method, headers: request.headers, body });
  return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
}
