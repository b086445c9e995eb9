import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import { guard, type AccessRule, type ServiceTokens } from '../http/auth.js';
import { readJsonBody } from '../http/json.js';
import { sendJson, type Router } from '../http/router.js';
import type { Store } from '../store/index.js';

const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
const ADMIN: AccessRule = { classes: ['operatorAdmin'] };
const MEMORY_WRITE: AccessRule = { classes: ['operatorAdmin'], scope: 'memory:write' };

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
export function registerFamilyRoutes(
  router: Router,
  deps: { store: Store; tokens: ServiceTokens; log: Logger; newId: () => string },
): void {
  const { store } = deps;
  const auth = { tokens: deps.tokens, apiKeys: store.apiKeys };
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

  // SCM: the installed repositories as the store knows them; alerts do not exist yet.
  read('/operator/api/scm', async () => ({ repositories: await store.repositories.list(), alerts: [] }));
  router.add('POST', '/operator/api/scm/sync', async (req, res) => {
    const who = await guard(req, res, auth, ADMIN);
    if (!who) return;
    const body = await readJsonBody(req, res, z.strictObject({}), 1024);
    if (!body.ok) return;
    const { command } = await store.commands.create({
      id: deps.newId(),
      kind: 'sync-repositories',
      payload: {},
      actor: who.actor,
    });
    deps.log.info({ event: 'command-created', commandId: command.id, kind: command.kind }, 'SCM sync queued');
    sendJson(res, 202, { ok: true, created: true, command });
  });
  router.add('DELETE', '/operator/api/scm/alerts/:id', async (req, res) => {
    if (!(await guard(req, res, auth, ADMIN))) return;
    const body = await readJsonBody(req, res, revisionBody, 1024);
    if (!body.ok) return;
    sendJson(res, 404, { ok: false, error: 'not_found', message: 'No such SCM alert' });
  });

  // Test Lab: the harness records the CLI's `harness` command saves (newest first, at most 100).
  read('/operator/api/test-lab', async () => ({ runs: await store.harness.list(100) }));
  read('/operator/api/test-lab/:id', async (_url, params) => {
    const run = await store.harness.get(params.id ?? '');
    return run ? { run } : null;
  });
}
