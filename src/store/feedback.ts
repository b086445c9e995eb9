import type { Knex } from 'knex';
import type { Clock, IdGenerator } from '../clock.js';
import {
  clusterIncrement,
  clusterRow,
  planFold,
  type EarlierEvent,
  type FeedbackCounts,
} from '../memory/cluster-fold.js';
import { writeAudit } from './audit.js';
import { toBool, type ShownWrites } from './db.js';

/**
 * Feedback on Verdict's line comments (NAMES.md "Memory", "Feedback and learning"), one row per GitHub
 * event (`memory_feedback`, migration 024), each stored once: its `key` is the event's GitHub identity,
 * unique, so the same delivery handled twice (a redelivery, a replay) counts once.
 *
 * An event is folded into a cluster of its repository in the same transaction: the cluster's feedback
 * counters grow by what the event counted, its `size` by one when the finding joins it, its action
 * becomes `suppress` for an `@verdict ignore`, and its revision moves on (a write like any other; an
 * operator holding the old revision gets 409). A finding (a thread) counts as `dismissed` once and as
 * `addressed` once, however many events say so: a 👎 and an `ignore` on one comment are one dismissed
 * finding, so the rule "two dismissals and no 👍" needs two findings.
 */

export const FEEDBACK_KINDS = ['up', 'down', 'ignore', 'learn', 'resolved', 'addressed'] as const;
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];
export type { FeedbackCounts };

export type FeedbackEvent = {
  id: number;
  key: string;
  repo: string;
  prNumber: number;
  /** The first comment of Verdict's thread (its line comment). */
  commentId: string;
  fingerprint: string | null;
  kind: FeedbackKind;
  status: 'counted' | 'pending';
  counts: FeedbackCounts;
  clusterId: string | null;
  contextId: string | null;
  actor: string | null;
  headSha: string | null;
  answered: boolean;
  createdAt: number;
  updatedAt: number;
};

/** Where an event is folded: an existing cluster (when it still exists), else a new one. */
export type ClusterTarget = {
  /** The repository of a cluster created for the event. */
  repo: string;
  clusterId: string | null;
  create: {
    label: string;
    exemplar: { title: string; body: string; category: string | null; path: string | null };
  };
  /** `@verdict ignore`: the cluster's action becomes `suppress`. */
  suppress: boolean;
  /** Who (the audit entry of a created cluster or a changed action). */
  actor: string;
};

export type NewFeedbackEvent = Pick<
  FeedbackEvent,
  'key' | 'repo' | 'prNumber' | 'commentId' | 'fingerprint' | 'kind' | 'actor'
> &
  Partial<Pick<FeedbackEvent, 'contextId' | 'headSha'>> & {
    /** What the event counts; `dismissed` and `addressed` only when the finding has not counted them yet. */
    counts?: Partial<FeedbackCounts>;
    /** `pending`: a resolution stored now and counted when the next head is reviewed. */
    pending?: boolean;
    /** Null: nothing to fold (a pending resolution, a `learn`). */
    cluster: ClusterTarget | null;
  };

export type RecordedFeedback =
  | { recorded: true; event: FeedbackEvent; clusterCreated: boolean }
  | { recorded: false; event: FeedbackEvent };

export type RepoFeedback = { repo: string } & FeedbackCounts & { posted: number };

const ZERO: FeedbackCounts = { up: 0, down: 0, dismissed: 0, addressed: 0 };
const COUNTS = ['up', 'down', 'dismissed', 'addressed'] as const;

type Raw = Record<string, unknown>;

function mapEvent(r: Raw): FeedbackEvent {
  return {
    id: Number(r.id),
    key: String(r.event_key),
    repo: String(r.repo),
    prNumber: Number(r.pr_number),
    commentId: String(r.comment_id),
    fingerprint: (r.fingerprint as string | null) ?? null,
    kind: String(r.kind) as FeedbackKind,
    status: r.status === 'pending' ? 'pending' : 'counted',
    counts: {
      up: Number(r.up),
      down: Number(r.down),
      dismissed: Number(r.dismissed),
      addressed: Number(r.addressed),
    },
    clusterId: (r.cluster_id as string | null) ?? null,
    contextId: (r.context_id as string | null) ?? null,
    actor: (r.actor as string | null) ?? null,
    headSha: (r.head_sha as string | null) ?? null,
    answered: toBool(r.answered),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** A line comment Verdict posted (a shadow thread's comment id is `shadow:...`, nothing was posted). */
const POSTED = (q: Knex.QueryBuilder) => q.whereNot('comment_id', 'like', 'shadow:%');

export class FeedbackStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly shown: ShownWrites,
  ) {}

  async get(key: string): Promise<FeedbackEvent | null> {
    const row = await this.knex('memory_feedback').where({ event_key: key }).first();
    return row ? mapEvent(row) : null;
  }

  /** The keys among `keys` that are stored already. */
  async existingKeys(keys: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < keys.length; i += 500) {
      const rows: Raw[] = await this.knex('memory_feedback')
        .whereIn('event_key', keys.slice(i, i + 500))
        .select('event_key');
      for (const r of rows) out.add(String(r.event_key));
    }
    return out;
  }

  /** The events of one of Verdict's comments, oldest first. */
  async forComment(commentId: string): Promise<FeedbackEvent[]> {
    const rows: Raw[] = await this.knex('memory_feedback').where({ comment_id: commentId }).orderBy('id');
    return rows.map(mapEvent);
  }

  /** How many reactions (👍 and 👎 events) are stored for each of `commentIds` (absent: none). */
  async reactionCounts(commentIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < commentIds.length; i += 500) {
      const rows: Raw[] = await this.knex('memory_feedback')
        .whereIn('comment_id', commentIds.slice(i, i + 500))
        .whereIn('kind', ['up', 'down'])
        .select('comment_id')
        .count({ n: '*' })
        .groupBy('comment_id');
      for (const r of rows) out.set(String(r.comment_id), Number(r.n));
    }
    return out;
  }

  /** The cluster a comment's finding was folded into (its latest), when that cluster still exists. */
  async clusterOfComment(commentId: string): Promise<string | null> {
    const row = await this.knex('memory_feedback as f')
      .join('memory_clusters as c', 'c.id', 'f.cluster_id')
      .where('f.comment_id', commentId)
      .orderBy('f.id', 'desc')
      .first('f.cluster_id');
    return row ? String(row.cluster_id) : null;
  }

  /** The exemplars of a repository's clusters, oldest first (what similarity compares a finding with). */
  async clusterExemplars(repo: string): Promise<Array<{ id: string; title: string; body: string }>> {
    const rows: Raw[] = await this.knex('memory_clusters')
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .select('id', 'exemplar_title', 'exemplar_body');
    return rows.map((r) => ({
      id: String(r.id),
      title: String(r.exemplar_title),
      body: String(r.exemplar_body),
    }));
  }

  /**
   * Stores an event once and folds it into its cluster, in one transaction. An event whose key is
   * stored already changes nothing and is answered `recorded: false` with the stored event.
   */
  async record(input: NewFeedbackEvent): Promise<RecordedFeedback> {
    const now = this.clock.now();
    return this.shown.writeTransaction(this.knex, async (trx) => {
      const inserted: Raw[] = await trx('memory_feedback')
        .insert({
          event_key: input.key,
          repo: input.repo,
          pr_number: input.prNumber,
          comment_id: input.commentId,
          fingerprint: input.fingerprint,
          kind: input.kind,
          status: input.pending ? 'pending' : 'counted',
          ...ZERO,
          cluster_id: null,
          context_id: input.contextId ?? null,
          actor: input.actor,
          head_sha: input.headSha ?? null,
          answered: false,
          created_at: now,
          updated_at: now,
        })
        .onConflict('event_key')
        .ignore()
        .returning('id');
      if (inserted.length === 0) {
        return {
          recorded: false,
          event: mapEvent(await trx('memory_feedback').where({ event_key: input.key }).first()),
        };
      }
      const id = Number(inserted[0]!.id ?? inserted[0]);
      const created = input.pending
        ? false
        : await this.fold(trx, id, input.commentId, input.counts ?? {}, input.cluster, now);
      const event = mapEvent(await trx('memory_feedback').where({ id }).first());
      return { recorded: true, event, clusterCreated: created };
    });
  }

  /**
   * Counts a pending resolution (compare-and-set on `pending`: of two settlers one wins) as what the next
   * head said and folds it; false when it was not pending any more.
   */
  async settle(
    key: string,
    counts: Partial<FeedbackCounts>,
    cluster: ClusterTarget | null,
  ): Promise<boolean> {
    const now = this.clock.now();
    return this.shown.writeTransaction(this.knex, async (trx) => {
      const n = await trx('memory_feedback')
        .where({ event_key: key, status: 'pending' })
        .update({ status: 'counted', updated_at: now });
      if (n !== 1) return false;
      const row = await trx('memory_feedback').where({ event_key: key }).first('id', 'comment_id');
      await this.fold(trx, Number(row.id), String(row.comment_id), counts, cluster, now);
      return true;
    });
  }

  /** Marks that Verdict's reply to an event was sent (or recorded in shadow mode). */
  async markAnswered(key: string): Promise<void> {
    await this.knex('memory_feedback')
      .where({ event_key: key })
      .update({ answered: true, updated_at: this.clock.now() });
  }

  /** The pending resolutions of a pull request, oldest first. */
  async pendingForPr(repo: string, prNumber: number): Promise<FeedbackEvent[]> {
    const rows: Raw[] = await this.knex('memory_feedback')
      .where({ pr_number: prNumber, status: 'pending' })
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .orderBy('id');
    return rows.map(mapEvent);
  }

  /** The fingerprints of the findings dismissed on a pull request (a 👎, `@verdict ignore`, a resolution). */
  async dismissedOnPr(repo: string, prNumber: number): Promise<Set<string>> {
    const rows: Raw[] = await this.knex('memory_feedback')
      .where({ pr_number: prNumber, dismissed: 1 })
      .whereRaw('lower(repo) = ?', [repo.toLowerCase()])
      .whereNotNull('fingerprint')
      .select('fingerprint');
    return new Set(rows.map((r) => String(r.fingerprint)));
  }

  /**
   * Per repository: the line comments Verdict posted (its live threads) and the feedback counted on them,
   * by repository name (case-insensitively, in the spelling of its first thread).
   */
  async totalsByRepo(): Promise<RepoFeedback[]> {
    const posted: Raw[] = await POSTED(this.knex('review_threads'))
      .select(this.knex.raw('lower(repo) as k'), this.knex.raw('min(repo) as repo'))
      .count({ n: '*' })
      .groupByRaw('lower(repo)');
    const counted: Raw[] = await this.knex('memory_feedback')
      .where('status', 'counted')
      .select(this.knex.raw('lower(repo) as k'), this.knex.raw('min(repo) as repo'))
      .sum({ up: 'up', down: 'down', dismissed: 'dismissed', addressed: 'addressed' })
      .groupByRaw('lower(repo)');
    const byKey = new Map<string, RepoFeedback>();
    const entry = (k: string, repo: string) => {
      let e = byKey.get(k);
      if (!e) byKey.set(k, (e = { repo, posted: 0, ...ZERO }));
      return e;
    };
    for (const r of posted) entry(String(r.k), String(r.repo)).posted = Number(r.n);
    for (const r of counted) {
      const e = entry(String(r.k), String(r.repo));
      for (const c of COUNTS) e[c] = Number(r[c] ?? 0);
    }
    return [...byKey.values()].sort((a, b) => a.repo.localeCompare(b.repo));
  }

  /**
   * Folds an event into its cluster (src/memory/cluster-fold.ts): the given one when it still exists,
   * else a new one made from the finding. Returns whether a cluster was created.
   */
  private async fold(
    trx: Knex.Transaction,
    id: number,
    commentId: string,
    wanted: Partial<FeedbackCounts>,
    target: ClusterTarget | null,
    now: number,
  ): Promise<boolean> {
    const earlier: EarlierEvent[] = await trx('memory_feedback')
      .where({ comment_id: commentId, status: 'counted' })
      .whereNot({ id })
      .select('dismissed', 'addressed', 'cluster_id');
    const found: Raw | undefined = target?.clusterId
      ? await trx('memory_clusters').where({ id: target.clusterId }).first('id', 'action', 'revision')
      : undefined;
    const existing = found ? { id: String(found.id), action: String(found.action) } : null;
    const plan = planFold(wanted, earlier, existing, target?.suppress ?? false);
    await trx('memory_feedback').where({ id }).update(plan.counts);
    if (!target) return false;

    const clusterId = existing?.id ?? this.ids('clu');
    if (plan.cluster === 'create') {
      await trx('memory_clusters').insert(
        clusterRow(clusterId, { repo: target.repo, ...target.create }, plan, now),
      );
      await writeAudit(trx, this.clock, target.actor, 'memory.cluster.create', clusterId, {
        repo: target.repo,
        action: plan.suppressNow ? 'suppress' : 'none',
        revision: 1,
        source: 'feedback',
      });
    } else if (plan.cluster === 'update') {
      const { sql, bindings } = clusterIncrement(clusterId, plan, now);
      await trx.raw(sql, bindings);
      if (plan.suppressNow) {
        const revision = Number(found!.revision);
        await writeAudit(trx, this.clock, target.actor, 'memory.cluster.update', clusterId, {
          action: 'suppress',
          fromRevision: revision,
          toRevision: revision + 1,
          source: 'feedback',
        });
      }
    }
    await trx('memory_feedback').where({ id }).update({ cluster_id: clusterId });
    return plan.cluster === 'create';
  }
}
