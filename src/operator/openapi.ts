import { z } from 'zod';
import { sendJson, type Router } from '../http/router.js';
import { ackBody, claimBody, enqueueBody, failBody, releaseBody, renewBody } from '../queue/http-routes.js';
import { patchCommandBody, replayWebhookBody, requeueBody, retryPublishBody } from './commands.js';
import { revisionBody } from './families.js';
import { createKeyBody } from './keys.js';
import { releaseLeaseBody, requeueDeadBody } from './queue-repair.js';
import { repoConfigPatch } from './read-routes.js';
import { settingsPatchBody } from './settings.js';

const MAX_LEASE_MS = 7 * 86_400_000;

/** Request bodies by `METHOD /path` (router patterns). One source: the zod schemas the routes validate with. */
export const REQUEST_BODIES: Record<string, z.ZodType> = {
  'POST /operator/api/commands/requeue': requeueBody,
  'POST /operator/api/commands/retry-publish': retryPublishBody,
  'POST /operator/api/commands/replay-webhook': replayWebhookBody,
  'PATCH /operator/api/commands/:id': patchCommandBody,
  'POST /operator/api/keys': createKeyBody,
  'POST /operator/api/queue/requeue-dead': requeueDeadBody,
  'POST /operator/api/queue/release-lease': releaseLeaseBody,
  'PATCH /operator/api/repos/:repo': repoConfigPatch,
  'PATCH /operator/api/settings': settingsPatchBody,
  'POST /operator/api/scm/sync': z.strictObject({}),
  'DELETE /operator/api/scm/alerts/:id': revisionBody,
  'POST /queue/enqueue': enqueueBody,
  'POST /queue/claim': claimBody(MAX_LEASE_MS),
  'POST /queue/renew': renewBody(MAX_LEASE_MS),
  'POST /queue/ack': ackBody,
  'POST /queue/fail': failBody,
  'POST /queue/release': releaseBody,
};

const errorSchema = {
  type: 'object',
  properties: { ok: { const: false }, error: { type: 'string' }, message: { type: 'string' } },
  required: ['ok', 'error'],
};

/**
 * The OpenAPI 3.1 document of the operator and queue routes, built from the router's own route list and
 * the request schemas above, so it cannot drift from what is served.
 */
export function buildOpenApi(router: Router): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, pattern } of router.list()) {
    if (!pattern.startsWith('/operator/api') && !pattern.startsWith('/queue')) continue;
    if (pattern === '/operator/api/openapi.json') continue;
    const path = pattern.replace(/:([A-Za-z]+)/g, '{$1}');
    const params = [...pattern.matchAll(/:([A-Za-z]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const body = REQUEST_BODIES[`${method} ${pattern}`];
    const operation: Record<string, unknown> = {
      operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
      security: [{ bearer: [] }],
      ...(params.length > 0 ? { parameters: params } : {}),
      responses: {
        '200': { description: 'Success', content: { 'application/json': { schema: { type: 'object' } } } },
        '400': { description: 'Invalid request', content: { 'application/json': { schema: errorSchema } } },
        '401': {
          description: 'Missing or wrong token',
          content: { 'application/json': { schema: errorSchema } },
        },
        '403': {
          description: 'API key outside its scope',
          content: { 'application/json': { schema: errorSchema } },
        },
      },
    };
    if (body) {
      const { $schema: _drop, ...schema } = z.toJSONSchema(body, {
        io: 'input',
        unrepresentable: 'any',
      }) as Record<string, unknown>;
      operation.requestBody = { required: true, content: { 'application/json': { schema } } };
    }
    (paths[path] ??= {})[method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Verdict operator API', version: '1.0.0' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}

/** `GET /operator/api/openapi.json`: unauthenticated (it describes the API and holds no data). */
export function registerOpenApiRoute(router: Router): void {
  let cached: Record<string, unknown> | null = null;
  router.add('GET', '/operator/api/openapi.json', (_req, res) => {
    cached ??= buildOpenApi(router);
    sendJson(res, 200, cached);
  });
}
