import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import { ADMIN, defineOperation, notFound, OperatorError, READ_OR_KEY } from './operation.js';

/** Memory mutations: the admin token, or an API key with `memory:write` (operator-api 5.2 rule 3). */
const MEMORY_WRITE: AccessRule = { classes: ['operatorAdmin'], scope: 'memory:write' };

/** A context or cluster id, as the path gives it (nothing is looked up by it). */
const id = z.string();

/**
 * A memory mutation: memory is not recorded by this version of Verdict, so once `rule` has authenticated
 * the caller it is refused with 501 `not_implemented` (nothing is stored, nothing is pretended). Its input
 * is not read.
 */
function refusedMutation(rule: AccessRule, what: string, input: z.ZodType = z.object({})) {
  return defineOperation({
    rule,
    type: 'mutation',
    input,
    async run(): Promise<never> {
      throw new OperatorError(501, 'not_implemented', `${what} is not available in this version of Verdict`);
    },
  });
}

/** The memory view of the snapshot (operator-api 2.4). */
export function memorySnapshot() {
  return { items: [] as never[], note: 'memory contexts are not recorded by this version' };
}

/** A memory list: always the empty list `{[key]: []}`, for the read token or an API key with `read`. */
function emptyList<K extends string>(key: K) {
  return defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run() {
      return { [key]: [] } as Record<K, never[]>;
    },
  });
}

/**
 * The memory family (operator-api 4.6): reads answer the empty, well-formed lists of a workspace without
 * memory (one context is 404), mutations are refused with 501 after authentication.
 */
export const memoryOperations = {
  integrations: emptyList('integrations'),
  previewIntegration: refusedMutation(ADMIN, 'Memory integration preview'),

  contexts: emptyList('contexts'),
  context: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ id }),
    async run(): Promise<never> {
      throw notFound('Not found');
    },
  }),
  createContext: refusedMutation(MEMORY_WRITE, 'Memory'),
  updateContext: refusedMutation(MEMORY_WRITE, 'Memory', z.object({ id })),
  deleteContext: refusedMutation(MEMORY_WRITE, 'Memory', z.object({ id })),

  clusters: emptyList('clusters'),
  createCluster: refusedMutation(MEMORY_WRITE, 'Memory'),
  updateCluster: refusedMutation(MEMORY_WRITE, 'Memory', z.object({ id })),
  deleteCluster: refusedMutation(MEMORY_WRITE, 'Memory', z.object({ id })),

  knowledge: emptyList('knowledge'),
  /** One knowledge document by `repo` and `path`: none is recorded, so `document` is null. */
  knowledgeDocument: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ repo: z.string().optional(), path: z.string().optional() }),
    async run(_ctx, { repo, path }) {
      return { document: null, repo: repo ?? null, path: path ?? null };
    },
  }),
  putKnowledgeDocument: refusedMutation(MEMORY_WRITE, 'Memory'),
};
