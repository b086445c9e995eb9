import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { TRPC_MAX_BATCH } from './limits.js';
import type { AppRouter } from './router.js';

export type VerdictClientOptions = {
  /** Where Verdict listens, e.g. `http://127.0.0.1:3000` (the `/trpc` path is added). */
  baseUrl: string;
  /** A static service token or a scoped API key (`vdt_…`). */
  token: string;
  /** Attribution for writes (`x-operator-actor`). */
  actor?: string;
  /** Sent as `Idempotency-Key` (command creation). */
  idempotencyKey?: string;
};

/** A typed client of the tRPC facade for internal scripts: `client.snapshot.query({ status: 'failed' })`. */
export function createVerdictClient(options: VerdictClientOptions) {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}` };
  if (options.actor) headers['x-operator-actor'] = options.actor;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${options.baseUrl.replace(/\/+$/, '')}/trpc`,
        headers,
        maxItems: TRPC_MAX_BATCH,
      }),
    ],
  });
}

export type VerdictClient = ReturnType<typeof createVerdictClient>;

/** The REST-equivalent `error` code of a refused call (`unauthorized`, `not_found`, …), or null. */
export function operatorCodeOf(error: unknown): string | null {
  if (!(error instanceof TRPCClientError)) return null;
  const data = error.data as { operatorCode?: string | null } | undefined;
  return data?.operatorCode ?? null;
}
