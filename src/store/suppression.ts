import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import type { ClusterAction } from './memory.js';
import { type ShownWrites } from './db.js';

/**
 * What a review reads and writes to withhold findings like the ones reviewers dismissed (NAMES.md "Memory",
 * "Suppression"): the clusters of a repository as matching needs them, the findings dismissed on a pull
 * request, and the findings a run withheld (`memory_withheld`, migration 027), each joining its cluster
 * once.
 */

/** What decides whether a cluster withholds the findings like it (its action and feedback). */
export type ClusterStanding = {
  id: string;
  action: ClusterAction;
  feedback: { up: number; dismissed: number };
};

/** A cluster's exemplar text, what a finding is compared with (it never changes once created). */
export type ClusterText = { id: string; title: string; body: string };

/** A cluster as matching reads it: its exemplar's text and what decides whether it withholds. */
export type MatchableCluster = ClusterStanding & ClusterText;

/** A finding dismissed on a pull request (a 👎, `@verdict ignore`, a resolution leaving its lines). */
export type DismissedFinding = { fingerprint: string; title: string; body: string; path: string | null };

export type WithheldEntry = {
  fingerprint: string;
  /** The suppressing cluster it was like; null when it was like a finding dismissed on the PR. */
  clusterId: string | null;
  reason: 'cluster' | 'dismissed';
};

type Raw = Record<string, unknown>;

const standingOf = (r: Raw): ClusterStanding => ({
  id: String(r.id),
  action: String(r.action) as ClusterAction,
  feedback: { up: Number(r.feedback_up), dismissed: Number(r.feedback_dismissed) },
});

export class SuppressionStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly shown: ShownWrites,
  ) {}

  /** Every cluster of `repo` (case-insensitively), oldest first: what a finding is matched against. */
  async clusters(repo: string): Promise<MatchableCluster[]> {
    const rows: Raw[] = await this.ofRepo(repo).select(
      'id',
      'exemplar_title',
      'exemplar_body',
      'action',
      'feedback_up',
      'feedback_dismissed',
    );
    return rows.map((r) => ({
      ...standingOf(r),
      title: String(r.exemplar_title),
      body: String(r.exemplar_body),
    }));
  }

  /** The clusters of `repo`, oldest first. */
  private ofRepo(repo: string) {
    return this.knex('memory_clusters')
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ]);
  }

  /**
   * What changes when a cluster of `repo` is created or deleted: how many there are and when the newest
   * was created (a light read of the index on `lower(repo)`).
   */
  async stamp(repo: string): Promise<string> {
    const row = (await this.knex('memory_clusters')
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .count({ n: '*' })
      .max({ newest: 'created_at' })
      .first()) as Raw | undefined;
    return `${Number(row?.n ?? 0)}:${Number(row?.newest ?? 0)}`;
  }

  /** The ids of the clusters of `repo`, oldest first. */
  async ids(repo: string): Promise<string[]> {
    return ((await this.ofRepo(repo).select('id')) as Raw[]).map((r) => String(r.id));
  }

  /** The action and feedback of the clusters `ids` that exist. */
  async standing(ids: readonly string[]): Promise<Map<string, ClusterStanding>> {
    const out = new Map<string, ClusterStanding>();
    for (let i = 0; i < ids.length; i += 500) {
      const rows: Raw[] = await this.knex('memory_clusters')
        .whereIn('id', ids.slice(i, i + 500))
        .select('id', 'action', 'feedback_up', 'feedback_dismissed');
      for (const r of rows) out.set(String(r.id), standingOf(r));
    }
    return out;
  }

  /** The exemplar texts of the clusters of `repo` (oldest first), or of those of `ids` that exist. */
  async texts(repo: string, ids?: readonly string[]): Promise<ClusterText[]> {
    const read = async (q: Knex.QueryBuilder) =>
      ((await q.select('id', 'exemplar_title', 'exemplar_body')) as Raw[]).map((r) => ({
        id: String(r.id),
        title: String(r.exemplar_title),
        body: String(r.exemplar_body),
      }));
    if (ids === undefined) return read(this.ofRepo(repo));
    const out: ClusterText[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      out.push(...(await read(this.ofRepo(repo).whereIn('id', ids.slice(i, i + 500)))));
    }
    return out;
  }

  /**
   * The findings dismissed on a pull request: those of its findings (any status) whose fingerprint has
   * a counted dismissal there, each once (its newest record).
   */
  async dismissedOnPr(repo: string, prNumber: number): Promise<DismissedFinding[]> {
    const dismissed = this.knex('memory_feedback')
      .where({ pr_number: prNumber, dismissed: 1 })
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .whereNotNull('fingerprint')
      .select('fingerprint');
    const rows: Raw[] = await this.knex('findings')
      .where({ pr_number: prNumber })
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .whereIn('fingerprint', dismissed)
      .orderBy('id', 'desc')
      .select('fingerprint', 'title', 'body', 'path');
    const out = new Map<string, DismissedFinding>();
    for (const r of rows) {
      const fingerprint = String(r.fingerprint);
      if (out.has(fingerprint)) continue;
      out.set(fingerprint, {
        fingerprint,
        title: String(r.title),
        body: String(r.body),
        path: (r.path as string | null) ?? null,
      });
    }
    return [...out.values()];
  }

  /**
   * Records the findings a run withheld, each once (a retried run records nothing twice): a finding like
   * a cluster joins it, its `size` growing by one and its revision moving on (a write like any other).
   * Returns how many were new.
   */
  async recordWithheld(
    run: { repo: string; prNumber: number; runId: string },
    entries: readonly WithheldEntry[],
  ): Promise<number> {
    if (entries.length === 0) return 0;
    const now = this.clock.now();
    return this.shown.writeTransaction(this.knex, async (trx) => {
      let added = 0;
      for (const e of entries) {
        const inserted = await trx('memory_withheld')
          .insert({
            repo: run.repo,
            pr_number: run.prNumber,
            run_id: run.runId,
            fingerprint: e.fingerprint,
            cluster_id: e.clusterId,
            reason: e.reason,
            created_at: now,
          })
          .onConflict(['run_id', 'fingerprint'])
          .ignore()
          .returning('id');
        if (inserted.length === 0) continue;
        added++;
        if (e.clusterId === null) continue;
        await trx('memory_clusters')
          .where({ id: e.clusterId })
          .update({ size: trx.raw('size + 1'), revision: trx.raw('revision + 1'), updated_at: now });
      }
      return added;
    });
  }

  /** The findings a run withheld, in the order they were recorded. */
  async withheldForRun(runId: string): Promise<Array<WithheldEntry & { repo: string; prNumber: number }>> {
    const rows: Raw[] = await this.knex('memory_withheld').where({ run_id: runId }).orderBy('id');
    return rows.map((r) => ({
      repo: String(r.repo),
      prNumber: Number(r.pr_number),
      fingerprint: String(r.fingerprint),
      clusterId: (r.cluster_id as string | null) ?? null,
      reason: r.reason === 'dismissed' ? 'dismissed' : 'cluster',
    }));
  }
}
