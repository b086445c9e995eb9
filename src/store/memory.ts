import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { globMatch } from '../policy/matcher.js';
import { toBool } from './db.js';

/** Repository knowledge a review is given (review-engine 2.3 `contextIds` cite these ids). */
export type MemoryContext = {
  id: string;
  repo: string | null;
  pathGlob: string | null;
  title: string;
  body: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
};

/** Most memory contexts one review is given. */
export const MAX_REVIEW_CONTEXTS = 50;

function mapContext(r: Record<string, unknown>): MemoryContext {
  return {
    id: String(r.id),
    repo: (r.repo as string | null) ?? null,
    pathGlob: (r.path_glob as string | null) ?? null,
    title: String(r.title),
    body: String(r.body),
    enabled: toBool(r.enabled),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/**
 * Memory contexts, in the minimal form the review engine needs: the memory issue adds the routes that
 * write them. A context applies to its repository (or to all when `repo` is null) and, when it has a
 * `pathGlob`, only to a review that changes a path matching it.
 */
export class MemoryStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  async add(context: Pick<MemoryContext, 'id' | 'repo' | 'pathGlob' | 'title' | 'body'>): Promise<void> {
    const now = this.clock.now();
    await this.knex('memory_contexts').insert({
      id: context.id,
      repo: context.repo,
      path_glob: context.pathGlob,
      title: context.title,
      body: context.body,
      enabled: true,
      created_at: now,
      updated_at: now,
    });
  }

  /** The enabled contexts of a review of `repo` changing `paths`, oldest first, at most 50. */
  async forReview(repo: string, paths: readonly string[]): Promise<MemoryContext[]> {
    const rows: Array<Record<string, unknown>> = await this.knex('memory_contexts')
      .where((q) => q.where('repo', repo).orWhereNull('repo'))
      .where('enabled', true)
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(1000);
    return rows
      .map(mapContext)
      .filter((c) => c.pathGlob === null || paths.some((p) => globMatch(c.pathGlob!, p)))
      .slice(0, MAX_REVIEW_CONTEXTS);
  }
}
