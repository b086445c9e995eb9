import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { parseJson, type ShownWrites } from './db.js';

export type PublicationKind =
  | 'review'
  | 'check_run'
  | 'description'
  | 'reply'
  | 'reaction'
  | 'comment'
  /** A reply in a finding's comment thread ("Resolved in <sha>: ..."). */
  | 'thread_reply'
  /** GraphQL `resolveReviewThread`. */
  | 'thread_resolve'
  /** GraphQL `minimizeComment` (an earlier review body hidden as outdated). */
  | 'minimize';
/**
 * `sending`: written before the call to GitHub and finished when it answers; one left `sending` is an
 * attempt interrupted (a crash) whose outcome GitHub alone knows.
 */
export type PublicationStatus = 'published' | 'shadowed' | 'failed' | 'sending';

export type PublicationRecord = {
  id: number;
  runId: string | null;
  repo: string;
  prNumber: number | null;
  kind: PublicationKind;
  mode: 'live' | 'shadow';
  status: PublicationStatus;
  receipt: string | null;
  body: string | null;
  error: string | null;
  /** What was sent beside the body (inline comments, annotations, GraphQL variables), as JSON. */
  request: unknown;
  /** The GitHub node id of what was created (a review's, to hide it as outdated later). */
  nodeId: string | null;
  /**
   * The publication this attempt belongs to, for those that must not be repeated (`review`,
   * `check:start`, `thread_reply:<fingerprint>`, ...); null for the others.
   */
  step: string | null;
  createdAt: number;
};

export type NewPublication = Omit<PublicationRecord, 'id' | 'createdAt' | 'request' | 'nodeId' | 'step'> &
  Partial<Pick<PublicationRecord, 'request' | 'nodeId' | 'step'>>;

/** How an attempt ended (what `finish` writes on its row). */
export type PublicationEnd = {
  status: 'published' | 'failed';
  receipt: string | null;
  error: string | null;
  nodeId?: string | null;
};

/** The publication a step names: of a run, or (a reply without a run) of a pull request. */
export type StepKey = { runId: string | null; repo: string; prNumber: number | null; step: string };

export class PublicationStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly shown: ShownWrites,
  ) {}

  async record(entry: NewPublication): Promise<number> {
    const rows = await this.knex('publications').insert(this.row(entry)).returning('id');
    this.shown.wrote();
    const first = rows[0] as unknown;
    return Number(typeof first === 'object' && first !== null ? (first as { id: unknown }).id : first);
  }

  /** Ends an attempt written as `sending` (or corrects one found published on GitHub after all). */
  async finish(id: number, end: PublicationEnd): Promise<void> {
    await this.knex('publications')
      .where({ id })
      .update({
        status: end.status,
        receipt: end.receipt,
        error: end.error,
        ...(end.nodeId !== undefined ? { node_id: end.nodeId } : {}),
      });
    this.shown.wrote();
  }

  /** The newest attempt of a step, or null when it was never attempted. */
  async lastOfStep(key: StepKey): Promise<PublicationRecord | null> {
    const query = this.knex('publications').where({ repo: key.repo, step: key.step });
    if (key.prNumber === null) query.whereNull('pr_number');
    else query.where('pr_number', key.prNumber);
    if (key.runId === null) query.whereNull('run_id');
    else query.where('run_id', key.runId);
    const row = await query.orderBy('id', 'desc').first();
    return row ? mapPublication(row) : null;
  }

  private row(entry: NewPublication) {
    return {
      run_id: entry.runId,
      repo: entry.repo,
      pr_number: entry.prNumber,
      kind: entry.kind,
      mode: entry.mode,
      status: entry.status,
      receipt: entry.receipt,
      body: entry.body,
      error: entry.error,
      request: entry.request === undefined || entry.request === null ? null : JSON.stringify(entry.request),
      node_id: entry.nodeId ?? null,
      step: entry.step ?? null,
      created_at: this.clock.now(),
    };
  }

  async listForPr(repo: string, prNumber: number): Promise<PublicationRecord[]> {
    const rows = await this.knex('publications').where({ repo, pr_number: prNumber }).orderBy('id');
    return rows.map(mapPublication);
  }

  /** Published reviews of a PR with their node ids, oldest first (to hide earlier bodies as outdated). */
  async publishedReviews(repo: string, prNumber: number): Promise<PublicationRecord[]> {
    const rows = await this.knex('publications')
      .where({ repo, pr_number: prNumber, kind: 'review', status: 'published' })
      .whereNotNull('node_id')
      .orderBy('id');
    return rows.map(mapPublication);
  }

  /** Node ids of reviews already hidden as outdated (a `minimize` published for them). */
  async minimizedNodeIds(repo: string, prNumber: number): Promise<Set<string>> {
    const rows = await this.knex('publications')
      .where({ repo, pr_number: prNumber, kind: 'minimize', status: 'published' })
      .select('receipt');
    return new Set(rows.map((r: { receipt: string | null }) => String(r.receipt)));
  }
}

function mapPublication(row: Record<string, unknown>): PublicationRecord {
  return {
    id: Number(row.id),
    runId: (row.run_id as string | null) ?? null,
    repo: String(row.repo),
    prNumber: row.pr_number === null ? null : Number(row.pr_number),
    kind: row.kind as PublicationKind,
    mode: row.mode as 'live' | 'shadow',
    status: row.status as PublicationRecord['status'],
    receipt: (row.receipt as string | null) ?? null,
    body: (row.body as string | null) ?? null,
    error: (row.error as string | null) ?? null,
    request: parseJson(row.request, null),
    nodeId: (row.node_id as string | null | undefined) ?? null,
    step: (row.step as string | null | undefined) ?? null,
    createdAt: Number(row.created_at),
  };
}
