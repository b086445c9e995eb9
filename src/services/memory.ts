import { z } from 'zod';
import type { AccessRule } from '../http/auth.js';
import { plainText } from '../http/text.js';
import { KNOWLEDGE_ROOT } from '../memory/match.js';
import { globProblem } from '../policy/filters.schema.js';
import { GatherError, getPullRequest, listChangedFiles } from '../review/gather.js';
import { readInstructions } from '../review/instructions.js';
import { knowledgePathOf, selectReviewMemory } from '../review/memory.js';
import type { Store } from '../store/index.js';
import { CLUSTER_ACTIONS, type MemoryWrite } from '../store/memory.js';
import { splitFullName } from '../store/repositories.js';
import {
  ADMIN,
  defineOperation,
  notFound,
  OperatorError,
  pageParams,
  positiveIntParam,
  READ_OR_KEY,
  REPO_PATTERN,
  type OperationContext,
} from './operation.js';

/**
 * The memory family (operator-api 4.6, NAMES.md "Memory"): contexts, clusters, knowledge documents and
 * integrations, and the preview of what a review of a pull request would be given. Writes need the admin
 * token or an API key with `memory:write` (the preview: the admin token only); reads the read token or a
 * key with `read`. Every write names the revision it read (409 `revision_conflict` when stale) and is
 * audited (`GET /settings/audit`). docs/memory.md is the operator's description.
 */

/** Memory mutations: the admin token, or an API key with `memory:write` (operator-api 5.2 rule 3). */
const MEMORY_WRITE: AccessRule = { classes: ['operatorAdmin'], scope: 'memory:write' };

/** Text limits of NAMES.md "Memory". */
export const MEMORY_LIMITS = {
  title: 200,
  contextBody: 4000,
  clusterBody: 4000,
  knowledgeBody: 20_000,
  /** Globs of one context (operator-api 2.10's 50 values of a condition). */
  paths: 50,
  glob: 500,
  knowledgePath: 500,
  category: 64,
  exemplarPath: 1000,
} as const;

// --- input schemas ---

/** `owner/name` with GitHub's characters; the name is not `.` or `..`. */
const repoName = z
  .string({ error: 'must be a repository as owner/name' })
  .regex(REPO_PATTERN, 'must be a repository as owner/name')
  .refine((s) => !/\/\.{1,2}$/.test(s), 'must be a repository as owner/name');

/** 1 to `max` characters, not only whitespace, without control characters (operator-api 2.10 rule 4). */
const text = (max: number) =>
  plainText(max, { min: 1, whitespace: true }).refine((s) => s.trim() !== '', 'must not be blank');

/** A glob of operator-api 2.10 (rule 3; 1 to 500 characters). */
const glob = plainText(MEMORY_LIMITS.glob, { min: 1 }).superRefine((value, ctx) => {
  const problem = globProblem(value);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

const paths = z
  .array(glob, { error: 'must be a list of globs' })
  .max(MEMORY_LIMITS.paths, `at most ${MEMORY_LIMITS.paths} globs`);

/**
 * A knowledge document's path: `/` (the whole repository), or a file or directory of the repository
 * without a leading or trailing `/`, empty, `.` or `..` segments, at most 500 characters.
 */
const knowledgePath = plainText(MEMORY_LIMITS.knowledgePath, { min: 1 }).refine(
  (p) => p === KNOWLEDGE_ROOT || p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'),
  'must be / or a repository path without empty, . or .. segments',
);

const revision = z.number({ error: 'must be an integer' }).int().min(0).max(Number.MAX_SAFE_INTEGER);
const revisionBody = z.strictObject({ revision });
const id = z.string().min(1).max(200);

const contextFields = {
  repo: repoName.nullable().optional(),
  paths: paths.optional(),
  title: text(MEMORY_LIMITS.title),
  body: text(MEMORY_LIMITS.contextBody),
  enabled: z.boolean({ error: 'must be a boolean' }).optional(),
};

/** A PATCH body: its revision and at least one field to change. */
function patchBody<S extends z.ZodRawShape>(shape: S) {
  return z
    .strictObject({ revision, ...shape })
    .refine((b) => Object.keys(b).some((k) => k !== 'revision'), 'give at least one field to change');
}

// --- answers ---

const iso = (ms: number) => new Date(ms).toISOString();

/** A memory record as answered: its times (`K`) as ISO text. */
type Answer<T, K extends keyof T> = Omit<T, K> & Record<K, string>;
const recordAnswer = <T extends { createdAt: number; updatedAt: number }>(
  c: T,
): Answer<T, 'createdAt' | 'updatedAt'> => ({
  ...c,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
});
const documentAnswer = <T extends { updatedAt: number }>(d: T): Answer<T, 'updatedAt'> => ({
  ...d,
  updatedAt: iso(d.updatedAt),
});

/** The value of a write, or its refusal: 404 `not_found`, 409 `revision_conflict` with the current revision. */
function written<T>(result: MemoryWrite<T>, what: string): T {
  if (result.ok) return result.value;
  if (result.code === 'not_found') throw notFound(`No such ${what}`);
  throw new OperatorError(
    409,
    'revision_conflict',
    `The ${what} has changed: it is at revision ${result.revision}`,
    { revision: result.revision },
  );
}

// --- integrations and the preview ---

export type MemoryIntegration = { id: string; name: string; enabled: boolean; description: string };

/**
 * What a review is given besides the diff. The two that read GitHub are enabled when this deployment has
 * the GitHub App credentials; review feedback is always recorded.
 */
function integrations(github: boolean): MemoryIntegration[] {
  return [
    {
      id: 'linked-issues',
      name: 'Linked issues',
      enabled: github,
      description:
        'The title and body of the issues of the same repository a pull request closes or references (#N, closes #N, owner/name#N, issue links), read from GitHub.',
    },
    {
      id: 'instruction-files',
      name: 'Instruction files',
      enabled: github,
      description:
        "The repository's instruction files (AGENTS.md, CLAUDE.md, REVIEW.md, .cursorrules, .github/copilot-instructions.md, .github/instructions/*.instructions.md) that apply to a changed path, read from the base branch.",
    },
    {
      id: 'review-feedback',
      name: 'Review feedback',
      enabled: true,
      description:
        "Reactions, replies (@verdict ignore, @verdict learn) and resolved threads on Verdict's line comments, folded into clusters whose findings are withheld once reviewers dismissed them.",
    },
  ];
}

/** A failed GitHub read of the preview: 404 for a pull request GitHub does not have, else 502. */
function githubRefusal(error: unknown, repo: string, number: number): OperatorError {
  if (error instanceof OperatorError) return error;
  if (error instanceof GatherError && error.status === 404) {
    return notFound(`No pull request ${repo}#${number} on GitHub`);
  }
  const message = (error as Error)?.message ?? String(error);
  return new OperatorError(502, 'github_unavailable', `GitHub could not be read: ${message}`);
}

/**
 * What a review of `repo#number` would be given, without calling a model: the pull request and its
 * changed files read from GitHub as the review's gather stage reads them, the instruction files that
 * apply, the memory the review's own selection gives (`selectReviewMemory`: the enabled contexts and
 * knowledge documents that match, in order and budget, and the linked issues read from GitHub), and the
 * clusters of the repository whose findings are withheld. `memory` says what the selection left out.
 */
export async function previewMemory(ctx: OperationContext, repo: string, number: number) {
  if (!ctx.github) {
    throw new OperatorError(
      503,
      'app_credentials_missing',
      'the preview reads the pull request from GitHub: it needs the GitHub App credentials (APP_ID and PRIVATE_KEY)',
    );
  }
  const { owner, name } = splitFullName(repo);
  let gh;
  let pr;
  let files;
  let instructions;
  try {
    gh = await ctx.github(repo);
    pr = await getPullRequest(gh, owner, name, number);
    files = await listChangedFiles(gh, owner, name, number, pr.changedFiles);
    instructions = await readInstructions(
      gh,
      owner,
      name,
      pr.baseRef,
      files.map((f) => f.filename),
    );
  } catch (error) {
    throw githubRefusal(error, repo, number);
  }
  const changed = files.map((f) => f.filename);
  const target = { repo, owner, name, number, body: pr.body, paths: changed };
  const [memory, clusters] = await Promise.all([
    selectReviewMemory({ store: ctx.store, gh }, target),
    ctx.store.memory.suppressingClusters(repo),
  ]);
  const given = (kind: 'context' | 'knowledge') => memory.items.filter((i) => i.kind === kind);
  return {
    preview: {
      contexts: given('context').map((i) => i.id),
      knowledge: given('knowledge').map((i) => knowledgePathOf(i.id)),
      linkedIssues: memory.issues.map((i) => i.number),
      instructionFiles: instructions.files.map((f) => f.path),
      suppressedClusters: clusters.map((c) => c.id),
    },
    memory: { leftOut: memory.leftOut, skippedIssues: memory.skippedIssues },
    pullRequest: {
      repo,
      number,
      title: pr.title,
      headSha: pr.headSha,
      baseRef: pr.baseRef,
      changedFiles: changed.length,
    },
    notes: instructions.notes,
  };
}

// --- the snapshot's memory view ---

/** Most records of each kind the snapshot's `memory` view lists (newest first), beside their totals. */
export const MEMORY_SNAPSHOT_ITEMS = 100;

/** The memory view of the snapshot (operator-api 2.4): contexts, clusters and knowledge documents. */
export async function memorySnapshot(store: Store) {
  const limit = MEMORY_SNAPSHOT_ITEMS;
  const [contexts, clusters, documents, totals] = await Promise.all([
    store.memory.listContexts({ limit }),
    store.memory.listClusters({ limit }),
    store.memory.listKnowledge({ limit }),
    store.memory.counts(),
  ]);
  return {
    contexts: contexts.map(recordAnswer),
    clusters: clusters.map(recordAnswer),
    documents: documents.map(documentAnswer),
    totals,
  };
}

// --- the operations ---

export const memoryOperations = {
  /** `GET /memory/integrations`. */
  integrations: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({}),
    async run(ctx) {
      return { integrations: integrations(Boolean(ctx.github)) };
    },
  }),

  /** `POST /memory/integrations/preview` `{repo, number}`: admin token only. */
  previewIntegration: defineOperation({
    rule: ADMIN,
    type: 'mutation',
    input: z.strictObject({
      repo: repoName,
      number: positiveIntParam,
    }),
    run: (ctx, { repo, number }) => previewMemory(ctx, repo, number),
  }),

  /** `GET /memory/contexts?repo=&q=&limit=&offset=`: newest first. */
  contexts: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({
      repo: repoName.optional(),
      q: plainText(300).optional(),
      ...pageParams,
    }),
    async run(ctx, { repo, q, limit, offset }) {
      const contexts = await ctx.store.memory.listContexts({
        repo,
        q: q?.trim() || undefined,
        limit,
        offset,
      });
      return { contexts: contexts.map(recordAnswer) };
    },
  }),

  /** `GET /memory/contexts/:id`. */
  context: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ id }),
    async run(ctx, { id }) {
      const context = await ctx.store.memory.getContext(id);
      if (!context) throw notFound('No such memory context');
      return { context: recordAnswer(context) };
    },
  }),

  /** `POST /memory/contexts` `{repo?, paths?, title, body, enabled?}` (201). */
  createContext: defineOperation({
    rule: MEMORY_WRITE,
    type: 'mutation',
    input: z.strictObject(contextFields),
    async run(ctx, body) {
      const context = await ctx.store.memory.createContext({
        repo: body.repo ?? null,
        paths: body.paths ?? [],
        title: body.title,
        body: body.body,
        enabled: body.enabled ?? true,
        source: 'operator',
        createdBy: ctx.principal.actor,
      });
      return { context: recordAnswer(context) };
    },
  }),

  /** `PATCH /memory/contexts/:id` `{revision, ...fields}`. */
  updateContext: defineOperation({
    rule: MEMORY_WRITE,
    type: 'mutation',
    input: z.object({
      id,
      body: patchBody(z.object(contextFields).partial().shape),
    }),
    async run(ctx, { id, body: { revision, ...patch } }) {
      const result = await ctx.store.memory.updateContext(id, revision, patch, ctx.principal.actor);
      return { context: recordAnswer(written(result, 'memory context')) };
    },
  }),

  /** `DELETE /memory/contexts/:id` `{revision}`. */
  deleteContext: defineOperation({
    rule: MEMORY_WRITE,
    type: 'mutation',
    input: z.object({ id, body: revisionBody }),
    async run(ctx, { id, body }) {
      written(await ctx.store.memory.deleteContext(id, body.revision, ctx.principal.actor), 'memory context');
      return { deleted: true as const };
    },
  }),

  /** `GET /memory/clusters?repo=&limit=&offset=`: the most recently changed first. */
  clusters: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ repo: repoName.optional(), ...pageParams }),
    async run(ctx, filter) {
      return { clusters: (await ctx.store.memory.listClusters(filter)).map(recordAnswer) };
    },
  }),

  /** `POST /memory/clusters` `{repo, label, exemplar: {title, body, category?, path?}, action?}` (201). */
  createCluster: defineOperation({
    rule: MEMORY_WRITE,
    type: 'mutation',
    input: z.strictObject({
      repo: repoName,
      label: text(MEMORY_LIMITS.title),
      exemplar: z.strictObject({
        title: text(MEMORY_LIMITS.title),
        body: text(MEMORY_LIMITS.clusterBody),
        category: plainText(MEMORY_LIMITS.category, { min: 1 }).nullable().optional(),
        path: plainText(MEMORY_LIMITS.exemplarPath, { min: 1 }).nullable().optional(),
      }),
      action: z.enum(CLUSTER_ACTIONS).optional(),
    }),
    async run(ctx, body) {
      const cluster = await ctx.store.memory.createCluster({ ...body, actor: ctx.principal.actor });
      return { cluster: recordAnswer(cluster) };
    },
  }),

  /** `PATCH /memory/clusters/:id` `{revision, label?, action?}`. */
  updateCluster: defineOperation({
    rule: MEMORY_WRITE,
    type: 'mutation',
    input: z.object({
      id,
      body: patchBody({
        label: text(MEMORY_LIMITS.title).optional(),
        action: z.enum(CLUSTER_ACTIONS).optional(),
      }),
    }),
    async run(ctx, { id, body: { revision, ...patch } }) {
      const result = await ctx.store.memory.updateCluster(id, revision, patch, ctx.principal.actor);
      return { cluster: recordAnswer(written(result, 'memory cluster')) };
    },
  }),

  /** `DELETE /memory/clusters/:id` `{revision}`. */
  deleteCluster: defineOperation({
    rule: MEMORY_WRITE,
    type: 'mutation',
    input: z.object({ id, body: revisionBody }),
    async run(ctx, { id, body }) {
      written(await ctx.store.memory.deleteCluster(id, body.revision, ctx.principal.actor), 'memory cluster');
      return { deleted: true as const };
    },
  }),

  /** `GET /memory/knowledge?repo=&limit=&offset=`: by repository and path, without bodies. */
  knowledge: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ repo: repoName.optional(), ...pageParams }),
    async run(ctx, filter) {
      return { documents: (await ctx.store.memory.listKnowledge(filter)).map(documentAnswer) };
    },
  }),

  /** `GET /memory/knowledge/document?repo=&path=`: the document, or null when there is none. */
  knowledgeDocument: defineOperation({
    rule: READ_OR_KEY,
    type: 'query',
    input: z.object({ repo: repoName, path: knowledgePath }),
    async run(ctx, { repo, path }) {
      const document = await ctx.store.memory.getKnowledge(repo, path);
      return { document: document ? documentAnswer(document) : null };
    },
  }),

  /**
   * `PUT /memory/knowledge/document` `{repo, path, title?, body, revision?}`: creates the document, or
   * replaces it when `revision` is its current one (an existing document without `revision` is 409).
   */
  putKnowledgeDocument: defineOperation({
    rule: MEMORY_WRITE,
    type: 'mutation',
    input: z.strictObject({
      repo: repoName,
      path: knowledgePath,
      title: text(MEMORY_LIMITS.title).optional(),
      body: plainText(MEMORY_LIMITS.knowledgeBody, { whitespace: true }),
      revision: revision.optional(),
    }),
    async run(ctx, input) {
      const result = await ctx.store.memory.putKnowledge(input, ctx.principal.actor);
      if (!result.ok && result.code === 'revision_conflict' && input.revision === undefined) {
        throw new OperatorError(
          409,
          'revision_conflict',
          `A knowledge document exists at ${input.repo} ${input.path}: send its revision (${result.revision}) to replace it`,
          { revision: result.revision },
        );
      }
      return { document: documentAnswer(written(result, 'knowledge document')) };
    },
  }),
};
