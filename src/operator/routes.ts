import type { z } from 'zod';
import { describeIssue } from '../http/json.js';
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

/** One operator route: the operation that answers `method` on `path` (under `/operator/api`), and how. */
export type OperatorRoute = {
  method: string;
  path: string;
  op: Operation;
  source: RestInput & { status?: (output: unknown) => number };
};

const route = <S extends z.ZodType, O>(
  method: string,
  path: string,
  op: Operation<S, O>,
  source: RestInput & { status?: (output: O) => number },
) => ({ method, path, op, source }) as unknown as OperatorRoute;

const keys = keyOperations;
const commands = commandOperations;
const commandCreation = { ...body(64 * 1024), status: created };
const memory = memoryOperations;
const createdStatus = { status: () => 201 };
const settings = settingsOperations;

/**
 * Every operator operation on its REST path (the reports and the OpenAPI document have their own routes),
 * in the OpenAPI document's order. The dashboard proxy picks its backend token by it (src/dashboard/proxy.ts).
 */
export const OPERATOR_ROUTES: readonly OperatorRoute[] = [
  // Queue repair (operator-api 4.4).
  route('POST', '/queue/requeue-dead', queueRepairOperations.requeueDead, body(64 * 1024)),
  route('POST', '/queue/release-lease', queueRepairOperations.releaseLease, body(64 * 1024)),
  // Key management (operator-api 4.6, 5.2); creation answers 201.
  route('POST', '/keys', keys.create, { ...body(64 * 1024), status: () => 201 }),
  route('GET', '/keys', keys.list, query),
  route('POST', '/keys/:id/revoke', keys.revoke, params),
  // Command creation, update and reads (operator-api 2.3, 3, 4.1, 4.3).
  route('POST', '/commands/requeue', commands.requeue, commandCreation),
  route('POST', '/commands/retry-publish', commands.retryPublish, commandCreation),
  route('POST', '/commands/replay-webhook', commands.replayWebhook, commandCreation),
  route('PATCH', '/commands/:id', commands.patch, paramsAndBody(128 * 1024)),
  route('GET', '/commands', commands.list, query),
  route('GET', '/commands/:id', commands.get, params),
  // Read routes of operator-api 4.1 (repositories, webhook history, analytics, traces) and repo config.
  route('GET', '/repos', repoOperations.list, query),
  route('PATCH', '/repos/:repo', repoOperations.configure, {
    ...paramsAndBody(64 * 1024),
    describe: (error) =>
      error.issues[0]?.path[0] === 'repo'
        ? 'Invalid repository: use one URL-encoded owner%2Fname segment'
        : describeInput(error, 'field', 'body'),
  }),
  route('GET', '/webhooks', webhookOperations.list, query),
  route('GET', '/webhooks/:deliveryId', webhookOperations.get, params),
  route('GET', '/analytics', analyticsOperations.analytics, query),
  route('GET', '/traces', traceOperations.list, query),
  route('GET', '/traces/:traceId', traceOperations.get, params),
  // The snapshot (operator-api 2.4) and the PR detail (2.5).
  route('GET', '/snapshot', snapshotOperations.snapshot, query),
  route('GET', '/pr', snapshotOperations.pullRequest, query),
  // The memory, SCM and Test Lab families (operator-api 4.6, NAMES.md "Memory"). A knowledge document's
  // body is up to 20,000 characters, so its PUT takes up to 256 KiB of JSON (escapes included).
  route('GET', '/memory/integrations', memory.integrations, query),
  route('POST', '/memory/integrations/preview', memory.previewIntegration, body(64 * 1024)),
  route('GET', '/memory/contexts', memory.contexts, query),
  route('POST', '/memory/contexts', memory.createContext, { ...body(64 * 1024), ...createdStatus }),
  route('GET', '/memory/contexts/:id', memory.context, query),
  route('PATCH', '/memory/contexts/:id', memory.updateContext, paramsAndBody(64 * 1024)),
  route('DELETE', '/memory/contexts/:id', memory.deleteContext, paramsAndBody(1024)),
  route('GET', '/memory/clusters', memory.clusters, query),
  route('POST', '/memory/clusters', memory.createCluster, { ...body(64 * 1024), ...createdStatus }),
  route('PATCH', '/memory/clusters/:id', memory.updateCluster, paramsAndBody(64 * 1024)),
  route('DELETE', '/memory/clusters/:id', memory.deleteCluster, paramsAndBody(1024)),
  route('GET', '/memory/knowledge', memory.knowledge, query),
  route('GET', '/memory/knowledge/document', memory.knowledgeDocument, query),
  route('PUT', '/memory/knowledge/document', memory.putKnowledgeDocument, body(256 * 1024)),
  route('GET', '/scm', scmOperations.view, query),
  route('POST', '/scm/sync', scmOperations.sync, { ...body(1024), status: () => 202 }),
  route('GET', '/test-lab', testLabOperations.list, query),
  route('GET', '/test-lab/:id', testLabOperations.get, params),
  route('DELETE', '/scm/alerts/:id', scmOperations.dismissAlert, {
    ...paramsAndBody(1024),
    describe: (error) => describeIssue(error, 'body'),
  }),
  // The workspace review policy (operator-api 2.9, 3 "Policy revision", 4.6, 7) and its usage report.
  route('GET', '/settings', settings.get, query),
  route('PATCH', '/settings', settings.patch, {
    ...body(POLICY_MAX_BODY_BYTES),
    describe: (error) => {
      const issue = error.issues[0];
      const field =
        issue?.code === 'unrecognized_keys' ? issue.keys[0] : (issue?.path.join('.') ?? 'body') || 'body';
      return `Unknown or invalid field: ${field}`;
    },
  }),
  route('GET', '/settings/audit', settings.audit, query),
  route('GET', '/settings/usage', settings.usage, query),
];

/** Every operator operation on its REST path (`OPERATOR_ROUTES`). */
export function registerOperatorRoutes(router: Router, deps: OperatorDeps): void {
  for (const r of OPERATOR_ROUTES) restOperation(router, r.method, API + r.path, r.op, deps, r.source);
}
