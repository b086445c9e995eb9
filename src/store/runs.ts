import type { Knex } from 'knex';
import type { Clock, IdGenerator } from '../clock.js';
import { numberOrNull, parseJson, type ShownWrites } from './db.js';
import type { FindingOwner, FindingStore, NewFinding } from './findings.js';

export type RunStatus =
  'queued' | 'running' | 'completed' | 'failed' | 'skipped' | 'superseded' | 'abandoned';

export type RunRecord = {
  id: string;
  reviewKey: string;
  repo: string;
  prNumber: number;
  headSha: string | null;
  variant: string | null;
  trigger: string;
  status: RunStatus;
  analysisStatus: string;
  publishStatus: string;
  reason: string | null;
  installationId: number | null;
  deliveryId: string | null;
  jobId: number | null;
  error: string | null;
  /** `clear` or `needs-attention` once analysed. */
  verdict: string | null;
  /** Analyst confidence 1 to 5 once analysed. */
  confidence: number | null;
  /** The analysis (review output, semantic coverage, warnings), once analysed or refused. */
  result: unknown;
  /** The shadow model's review: stored, never published. */
  shadowReview: unknown;
  /** The check run this run owns on GitHub, once created. */
  checkRunId: string | null;
  /** Why the last publication attempt failed (the analysis is kept either way). */
  publishError: string | null;
  createdAt: number;
  updatedAt: number;
};

export type NewRun = Pick<
  RunRecord,
  'reviewKey' | 'repo' | 'prNumber' | 'headSha' | 'trigger' | 'installationId'
> &
  Partial<Pick<RunRecord, 'variant' | 'deliveryId'>>;

type Raw = Record<string, unknown>;

function mapRun(row: Raw): RunRecord {
  return {
    id: String(row.id),
    reviewKey: String(row.review_key),
    repo: String(row.repo),
    prNumber: Number(row.pr_number),
    headSha: (row.head_sha as string | null) ?? null,
    variant: (row.variant as string | null) ?? null,
    trigger: String(row.trigger),
    status: row.status as RunStatus,
    analysisStatus: String(row.analysis_status),
    publishStatus: String(row.publish_status),
    reason: (row.reason as string | null) ?? null,
    installationId: row.installation_id === null ? null : Number(row.installation_id),
    deliveryId: (row.delivery_id as string | null) ?? null,
    jobId: row.job_id === null ? null : Number(row.job_id),
    error: (row.error as string | null) ?? null,
    verdict: (row.verdict as string | null) ?? null,
    confidence: numberOrNull(row.confidence),
    result: parseJson(row.result, null),
    shadowReview: parseJson(row.shadow_review, null),
    checkRunId: (row.check_run_id as string | null) ?? null,
    publishError: (row.publish_error as string | null) ?? null,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The fields `RunStore.update` changes, and their columns. */
const PATCH_COLUMNS = {
  status: 'status',
  analysisStatus: 'analysis_status',
  publishStatus: 'publish_status',
  checkRunId: 'check_run_id',
  publishError: 'publish_error',
  reason: 'reason',
  error: 'error',
  jobId: 'job_id',
} as const;

/** `{owner}/{repo}#{pr}@{some hex}[:{variant}]`: repository, number, head as written, `:variant`. */
const ABBREVIATED_KEY = /^([^#@\s]+\/[^#@\s]+)#([1-9]\d{0,9})@([0-9a-fA-F]{1,63})(:[^\s]+)?$/;

export class RunStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly shown: ShownWrites,
  ) {}

  /**
   * Creates the run for a review key, or returns the existing one (`created: false`). A review key names
   * one review of one head; a manual variant makes a new key and so a fresh run on an unchanged head.
   */
  async createOrGet(
    input: NewRun,
    trx: Knex | Knex.Transaction = this.knex,
  ): Promise<{ run: RunRecord; created: boolean }> {
    const existing = await trx('runs').where({ review_key: input.reviewKey }).first();
    if (existing) return { run: mapRun(existing), created: false };
    const now = this.clock.now();
    const row = {
      id: this.ids('run'),
      review_key: input.reviewKey,
      repo: input.repo,
      pr_number: input.prNumber,
      head_sha: input.headSha,
      variant: input.variant ?? null,
      trigger: input.trigger,
      status: 'queued',
      analysis_status: 'pending',
      publish_status: 'pending',
      installation_id: input.installationId,
      delivery_id: input.deliveryId ?? null,
      created_at: now,
      updated_at: now,
    };
    await trx('runs').insert(row);
    this.shown.wrote();
    return { run: mapRun({ ...row, reason: null, job_id: null, error: null }), created: true };
  }

  async get(id: string): Promise<RunRecord | null> {
    const row = await this.knex('runs').where({ id }).first();
    return row ? mapRun(row) : null;
  }

  async getByKey(reviewKey: string): Promise<RunRecord | null> {
    const row = await this.knex('runs').where({ review_key: reviewKey }).first();
    return row ? mapRun(row) : null;
  }

  /**
   * The runs a review key names when its head is abbreviated (`acme/web#12@1a2b3c4[:variant]`): the runs
   * of that pull request whose stored key is this key with the head written out in full. A key that is not
   * of that form matches nothing. How short a head may be, and what several matches mean, is the caller's
   * rule (src/services/runs.ts).
   */
  async withAbbreviatedHead(key: string): Promise<RunRecord[]> {
    const parts = ABBREVIATED_KEY.exec(key);
    if (!parts) return [];
    const [, repo, pr, head, variant] = parts as unknown as [string, string, string, string, string?];
    const rows = await this.knex('runs')
      .where({ repo, pr_number: Number(pr) })
      // Only hex digits: no LIKE wildcard can come from the key.
      .andWhere('head_sha', 'like', `${head.toLowerCase()}%`)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc');
    return rows.map(mapRun).filter((run) => run.reviewKey === `${repo}#${pr}@${run.headSha}${variant ?? ''}`);
  }

  /** The newest runs of every pull request, newest first. */
  async recent(limit: number): Promise<RunRecord[]> {
    const rows = await this.knex('runs').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
    return rows.map(mapRun);
  }

  /**
   * The statuses of a repository's newest finished reviews (completed or failed), newest first: the
   * moment-alert `reviews_failing` reads them (src/alerts/moments.ts).
   */
  async lastFinishedStatuses(repo: string, limit: number): Promise<string[]> {
    const rows: Array<{ status: string }> = await this.knex('runs')
      .select('status')
      .where({ repo })
      .whereIn('status', ['completed', 'failed'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    return rows.map((r) => r.status);
  }

  /** The newest run of a PR, whatever its head. */
  async latestForPr(repo: string, prNumber: number): Promise<RunRecord | null> {
    const row = await this.knex('runs')
      .where({ repo, pr_number: prNumber })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .first();
    return row ? mapRun(row) : null;
  }

  async listForPr(repo: string, prNumber: number): Promise<RunRecord[]> {
    const rows = await this.knex('runs')
      .where({ repo, pr_number: prNumber })
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc');
    return rows.map(mapRun);
  }

  async update(
    id: string,
    patch: Partial<Pick<RunRecord, keyof typeof PATCH_COLUMNS>>,
    trx: Knex | Knex.Transaction = this.knex,
  ): Promise<void> {
    const values: Record<string, unknown> = { updated_at: this.clock.now() };
    for (const [field, column] of Object.entries(PATCH_COLUMNS)) {
      const value = patch[field as keyof typeof PATCH_COLUMNS];
      if (value !== undefined) values[column] = value;
    }
    await trx('runs').where({ id }).update(values);
    this.shown.wrote();
  }
  /**
   * Stores what an analysis produced, in one transaction: the run's analysis status, verdict, confidence,
   * result and shadow review, and its findings (replacing any an earlier attempt of the same run left).
   */
  async recordAnalysis(
    run: FindingOwner,
    analysis: {
      analysisStatus: 'analysed' | 'degraded' | 'failed' | 'refused';
      verdict: string | null;
      confidence: number | null;
      result: unknown;
      shadowReview?: unknown;
      error?: string | null;
    },
    findings: readonly NewFinding[],
    findingStore: FindingStore,
  ): Promise<void> {
    await this.shown.transaction(this.knex, async (trx) => {
      await trx('runs')
        .where({ id: run.runId })
        .update({
          analysis_status: analysis.analysisStatus,
          verdict: analysis.verdict,
          confidence: analysis.confidence,
          result: JSON.stringify(analysis.result ?? null),
          shadow_review: analysis.shadowReview === undefined ? null : JSON.stringify(analysis.shadowReview),
          ...(analysis.error !== undefined ? { error: analysis.error } : {}),
          updated_at: this.clock.now(),
        });
      await trx('findings').where({ run_id: run.runId }).del();
      await findingStore.recordMany(run, findings, trx);
    });
  }

  /** The most recent analysed run of a PR before `beforeRunId`'s, any head (for prior findings). */
  async previousAnalysed(repo: string, prNumber: number, excludeRunId: string): Promise<RunRecord | null> {
    const row = await this.knex('runs')
      .where({ repo, pr_number: prNumber })
      .whereIn('analysis_status', ['analysed', 'degraded'])
      .whereNot('id', excludeRunId)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .first();
    return row ? mapRun(row) : null;
  }

  /** Whether any run of the repository was ever analysed (repository admission). */
  async repoHasAnalysis(repo: string): Promise<boolean> {
    const row = await this.knex('runs')
      .where({ repo })
      .whereIn('analysis_status', ['analysed', 'degraded'])
      .first('id');
    return row !== undefined;
  }

  /**
   * Takes the dispatch lease of a run for the job holding `receipt`: the run becomes `running` unless it
   * is finished, obsolete, or held by another job whose lease is still live. The lease is the job's own
   * (its row in `jobs`), so it needs no renewal of its own and dies with the job's lease.
   */
  async acquireDispatch(runId: string, jobReceipt: string): Promise<DispatchResult> {
    const now = this.clock.now();
    const n = await this.knex('runs')
      .where({ id: runId })
      .whereIn('status', ['queued', 'running', 'failed'])
      .andWhere((q) =>
        q
          .whereNull('dispatch_receipt')
          .orWhere('dispatch_receipt', jobReceipt)
          .orWhereNotExists(
            this.knex('jobs')
              .select(this.knex.raw('1'))
              .whereRaw('jobs.receipt = runs.dispatch_receipt')
              .andWhere('jobs.status', 'running')
              .andWhere('jobs.lease_expires_at', '>', now),
          ),
      )
      .update({ status: 'running', dispatch_receipt: jobReceipt, updated_at: now });
    this.shown.wrote();
    const run = await this.get(runId);
    if (!run) return { outcome: 'missing' };
    if (n === 1) return { outcome: 'acquired', run };
    if (run.status === 'completed' || run.status === 'skipped') return { outcome: 'completed', run };
    if (run.status === 'superseded' || run.status === 'abandoned') return { outcome: 'obsolete', run };
    return { outcome: 'locked', run };
  }

  /** Gives the dispatch lease back (only the holder can). */
  async releaseDispatch(runId: string, jobReceipt: string): Promise<void> {
    await this.knex('runs')
      .where({ id: runId, dispatch_receipt: jobReceipt })
      .update({ dispatch_receipt: null, updated_at: this.clock.now() });
    this.shown.wrote();
  }
}

export type DispatchResult =
  { outcome: 'acquired' | 'completed' | 'obsolete' | 'locked'; run: RunRecord } | { outcome: 'missing' };
