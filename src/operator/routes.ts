import type { z } from 'zod';
import type { Router } from '../http/router.js';
import { POLICY_MAX_BODY_BYTES } from '../policy/policy.schema.js';
import { analyticsOperations } from '../services/analytics.js';
import { commandOperations } from '../services/commands.js';
import { keyOperations } from '../services/keys.js';
import { memoryOperations } from '../services/memory.js';
import { describeInput, type Operation } from '../services/operation.js';
import { queueRepairOperations } from '../services/queue-repair.js';
import { repoOperations } from '../services/repos.js';
import { scmOperations } from '../services/scm.js';
import { settingsOperations } from '../services/settings.js';
import { snapshotOperations } from '../services/snapshot.js';
import { testLabOperations } from '../services/test-lab.js';
import { traceOperations } from '../services/traces.js';
import { webhookOperations } from '../services/webhooks.js';
import { restOperation, type OperatorDeps, type RestInput } from './rest.js';

/**
 * The REST face of the operator services (operator-api 4): which operation answers which method and
 * path, where its input comes from, the body size limit, the status of a success and the wording of an
 * input error. Every rule is in the operation (`src/services/`).
 */
const API = '/operator/api';
const query = { from: 'query' } as const;
const params = { from: 'params' } as const;
const body = (limit: number) => ({ from: 'body', limit }) as const;
const paramsAndBody = (limit: number) => ({ from: 'params+body', limit }) as const;

/** Command creation answers 202 for a new command, 200 for an existing id. */
const created = (out: { created: boolean }) => (out.created ? 202 : 200);

/** Queue repair (operator-api 4.4). */
export function registerQueueRepairRoutes(router: Router, deps: OperatorDeps): void {
  const ops = queueRepairOperations;
  restOperation(router, 'POST', `${API}/queue/requeue-dead`, ops.requeueDead, deps, body(64 * 1024));
  restOperation(router, 'POST', `${API}/queue/release-lease`, ops.releaseLease, deps, body(64 * 1024));
}

/**
 * Every operator operation on its REST path (the reports and the OpenAPI document have their own routes).
 * The order is the OpenAPI document's.
 */
export function registerOperatorRoutes(router: Router, deps: OperatorDeps): void {
  const add: AddRoute = (method, path, op, source) =>
    restOperation(router, method, API + path, op, deps, source);
  registerQueueRepairRoutes(router, deps);

  // Key management (operator-api 4.6, 5.2); creation answers 201.
  const keys = keyOperations;
  add('POST', '/keys', keys.create, { ...body(64 * 1024), status: () => 201 });
  add('GET', '/keys', keys.list, query);
  add('POST', '/keys/:id/revoke', keys.revoke, params);

  // Command creation, update and reads (operator-api 2.3, 3, 4.1, 4.3).
  const commands = commandOperations;
  const create = { ...body(64 * 1024), status: created };
  add('POST', '/commands/requeue', commands.requeue, create);
  add('POST', '/commands/retry-publish', commands.retryPublish, create);
  add('POST', '/commands/replay-webhook', commands.replayWebhook, create);
  add('PATCH', '/commands/:id', commands.patch, paramsAndBody(128 * 1024));
  add('GET', '/commands', commands.list, query);
  add('GET', '/commands/:id', commands.get, params);

  // Read routes of operator-api 4.1 (repositories, webhook history, analytics, traces) and repo config.
  add('GET', '/repos', repoOperations.list, query);
  add('PATCH', '/repos/:repo', repoOperations.configure, {
    ...paramsAndBody(64 * 1024),
    describe: (error) =>
      error.issues[0]?.path[0] === 'repo'
        ? 'Invalid repository: use one URL-encoded owner%2Fname segment'
        : describeInput(error, 'field', 'body'),
  });
  add('GET', '/webhooks', webhookOperations.list, query);
  add('GET', '/webhooks/:deliveryId', webhookOperations.get, params);
  add('GET', '/analytics', analyticsOperations.analytics, query);
  add('GET', '/traces', traceOperations.list, query);
  add('GET', '/traces/:traceId', traceOperations.get, params);

  // The snapshot (operator-api 2.4) and the PR detail (2.5).
  add('GET', '/snapshot', snapshotOperations.snapshot, query);
  add('GET', '/pr', snapshotOperations.pullRequest, query);

  registerMemoryRoutes(add);

  // The workspace review policy (operator-api 2.9, 3 "Policy revision", 4.6, 7) and its usage report.
  const settings = settingsOperations;
  add('GET', '/settings', settings.get, query);
  add('PATCH', '/settings', settings.patch, {
    ...body(POLICY_MAX_BODY_BYTES),
    describe: (error) => {
      const issue = error.issues[0];
      const field =
        issue?.code === 'unrecognized_keys' ? issue.keys[0] : (issue?.path.join('.') ?? 'body') || 'body';
      return `Unknown or invalid field: ${field}`;
    },
  });
  add('GET', '/settings/audit', settings.audit, query);
  add('GET', '/settings/usage', settings.usage, query);
}

type AddRoute = <S extends z.ZodType, O>(
  method: string,
  path: string,
  op: Operation<S, O>,
  source: RestInput & { status?: (output: O) => number },
) => void;

/** The memory, SCM and Test Lab families, on the paths `add` mounts under the operator API. */
function registerMemoryRoutes(add: AddRoute): void {
  // The memory, SCM and Test Lab families (operator-api 4.6, NAMES.md "Memory"). A knowledge document's
  // body is up to 20,000 characters, so its PUT takes up to 256 KiB of JSON (escapes included).
  const memory = memoryOperations;
  const createdStatus = { status: () => 201 };
  add('GET', '/memory/integrations', memory.integrations, query);
  add('POST', '/memory/integrations/preview', memory.previewIntegration, body(64 * 1024));
  add('GET', '/memory/contexts', memory.contexts, query);
  add('POST', '/memory/contexts', memory.createContext, { ...body(64 * 1024), ...createdStatus });
  add('GET', '/memory/contexts/:id', memory.context, query);
  add('PATCH', '/memory/contexts/:id', memory.updateContext, paramsAndBody(64 * 1024));
  add('DELETE', '/memory/contexts/:id', memory.deleteContext, paramsAndBody(1024));
  add('GET', '/memory/clusters', memory.clusters, query);
  add('POST', '/memory/clusters', memory.createCluster, { ...body(64 * 1024), ...createdStatus });
  add('PATCH', '/memory/clusters/:id', memory.updateCluster, paramsAndBody(64 * 1024));
  add('DELETE', '/memory/clusters/:id', memory.deleteCluster, paramsAndBody(1024));
  add('GET', '/memory/knowledge', memory.knowledge, query);
  add('GET', '/memory/knowledge/document', memory.knowledgeDocument, query);
  add('PUT', '/memory/knowledge/document', memory.putKnowledgeDocument, body(256 * 1024));
  add('GET', '/scm', scmOperations.view, query);
  add('POST', '/scm/sync', scmOperations.sync, { ...body(1024), status: () => 202 });
  add('GET', '/test-lab', testLabOperations.list, query);
  add('GET', '/test-lab/:id', testLabOperations.get, params);
  add('DELETE', '/scm/alerts/:id', scmOperations.dismissAlert, {
    ...paramsAndBody(1024),
    describe: describeBody,
  });
}

/**
 * The message of `readJsonBody` for a body schema (`Invalid field <path>: <message>`, `body` for the body
 * itself), for an input `{<param>, body}`.
 */
function describeBody(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request body';
  const path = issue.path[0] === 'body' ? issue.path.slice(1) : issue.path;
  return `Invalid field ${path.length > 0 ? path.join('.') : 'body'}: ${issue.message}`;
}
