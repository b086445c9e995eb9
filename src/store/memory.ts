import type { Knex } from 'knex';
import type { Clock, IdGenerator } from '../clock.js';
import { clusterSuppresses, contextApplies, knowledgeApplies } from '../memory/match.js';
import { writeAudit } from './audit.js';
import { type ShownWrites } from './db.js';
import {
  mapCluster,
  mapContext,
  mapDocument,
  mapSummary,
  type ClusterAction,
  type KnowledgeDocument,
  type KnowledgeSummary,
  type MemoryCluster,
  type MemoryContext,
  type MemorySource,
  type MemoryWrite,
  type Raw,
} from './memory-records.js';

/**
 * Memory (NAMES.md "Memory"): contexts (rules the reviews follow), clusters (findings that look alike and
 * what reviewers did with them) and knowledge documents (notes on a part of a repository).
 *
 * Every record carries a `revision`, 1 when created and 1 more at each write. A write of an existing
 * record names the revision it read: the UPDATE or DELETE is conditional on it (`WHERE revision = ?`) and
 * its affected-row count says whether it won, so of two writers with the same revision exactly one does.
 * Each write and its audit entry are one transaction: both are stored, or neither.
 *
 * Repositories compare case-insensitively (as GitHub's names do); a record keeps the spelling it was
 * given.
 */

export {
  CLUSTER_ACTIONS,
  type ClusterAction,
  type KnowledgeDocument,
  type KnowledgeSummary,
  type MemoryCluster,
  type MemoryContext,
  type MemoryWrite,
} from './memory-records.js';

/** Most memory contexts one review is given. */
export const MAX_REVIEW_CONTEXTS = 50;
/** Most knowledge documents one review is given. */
export const MAX_REVIEW_KNOWLEDGE = 50;
/** Contexts of a repository (and the workspace) one review considers, the most recently written first. */
export const REVIEW_CANDIDATES = 1000;

/** `%text%` for a case-insensitive LIKE with `\` as the escape character. */
const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const whereRepo = (repo: string) => ['lower(repo) = ?', [repo.toLowerCase()]] as const;

export type NewContext = {
  /** Given by tests and imports; otherwise a new `mem_...` id. */
  id?: string;
  repo: string | null;
  paths: readonly string[];
  title: string;
  body: string;
  enabled?: boolean;
  source?: MemorySource;
  /** Who creates it (its audit entry's actor too). */
  createdBy: string;
};

export type ContextPatch = Partial<Pick<MemoryContext, 'repo' | 'paths' | 'title' | 'body' | 'enabled'>>;

export type NewCluster = {
  id?: string;
  repo: string;
  label: string;
  exemplar: { title: string; body: string; category?: string | null; path?: string | null };
  action?: ClusterAction;
  size?: number;
  actor: string;
};

export type ClusterPatch = Partial<Pick<MemoryCluster, 'label' | 'action'>>;

export type ListFilter = { repo?: string; limit: number; offset?: number };

export class MemoryStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly shown: ShownWrites,
  ) {}

  /** Why a conditional write changed nothing: the `record` is gone, or its revision moved on. */
  private async missed(
    record: Knex.QueryBuilder,
  ): Promise<{ ok: false; code: 'not_found' } | { ok: false; code: 'revision_conflict'; revision: number }> {
    const row = await record.first('revision');
    return row
      ? { ok: false, code: 'revision_conflict', revision: Number(row.revision) }
      : { ok: false, code: 'not_found' };
  }

  // --- contexts ---

  async createContext(input: NewContext): Promise<MemoryContext> {
    const now = this.clock.now();
    const row = {
      id: input.id ?? this.ids('mem'),
      repo: input.repo,
      paths: JSON.stringify([...new Set(input.paths)]),
      title: input.title,
      body: input.body,
      enabled: input.enabled ?? true,
      source: input.source ?? 'operator',
      revision: 1,
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
    };
    return this.shown.writeTransaction(this.knex, async (trx) => {
      await trx('memory_contexts').insert(row);
      await writeAudit(trx, this.clock, input.createdBy, 'memory.context.create', row.id, {
        repo: row.repo,
        source: row.source,
        revision: 1,
      });
      return mapContext(row);
    });
  }

  async getContext(id: string): Promise<MemoryContext | null> {
    const row = await this.knex('memory_contexts').where({ id }).first();
    return row ? mapContext(row) : null;
  }

  /**
   * Newest first. `repo`: that repository's contexts only (the workspace-wide ones have `repo` null);
   * `q`: a case-insensitive substring of the title or body.
   */
  async listContexts(filter: ListFilter & { q?: string }): Promise<MemoryContext[]> {
    let query = this.knex('memory_contexts')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(filter.limit)
      .offset(filter.offset ?? 0);
    if (filter.repo !== undefined) query = query.whereRaw(...whereRepo(filter.repo));
    if (filter.q) {
      const like = likePattern(filter.q);
      query = query.where((w) =>
        w
          .whereRaw(`LOWER(title) LIKE ? ESCAPE '\\'`, [like])
          .orWhereRaw(`LOWER(body) LIKE ? ESCAPE '\\'`, [like]),
      );
    }
    return (await query).map(mapContext);
  }

  async updateContext(
    id: string,
    revision: number,
    patch: ContextPatch,
    actor: string,
  ): Promise<MemoryWrite<MemoryContext>> {
    const changes: Raw = {};
    if (patch.repo !== undefined) changes.repo = patch.repo;
    if (patch.paths !== undefined) changes.paths = JSON.stringify([...new Set(patch.paths)]);
    if (patch.title !== undefined) changes.title = patch.title;
    if (patch.body !== undefined) changes.body = patch.body;
    if (patch.enabled !== undefined) changes.enabled = patch.enabled;
    return this.shown.writeTransaction(this.knex, async (trx) => {
      const n = await trx('memory_contexts')
        .where({ id, revision })
        .update({ ...changes, revision: revision + 1, updated_at: this.clock.now() });
      if (n !== 1) return this.missed(trx('memory_contexts').where({ id }));
      await writeAudit(trx, this.clock, actor, 'memory.context.update', id, {
        fields: Object.keys(patch).sort(),
        fromRevision: revision,
        toRevision: revision + 1,
      });
      return { ok: true, value: mapContext(await trx('memory_contexts').where({ id }).first()) };
    });
  }

  async deleteContext(id: string, revision: number, actor: string): Promise<MemoryWrite<true>> {
    return this.shown.writeTransaction(this.knex, async (trx) => {
      const n = await trx('memory_contexts').where({ id, revision }).del();
      if (n !== 1) return this.missed(trx('memory_contexts').where({ id }));
      await writeAudit(trx, this.clock, actor, 'memory.context.delete', id, { revision });
      return { ok: true, value: true };
    });
  }

  /**
   * The enabled contexts of a review of `repo` changing `paths`: the repository's and the workspace's
   * whose globs match a changed path (or that have none), the most recently written first, at most
   * `limit` (the review orders and budgets them: src/review/memory.ts).
   */
  async forReview(
    repo: string,
    paths: readonly string[],
    limit = MAX_REVIEW_CONTEXTS,
  ): Promise<MemoryContext[]> {
    const rows: Raw[] = await this.knex('memory_contexts')
      .where((q) => q.whereRaw(...whereRepo(repo)).orWhereNull('repo'))
      .where('enabled', true)
      .orderBy([
        { column: 'updated_at', order: 'desc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(REVIEW_CANDIDATES);
    const out: MemoryContext[] = [];
    for (const row of rows) {
      const context = mapContext(row);
      if (!contextApplies(context.paths, paths)) continue;
      out.push(context);
      if (out.length === limit) break;
    }
    return out;
  }

  // --- clusters ---

  async createCluster(input: NewCluster): Promise<MemoryCluster> {
    const now = this.clock.now();
    const row = {
      id: input.id ?? this.ids('clu'),
      repo: input.repo,
      label: input.label,
      action: input.action ?? 'none',
      size: input.size ?? 0,
      exemplar_title: input.exemplar.title,
      exemplar_body: input.exemplar.body,
      exemplar_category: input.exemplar.category ?? null,
      exemplar_path: input.exemplar.path ?? null,
      feedback_up: 0,
      feedback_down: 0,
      feedback_dismissed: 0,
      feedback_addressed: 0,
      revision: 1,
      created_at: now,
      updated_at: now,
    };
    return this.shown.writeTransaction(this.knex, async (trx) => {
      await trx('memory_clusters').insert(row);
      await writeAudit(trx, this.clock, input.actor, 'memory.cluster.create', row.id, {
        repo: row.repo,
        action: row.action,
        revision: 1,
      });
      return mapCluster(row);
    });
  }

  async getCluster(id: string): Promise<MemoryCluster | null> {
    const row = await this.knex('memory_clusters').where({ id }).first();
    return row ? mapCluster(row) : null;
  }

  /** The most recently changed first; `repo`: that repository's only. */
  async listClusters(filter: ListFilter): Promise<MemoryCluster[]> {
    let query = this.knex('memory_clusters')
      .orderBy([
        { column: 'updated_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(filter.limit)
      .offset(filter.offset ?? 0);
    if (filter.repo !== undefined) query = query.whereRaw(...whereRepo(filter.repo));
    return (await query).map(mapCluster);
  }

  async updateCluster(
    id: string,
    revision: number,
    patch: ClusterPatch,
    actor: string,
  ): Promise<MemoryWrite<MemoryCluster>> {
    const changes: Raw = {};
    if (patch.label !== undefined) changes.label = patch.label;
    if (patch.action !== undefined) changes.action = patch.action;
    return this.shown.writeTransaction(this.knex, async (trx) => {
      const n = await trx('memory_clusters')
        .where({ id, revision })
        .update({ ...changes, revision: revision + 1, updated_at: this.clock.now() });
      if (n !== 1) return this.missed(trx('memory_clusters').where({ id }));
      await writeAudit(trx, this.clock, actor, 'memory.cluster.update', id, {
        ...changes,
        fromRevision: revision,
        toRevision: revision + 1,
      });
      return { ok: true, value: mapCluster(await trx('memory_clusters').where({ id }).first()) };
    });
  }

  async deleteCluster(id: string, revision: number, actor: string): Promise<MemoryWrite<true>> {
    return this.shown.writeTransaction(this.knex, async (trx) => {
      const n = await trx('memory_clusters').where({ id, revision }).del();
      if (n !== 1) return this.missed(trx('memory_clusters').where({ id }));
      await writeAudit(trx, this.clock, actor, 'memory.cluster.delete', id, { revision });
      return { ok: true, value: true };
    });
  }

  /**
   * The clusters of `repo` whose findings are withheld (`clusterSuppresses`): action `suppress`, or action
   * `none` with at least two dismissals and no 👍. Oldest first.
   */
  async suppressingClusters(repo: string): Promise<MemoryCluster[]> {
    const rows: Raw[] = await this.knex('memory_clusters')
      .whereRaw(...whereRepo(repo))
      .where((q) =>
        q
          .where('action', 'suppress')
          .orWhere((n) =>
            n.where('action', 'none').where('feedback_dismissed', '>=', 2).where('feedback_up', 0),
          ),
      )
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ]);
    return rows.map(mapCluster).filter(clusterSuppresses);
  }

  // --- knowledge documents ---

  /** By repository, then path; `repo`: that repository's only. */
  async listKnowledge(filter: ListFilter): Promise<KnowledgeSummary[]> {
    let query = this.knex('memory_knowledge')
      .select('repo', 'path', 'title', 'revision', 'updated_at', 'bytes')
      .orderBy([
        { column: 'repo', order: 'asc' },
        { column: 'path', order: 'asc' },
      ])
      .limit(filter.limit)
      .offset(filter.offset ?? 0);
    if (filter.repo !== undefined) query = query.whereRaw(...whereRepo(filter.repo));
    return (await query).map(mapSummary);
  }

  async getKnowledge(repo: string, path: string): Promise<KnowledgeDocument | null> {
    const row = await this.knex('memory_knowledge')
      .whereRaw(...whereRepo(repo))
      .where({ path })
      .first();
    return row ? mapDocument(row) : null;
  }

  /**
   * Creates the document of `repo` and `path` (no `revision`: 409 with the current revision when it
   * exists already) or replaces it (`revision`: conditional on it; `not_found` when there is none). A
   * replacement without `title` keeps the title; a new document without one is titled by its path.
   */
  async putKnowledge(
    input: { repo: string; path: string; title?: string; body: string; revision?: number },
    actor: string,
  ): Promise<MemoryWrite<KnowledgeDocument> & { created?: boolean }> {
    const now = this.clock.now();
    const bytes = Buffer.byteLength(input.body, 'utf8');
    return this.shown.writeTransaction(this.knex, async (trx) => {
      if (input.revision === undefined) {
        const row = {
          repo: input.repo,
          path: input.path,
          title: input.title ?? input.path,
          body: input.body,
          bytes,
          revision: 1,
          updated_by: actor,
          updated_at: now,
        };
        // Nothing is inserted when the document exists (also when a concurrent creation won).
        const inserted = await trx('memory_knowledge')
          .insert(row)
          .onConflict()
          .ignore()
          .returning('revision');
        if (inserted.length === 0) {
          const existing = await trx('memory_knowledge')
            .whereRaw(...whereRepo(input.repo))
            .where({ path: input.path })
            .first('revision');
          return { ok: false, code: 'revision_conflict', revision: Number(existing?.revision ?? 1) };
        }
        await writeAudit(trx, this.clock, actor, 'memory.knowledge.put', `${input.repo}:${input.path}`, {
          bytes,
          revision: 1,
        });
        return { ok: true, value: mapDocument(row), created: true };
      }
      const revision = input.revision;
      const where = (q: Knex.QueryBuilder) =>
        q.whereRaw(...whereRepo(input.repo)).where({ path: input.path });
      const n = await where(trx('memory_knowledge'))
        .where({ revision })
        .update({
          ...(input.title !== undefined ? { title: input.title } : {}),
          body: input.body,
          bytes,
          revision: revision + 1,
          updated_by: actor,
          updated_at: now,
        });
      if (n !== 1) return this.missed(where(trx('memory_knowledge')));
      await writeAudit(trx, this.clock, actor, 'memory.knowledge.put', `${input.repo}:${input.path}`, {
        bytes,
        fromRevision: revision,
        toRevision: revision + 1,
      });
      return { ok: true, value: mapDocument(await where(trx('memory_knowledge')).first()), created: false };
    });
  }

  /**
   * The knowledge documents of a review of `repo` changing `paths` (`knowledgeApplies`), without empty
   * ones, by path, at most `limit`.
   */
  async knowledgeForReview(
    repo: string,
    paths: readonly string[],
    limit = MAX_REVIEW_KNOWLEDGE,
  ): Promise<KnowledgeDocument[]> {
    const candidates: Raw[] = await this.knex('memory_knowledge')
      .select('path')
      .whereRaw(...whereRepo(repo))
      .where('bytes', '>', 0)
      .orderBy('path');
    const matching = candidates
      .map((r) => String(r.path))
      .filter((path) => knowledgeApplies(path, paths))
      .slice(0, limit);
    if (matching.length === 0) return [];
    const rows: Raw[] = await this.knex('memory_knowledge')
      .whereRaw(...whereRepo(repo))
      .whereIn('path', matching)
      .orderBy('path');
    return rows.map(mapDocument);
  }

  /** Every count the snapshot's `memory` view shows. */
  async counts(): Promise<{ contexts: number; clusters: number; knowledge: number }> {
    const count = async (table: string) =>
      Number(((await this.knex(table).count({ n: '*' })) as Array<{ n: unknown }>)[0]?.n ?? 0);
    return {
      contexts: await count('memory_contexts'),
      clusters: await count('memory_clusters'),
      knowledge: await count('memory_knowledge'),
    };
  }
}
