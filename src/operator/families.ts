import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { guard, type AccessRule } from '../http/auth.js';
import { readJsonBody } from '../http/json.js';
import { sendJson, type Router } from '../http/router.js';
import { defineOperation, notFound, restOperation, type OperatorDeps } from './operation.js';

const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
const ADMIN: AccessRule = { classes: ['operatorAdmin'] };
const MEMORY_WRITE: AccessRule = { classes: ['operatorAdmin'], scope: 'memory:write' };

/**
 * The real operations of the families: the SCM view (the installed repositories as the store knows them;
 * alerts do not exist yet), an SCM sync (a `sync-repositories` command for the command bridge), and the
 * Test Lab records the CLI's `harness` command saves (newest first, at most 100).
 */
export const familyOperations = {
  scm: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { repositories: await ctx.store.repositories.list(), alerts: [] as never[] };
    },
  }),
  scmSync: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({}),
    status: () => 202,
    async run(ctx) {
      const { command } = await ctx.store.commands.create({
        id: ctx.newId('cmd'),
        kind: 'sync-repositories',
        payload: {},
        actor: ctx.principal.actor,
      });
      ctx.log.info(
        { event: 'command-created', commandId: command.id, kind: command.kind },
        'SCM sync queued',
      );
      return { created: true, command };
    },
  }),
  testLabRuns: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { runs: await ctx.store.harness.list(100) };
    },
  }),
  testLabRun: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ id: z.string().min(1).max(200) }),
    async run(ctx, { id }) {
      const run = await ctx.store.harness.get(id);
      if (!run) throw notFound('Not found');
      return { run };
    },
  }),
};

export const revisionBody = z.strictObject({
  revision: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

function notBuilt(res: ServerResponse, what: string): void {
  sendJson(res, 501, {
    ok: false,
    error: 'not_implemented',
    message: `${what} is not available in this version of Verdict`,
  });
}

/**
 * The memory, SCM and Test Lab route families (operator-api 4.6), with their authentication in place.
 * Memory reads answer empty, well-formed lists until that feature exists; Test Lab lists harness records; memory mutations authenticate and
 * then answer 501 `not_implemented` (nothing is stored, nothing is pretended). `POST /scm/sync` is real:
 * it creates a `sync-repositories` command for the command bridge.
 */
export function registerFamilyRoutes(router: Router, deps: { operator: OperatorDeps }): void {
  const { store } = deps.operator;
  const auth = { tokens: deps.operator.tokens, apiKeys: store.apiKeys };
  const read = (
    path: string,
    answer: (
      url: URL,
      params: Record<string, string>,
    ) => Promise<Record<string, unknown> | null> | Record<string, unknown> | null,
  ) =>
    router.add('GET', path, async (req, res, params, url) => {
      if (!(await guard(req, res, auth, READ_OR_KEY))) return;
      const body = await answer(url, params);
      if (!body) return sendJson(res, 404, { ok: false, error: 'not_found', message: 'Not found' });
      sendJson(res, 200, { ok: true, ...body });
    });
  const mutation = (method: string, path: string, rule: AccessRule, what: string) =>
    router.add(method, path, async (req: IncomingMessage, res) => {
      if (!(await guard(req, res, auth, rule))) return;
      req.resume();
      notBuilt(res, what);
    });

  // Memory. Reads with `read`; mutations with the admin token or `memory:write`, except the integration
  // preview, which a key can never reach (operator-api 5.2 rule 3).
  read('/operator/api/memory/integrations', () => ({ integrations: [] }));
  read('/operator/api/memory/contexts', () => ({ contexts: [] }));
  read('/operator/api/memory/contexts/:id', () => null);
  read('/operator/api/memory/clusters', () => ({ clusters: [] }));
  read('/operator/api/memory/knowledge', () => ({ knowledge: [] }));
  read('/operator/api/memory/knowledge/document', (url) => ({
    document: null,
    repo: url.searchParams.get('repo'),
    path: url.searchParams.get('path'),
  }));
  mutation('POST', '/operator/api/memory/integrations/preview', ADMIN, 'Memory integration preview');
  mutation('POST', '/operator/api/memory/contexts', MEMORY_WRITE, 'Memory');
  mutation('PATCH', '/operator/api/memory/contexts/:id', MEMORY_WRITE, 'Memory');
  mutation('DELETE', '/operator/api/memory/contexts/:id', MEMORY_WRITE, 'Memory');
  mutation('POST', '/operator/api/memory/clusters', MEMORY_WRITE, 'Memory');
  mutation('PATCH', '/operator/api/memory/clusters/:id', MEMORY_WRITE, 'Memory');
  mutation('DELETE', '/operator/api/memory/clusters/:id', MEMORY_WRITE, 'Memory');
  mutation('PUT', '/operator/api/memory/knowledge/document', MEMORY_WRITE, 'Memory');

  // SCM and Test Lab: operations, served here and by the tRPC facade.
  const ops = familyOperations;
  restOperation(router, 'GET', '/operator/api/scm', ops.scm, deps.operator, { from: 'query' });
  restOperation(router, 'POST', '/operator/api/scm/sync', ops.scmSync, deps.operator, {
    from: 'body',
    limit: 1024,
  });
  restOperation(router, 'GET', '/operator/api/test-lab', ops.testLabRuns, deps.operator, { from: 'query' });
  restOperation(router, 'GET', '/operator/api/test-lab/:id', ops.testLabRun, deps.operator, {
    from: 'params',
  });
  router.add('DELETE', '/operator/api/scm/alerts/:id', async (req, res) => {
    if (!(await guard(req, res, auth, ADMIN))) return;
    const body = await readJsonBody(req, res, revisionBody, 1024);
    if (!body.ok) return;
    sendJson(res, 404, { ok: false, error: 'not_found', message: 'No such SCM alert' });
  });
}
