import type { z } from 'zod';
import type { Router } from '../http/router.js';
import { POLICY_MAX_BODY_BYTES } from '../policy/policy.schema.js';
import { analyticsOperations } from '../services/analytics.js';
import { commandOperations } from '../services/commands.js';
import { keyOperations } from '../services/keys.js';
import { memoryOperations } from '../services/memory.js';
import { describeInput } from '../services/operation.js';
import { queueRepairOperations } from '../services/queue-repair.js';
import { repoOperations } from '../services/repos.js';
import { scmOperations } from '../services/scm.js';
import { settingsOperations } from '../services/settings.js';
import { snapshotOperations } from '../services/snapshot.js';
import { testLabOperations } from '../services/test-lab.js';
import { traceOperations } from '../services/traces.js';
import { webhookOperations } from '../services/webhooks.js';
import { restOperation, type OperatorDeps } from './rest.js';

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

/** Key management (operator-api 4.6, 5.2); creation answers 201. */
export function registerKeyRoutes(router: Router, deps: OperatorDeps): void {
  const ops = keyOperations;
  restOperation(router, 'POST', `${API}/keys`, ops.create, deps, { ...body(64 * 1024), status: () => 201 });
  restOperation(router, 'GET', `${API}/keys`, ops.list, deps, query);
  restOperation(router, 'POST', `${API}/keys/:id/revoke`, ops.revoke, deps, params);
}

/** Command creation, update and reads (operator-api 2.3, 3, 4.1, 4.3). */
export function registerCommandRoutes(router: Router, deps: OperatorDeps): void {
  const ops = commandOperations;
  const create = { ...body(64 * 1024), status: created };
  restOperation(router, 'POST', `${API}/commands/requeue`, ops.requeue, deps, create);
  restOperation(router, 'POST', `${API}/commands/retry-publish`, ops.retryPublish, deps, create);
  restOperation(router, 'POST', `${API}/commands/replay-webhook`, ops.replayWebhook, deps, create);
  restOperation(router, 'PATCH', `${API}/commands/:id`, ops.patch, deps, paramsAndBody(128 * 1024));
  restOperation(router, 'GET', `${API}/commands`, ops.list, deps, query);
  restOperation(router, 'GET', `${API}/commands/:id`, ops.get, deps, params);
}

/** Read routes of operator-api 4.1 (repositories, webhook history, analytics, traces) and repo config. */
export function registerReadRoutes(router: Router, deps: OperatorDeps): void {
  restOperation(router, 'GET', `${API}/repos`, repoOperations.list, deps, query);
  restOperation(router, 'PATCH', `${API}/repos/:repo`, repoOperations.configure, deps, {
    ...paramsAndBody(64 * 1024),
    describe: (error) =>
      error.issues[0]?.path[0] === 'repo'
        ? 'Invalid repository: use one URL-encoded owner%2Fname segment'
        : describeInput(error, 'field', 'body'),
  });
  restOperation(router, 'GET', `${API}/webhooks`, webhookOperations.list, deps, query);
  restOperation(router, 'GET', `${API}/webhooks/:deliveryId`, webhookOperations.get, deps, params);
  restOperation(router, 'GET', `${API}/analytics`, analyticsOperations.analytics, deps, query);
  restOperation(router, 'GET', `${API}/traces`, traceOperations.list, deps, query);
  restOperation(router, 'GET', `${API}/traces/:traceId`, traceOperations.get, deps, params);
}

/** The snapshot (operator-api 2.4) and the PR detail (2.5). */
export function registerSnapshotRoutes(router: Router, deps: OperatorDeps): void {
  restOperation(router, 'GET', `${API}/snapshot`, snapshotOperations.snapshot, deps, query);
  restOperation(router, 'GET', `${API}/pr`, snapshotOperations.pullRequest, deps, query);
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

/**
 * The memory, SCM and Test Lab families (operator-api 4.6). Memory mutations take no body here: they are
 * refused (501) after authentication, whatever is sent.
 */
export function registerFamilyRoutes(router: Router, deps: OperatorDeps): void {
  const memory = memoryOperations;
  restOperation(router, 'GET', `${API}/memory/integrations`, memory.integrations, deps, query);
  restOperation(router, 'GET', `${API}/memory/contexts`, memory.contexts, deps, query);
  restOperation(router, 'GET', `${API}/memory/contexts/:id`, memory.context, deps, query);
  restOperation(router, 'GET', `${API}/memory/clusters`, memory.clusters, deps, query);
  restOperation(router, 'GET', `${API}/memory/knowledge`, memory.knowledge, deps, query);
  restOperation(router, 'GET', `${API}/memory/knowledge/document`, memory.knowledgeDocument, deps, query);
  restOperation(
    router,
    'POST',
    `${API}/memory/integrations/preview`,
    memory.previewIntegration,
    deps,
    params,
  );
  restOperation(router, 'POST', `${API}/memory/contexts`, memory.createContext, deps, params);
  restOperation(router, 'PATCH', `${API}/memory/contexts/:id`, memory.updateContext, deps, params);
  restOperation(router, 'DELETE', `${API}/memory/contexts/:id`, memory.deleteContext, deps, params);
  restOperation(router, 'POST', `${API}/memory/clusters`, memory.createCluster, deps, params);
  restOperation(router, 'PATCH', `${API}/memory/clusters/:id`, memory.updateCluster, deps, params);
  restOperation(router, 'DELETE', `${API}/memory/clusters/:id`, memory.deleteCluster, deps, params);
  restOperation(router, 'PUT', `${API}/memory/knowledge/document`, memory.putKnowledgeDocument, deps, params);

  restOperation(router, 'GET', `${API}/scm`, scmOperations.view, deps, query);
  restOperation(router, 'POST', `${API}/scm/sync`, scmOperations.sync, deps, {
    ...body(1024),
    status: () => 202,
  });
  restOperation(router, 'GET', `${API}/test-lab`, testLabOperations.list, deps, query);
  restOperation(router, 'GET', `${API}/test-lab/:id`, testLabOperations.get, deps, params);
  restOperation(router, 'DELETE', `${API}/scm/alerts/:id`, scmOperations.dismissAlert, deps, {
    ...paramsAndBody(1024),
    describe: describeBody,
  });
}

/** The workspace review policy (operator-api 2.9, 3 "Policy revision", 4.6, 7) and its usage report. */
export function registerSettingsRoutes(router: Router, deps: OperatorDeps): void {
  const ops = settingsOperations;
  restOperation(router, 'GET', `${API}/settings`, ops.get, deps, query);
  restOperation(router, 'PATCH', `${API}/settings`, ops.patch, deps, {
    ...body(POLICY_MAX_BODY_BYTES),
    describe: (error) => {
      const issue = error.issues[0];
      const field =
        issue?.code === 'unrecognized_keys' ? issue.keys[0] : (issue?.path.join('.') ?? 'body') || 'body';
      return `Unknown or invalid field: ${field}`;
    },
  });
  restOperation(router, 'GET', `${API}/settings/audit`, ops.audit, deps, query);
  restOperation(router, 'GET', `${API}/settings/usage`, ops.usage, deps, query);
}

/** Every operator operation on its REST path (the reports and the OpenAPI document have their own routes). */
export function registerOperatorRoutes(router: Router, deps: OperatorDeps): void {
  registerQueueRepairRoutes(router, deps);
  registerKeyRoutes(router, deps);
  registerCommandRoutes(router, deps);
  registerReadRoutes(router, deps);
  registerSnapshotRoutes(router, deps);
  registerFamilyRoutes(router, deps);
  registerSettingsRoutes(router, deps);
}
