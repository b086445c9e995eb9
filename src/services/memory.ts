import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import { defineOperation, notFound, OperatorError } from './operation.js';

/** Memory reads: the read token, or an API key with `read` (operator-api 5.2 rule 2). */
const READ_OR_KEY: AccessRule = { classes: ['operatorRead'], scope: 'read' };
/** Memory mutations: the admin token, or an API key with `memory:write` (rule 3). */
const MEMORY_WRITE: AccessRule = { classes: ['operatorAdmin'], scope: 'memory:write' };
/** The integration preview: the admin token only; a key can never reach it (rule 3). */
const ADMIN: AccessRule = { classes: ['operatorAdmin'] };

/** A context or cluster id, as the path gives it (nothing is looked up by it). */
const id = z.string();

/**
 * Memory is not recorded by this version of Verdict: a mutation is refused with 501 `not_implemented`
 * after its caller is authenticated (nothing is stored, nothing is pretended).
 */
function notBuilt(what: string): never {
  throw new OperatorError(501, 'not_implemented', `${what} is not available in this version of Verdict`);
}

/** A memory mutation: authenticated by `rule`, then refused. Its input is not read. */
function refusedMutation(rule: AccessRule, what: string, input: z.ZodType = z.object({})) {
  return defineOperation({
    rule,
    type: 'mutation',
    input,
    async run(): Promise<never> {
      notBuilt(what);
    },
  });
}

/** The memory view of the snapshot (operator-api 2.4). */
export function memorySnapshot() {
  return { items: [] as never[], note: 'memory contexts are not recorded by this version' };
}

/**
 * The memory family (operator-api 4.6): reads answer the empty, well-formed lists of a workspace without
 * memory (one context is 404), mutations are refused with 501 after authentication.
 */
export const memoryOperations = {
  integrations: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run() {
      return { integrations: [] as never[] };
    },
  }),
  previewIntegration: refusedMutation(ADMIN, 'Memory integration preview'),

  contexts: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run() {
      return { contexts: [] as never[] };
    },
  }),
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

  clusters: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run() {
      return { clusters: [] as never[] };
    },
  }),
  createCluster: refusedMutation(MEMORY_WRITE, 'Memory'),
  updateCluster: refusedMutation(MEMORY_WRITE, 'Memory', z.object({ id })),
  deleteCluster: refusedMutation(MEMORY_WRITE, 'Memory', z.object({ id })),

  knowledge: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run() {
      return { knowledge: [] as never[] };
    },
  }),
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
