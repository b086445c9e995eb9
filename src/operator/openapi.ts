import { z } from 'zod';
import { sendJson, type Router } from '../http/router.js';
import { ackBody, claimBody, enqueueBody, failBody, releaseBody, renewBody } from '../queue/http-routes.js';

const MAX_LEASE_MS = 7 * 86_400_000;

/**
 * Request bodies of the routes that are not operator operations, by `METHOD /path` (router patterns).
 * Operations declare their own input on the router (`RouteMeta`). One source either way: the zod schemas
 * the routes validate with.
 */
export const REQUEST_BODIES: Record<string, z.ZodType> = {
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

/** A response of `media` content (JSON by default) with `schema`. */
const response = (description: string, schema: unknown, media = 'application/json') => ({
  description,
  content: { [media]: { schema } },
});

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return json;
}

/** Report errors are `{error, code, message}` (NAMES.md); the export answers a ZIP. */
function reportResponses(operation: Record<string, unknown>, pattern: string): void {
  const reportError = {
    type: 'object',
    properties: { error: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
    required: ['error', 'code', 'message'],
  };
  const responses = operation.responses as Record<string, unknown>;
  responses['200'] = pattern.endsWith('/export')
    ? response(
        'ZIP of report.json, findings.csv, reviewed-prs.csv, comments.csv (attachment)',
        { type: 'string', format: 'binary' },
        'application/zip',
      )
    : response('The report (schema verdict.reports.v1)', { type: 'object' });
  responses['400'] = response('A rejected parameter: invalid_request / invalid_parameter', reportError);
  responses['413'] = response('Over a source bound, or an export over 20 MiB: report_too_large', reportError);
  responses['500'] = response('Any other failure: report_error', reportError);
}

/**
 * The OpenAPI 3.1 document of the operator and queue routes, built from the router's own route list and
 * the request schemas above, so it cannot drift from what is served.
 */
export function buildOpenApi(router: Router): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, pattern, meta } of router.list()) {
    if (!pattern.startsWith('/operator/api') && !pattern.startsWith('/queue')) continue;
    if (pattern === '/operator/api/openapi.json') continue;
    const path = pattern.replace(/:([A-Za-z]+)/g, '{$1}');
    const params = [...pattern.matchAll(/:([A-Za-z]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    let body = REQUEST_BODIES[`${method} ${pattern}`];
    if (meta?.source === 'body') body = meta.input;
    if (meta?.source === 'params+body') {
      const shape = (meta.input as unknown as { shape?: Record<string, z.ZodType> }).shape;
      body = shape?.body;
    }
    if (meta?.source === 'query') {
      const json = jsonSchema(meta.input);
      const properties = (json.properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const [name, schema] of Object.entries(properties)) {
        params.push({ name, in: 'query', required: false, schema: schema as { type: string } });
      }
    }
    const operation: Record<string, unknown> = {
      operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
      security: [{ bearer: [] }],
      ...(params.length > 0 ? { parameters: params } : {}),
      responses: {
        '200': response('Success', { type: 'object' }),
        '400': response('Invalid request', errorSchema),
        '401': response('Missing or wrong token', errorSchema),
        '403': response('API key outside its scope', errorSchema),
      },
    };
    if (pattern.startsWith('/operator/api/reports')) reportResponses(operation, pattern);
    if (body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: jsonSchema(body) } },
      };
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
