import type { IncomingMessage, ServerResponse } from 'node:http';
import { initTRPC, TRPCError } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { z } from 'zod';
import { authorize } from '../http/auth.js';
import { TRPC_MAX_BATCH } from './limits.js';
import { nestedDeeperThan, NUL_BYTE_MESSAGE, nulBytePath, TOO_DEEP_MESSAGE } from '../http/json.js';
import { sendJson } from '../http/router.js';
import { requestContext, type OperatorDeps } from '../operator/rest.js';
import { analyticsOperations } from '../services/analytics.js';
import { commandOperations } from '../services/commands.js';
import { keyOperations } from '../services/keys.js';
import { memoryOperations } from '../services/memory.js';
import { OperatorError, type Operation, type OperationContext } from '../services/operation.js';
import { queueRepairOperations } from '../services/queue-repair.js';
import { repoOperations } from '../services/repos.js';
import { reportOperations } from '../services/reports.js';
import { scmOperations } from '../services/scm.js';
import { settingsOperations } from '../services/settings.js';
import { snapshotOperations } from '../services/snapshot.js';
import { testLabOperations } from '../services/test-lab.js';
import { traceOperations } from '../services/traces.js';
import { webhookOperations } from '../services/webhooks.js';
import type { Mount } from '../server.js';

export const TRPC_PREFIX = '/trpc';
/** Largest tRPC request body (a batch of calls); the settings document keeps its own 256 KiB rule. */
export const TRPC_MAX_BODY_BYTES = 1024 * 1024;

type Context = { deps: OperatorDeps; req: IncomingMessage; res?: ServerResponse };

const STATUS_CODES: Record<number, TRPCError['code']> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'TOO_MANY_REQUESTS',
  501: 'NOT_IMPLEMENTED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

/** The REST `error` code and extra fields of a refusal, carried to the client in `error.data`. */
class RefusalCause extends Error {
  constructor(
    readonly status: number,
    readonly operatorCode: string,
    readonly extra: Record<string, unknown>,
  ) {
    super(operatorCode);
  }
}

const t = initTRPC.context<Context>().create({
  // An answer never carries a server stack trace or file path (tRPC adds `data.stack` outside
  // production), and an unexpected error's own message is replaced, as the REST routes answer 500.
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const { stack: _stack, ...data } = shape.data;
    const unexpected = error.code === 'INTERNAL_SERVER_ERROR' && !(cause instanceof RefusalCause);
    return {
      ...shape,
      message: unexpected ? 'Internal server error' : shape.message,
      data: {
        ...data,
        // The flattened zod error of an invalid input (null otherwise).
        zodError: cause instanceof z.ZodError ? z.flattenError(cause) : null,
        operatorCode: cause instanceof RefusalCause ? cause.operatorCode : null,
        operatorStatus: cause instanceof RefusalCause ? cause.status : null,
        details: cause instanceof RefusalCause && Object.keys(cause.extra).length > 0 ? cause.extra : null,
      },
    };
  },
});

function refusal(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
  return new TRPCError({
    code: STATUS_CODES[status] ?? 'INTERNAL_SERVER_ERROR',
    message,
    cause: new RefusalCause(status, code, extra),
  });
}

/**
 * One procedure per operator operation: the same access rule (token classes, API-key scope), the same
 * input schema and the same service as its REST route. Nothing is checked here that the operation does
 * not check itself.
 */
function authed<S extends z.ZodType, O>(op: Operation<S, O>, kind: Operation['type']) {
  if (op.type !== kind) throw new Error(`a ${op.type} cannot be served as a tRPC ${kind}`);
  const base = t.procedure
    .use(async ({ ctx, next, getRawInput }) => {
      const { deps, req } = ctx;
      const auth = { tokens: deps.tokens, apiKeys: deps.store.apiKeys, throttle: deps.throttle };
      const access = await authorize(req, auth, op.rule);
      if (!access.ok) {
        const { status, body, retryAfter } = access.refusal;
        if (retryAfter !== undefined) ctx.res?.setHeader('retry-after', String(retryAfter));
        throw refusal(status, body.error, body.message ?? 'Unauthorized');
      }
      // As on REST: an input nested past the depth limit is refused before any schema walks it.
      const raw = await getRawInput();
      if (nestedDeeperThan(raw)) throw refusal(400, 'invalid_request', TOO_DEEP_MESSAGE);
      const nul = nulBytePath(raw);
      if (nul !== null) throw refusal(400, 'invalid_request', `Invalid input ${nul}: ${NUL_BYTE_MESSAGE}`);
      return next({ ctx: { operation: requestContext(deps, access.principal, req) } });
    })
    .input(op.input);
  const resolve = async ({ ctx, input }: { ctx: { operation: OperationContext }; input: unknown }) => {
    try {
      return await op.run(ctx.operation, input as z.output<S>);
    } catch (error) {
      if (error instanceof OperatorError) throw refusal(error.status, error.code, error.message, error.extra);
      throw error;
    }
  };
  return { base, resolve };
}

function query<S extends z.ZodType, O>(op: Operation<S, O>) {
  const { base, resolve } = authed(op, 'query');
  return base.query(resolve);
}

function mutation<S extends z.ZodType, O>(op: Operation<S, O>) {
  const { base, resolve } = authed(op, 'mutation');
  return base.mutation(resolve);
}

export const appRouter = t.router({
  snapshot: query(snapshotOperations.snapshot),
  pullRequest: query(snapshotOperations.pullRequest),
  repos: t.router({
    list: query(repoOperations.list),
    configure: mutation(repoOperations.configure),
  }),
  webhooks: t.router({
    list: query(webhookOperations.list),
    get: query(webhookOperations.get),
  }),
  analytics: query(analyticsOperations.analytics),
  /** The report of operator-api 2.7 (same parameters, rule and bounds as `GET /operator/api/reports`). */
  reports: query(reportOperations.report),
  traces: t.router({
    list: query(traceOperations.list),
    get: query(traceOperations.get),
  }),
  commands: t.router({
    list: query(commandOperations.list),
    get: query(commandOperations.get),
    requeue: mutation(commandOperations.requeue),
    retryPublish: mutation(commandOperations.retryPublish),
    replayWebhook: mutation(commandOperations.replayWebhook),
    patch: mutation(commandOperations.patch),
  }),
  settings: t.router({
    get: query(settingsOperations.get),
    patch: mutation(settingsOperations.patch),
    audit: query(settingsOperations.audit),
    usage: query(settingsOperations.usage),
  }),
  memory: t.router({
    integrations: t.router({
      list: query(memoryOperations.integrations),
      preview: mutation(memoryOperations.previewIntegration),
    }),
    contexts: t.router({
      list: query(memoryOperations.contexts),
      get: query(memoryOperations.context),
      create: mutation(memoryOperations.createContext),
      update: mutation(memoryOperations.updateContext),
      delete: mutation(memoryOperations.deleteContext),
    }),
    clusters: t.router({
      list: query(memoryOperations.clusters),
      create: mutation(memoryOperations.createCluster),
      update: mutation(memoryOperations.updateCluster),
      delete: mutation(memoryOperations.deleteCluster),
    }),
    knowledge: t.router({
      list: query(memoryOperations.knowledge),
      document: query(memoryOperations.knowledgeDocument),
      putDocument: mutation(memoryOperations.putKnowledgeDocument),
    }),
  }),
  scm: t.router({
    get: query(scmOperations.view),
    sync: mutation(scmOperations.sync),
    dismissAlert: mutation(scmOperations.dismissAlert),
  }),
  testLab: t.router({
    list: query(testLabOperations.list),
    get: query(testLabOperations.get),
  }),
  queue: t.router({
    requeueDead: mutation(queueRepairOperations.requeueDead),
    releaseLease: mutation(queueRepairOperations.releaseLease),
  }),
  keys: t.router({
    list: query(keyOperations.list),
    create: mutation(keyOperations.create),
    revoke: mutation(keyOperations.revoke),
  }),
});

/** The facade's type, for typed clients (`createVerdictClient`). */
export type AppRouter = typeof appRouter;

/** Serves the facade under `/trpc` on the main HTTP server. */
export function trpcMount(deps: OperatorDeps): Mount {
  const handler = createHTTPHandler({
    router: appRouter,
    basePath: `${TRPC_PREFIX}/`,
    maxBodySize: TRPC_MAX_BODY_BYTES,
    maxBatchSize: TRPC_MAX_BATCH,
    createContext: ({ req, res }) => ({ deps, req, res }),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') {
        deps.log.error({ event: 'trpc-failed', err: error.cause ?? error, path }, 'tRPC call failed');
      }
    },
  });
  return {
    prefix: TRPC_PREFIX,
    handle: (req: IncomingMessage, res: ServerResponse) =>
      new Promise<void>((resolve) => {
        res.once('close', () => resolve());
        res.once('finish', () => resolve());
        try {
          handler(req, res);
        } catch (error) {
          deps.log.error({ event: 'trpc-failed', err: error }, 'tRPC handler threw');
          if (!res.headersSent) sendJson(res, 500, { ok: false, error: 'internal_error' });
          resolve();
        }
      }),
  };
}
