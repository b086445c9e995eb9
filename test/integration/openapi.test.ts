import { REQUEST_BODIES } from '../../src/operator/openapi.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';

/** The OpenAPI document is built from the served routes and the validating schemas: it cannot drift. */
describe('GET /operator/api/openapi.json', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict({ VERDICT_WORKER_INLINE: '0' });
  });
  afterAll(() => app.stop());

  // Mutations that take no JSON body.
  const BODYLESS = new Set(['POST /operator/api/keys/:id/revoke']);

  test('every operator and queue route is documented, with its request schema', async () => {
    const res = await fetch(`${app.baseUrl}/operator/api/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    const routes = routesOf(app);
    for (const { method, pattern } of routes) {
      const path = pattern.replace(/:([A-Za-z]+)/g, '{$1}');
      const op = doc.paths[path]?.[method.toLowerCase()];
      expect([method, pattern, op !== undefined]).toEqual([method, pattern, true]);
      const key = `${method} ${pattern}`;
      if (method !== 'GET' && !BODYLESS.has(key)) {
        expect([key, op.requestBody !== undefined]).toEqual([key, true]);
      }
    }
    for (const key of Object.keys(REQUEST_BODIES)) {
      expect([key, routes.some((r) => `${r.method} ${r.pattern}` === key)]).toEqual([key, true]);
    }
    const requeue =
      doc.paths['/operator/api/commands/requeue'].post.requestBody.content['application/json'].schema;
    expect(requeue.additionalProperties).toBe(false);
    expect(Object.keys(requeue.properties).sort()).toEqual(
      ['actorId', 'commandId', 'number', 'reason', 'repo', 'reviewKey', 'variant'].sort(),
    );
    expect(doc.paths['/operator/api/commands/{id}'].patch.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    ]);
  });
});

function routesOf(app: RunningVerdict) {
  return app.verdict.router
    .list()
    .filter((r) => r.pattern.startsWith('/operator/api') || r.pattern.startsWith('/queue'))
    .filter((r) => r.pattern !== '/operator/api/openapi.json');
}
