import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { numberOrNull, toBool, type ShownWrites } from './db.js';

/** A stored finding (review-engine 2.3 plus the run it belongs to). Location fields may be null. */
export type FindingRecord = {
  id: number;
  runId: string;
  reviewKey: string;
  repo: string;
  prNumber: number;
  headSha: string | null;
  severity: string;
  category: string;
  path: string | null;
  /** The checked anchor: new-side lines of the file's diff at the reviewed head (null: unanchored). */
  line: number | null;
  endLine: number | null;
  /** Replacement text for `line`..`endLine` (a GitHub suggestion), kept only with a valid anchor. */
  suggestion: string | null;
  /** The text of the anchored lines when the anchor was checked, to recognise the code later. */
  lineText: string | null;
  title: string;
  body: string;
  fingerprint: string;
  outsideDiff: boolean;
  /** Raised by an earlier review of the PR too (same fingerprint): still open, not new. */
  stillOpen: boolean;
  /**
   * `published`; `withheld` (verification refuted it or scored it under the threshold); or `suppressed`
   * (like findings reviewers dismissed: a suppressing memory cluster of its repository, or a finding
   * dismissed on the same pull request). Only published findings are posted.
   */
  status: FindingStatus;
  /** Why it was withheld or suppressed (the verifier's words; the cluster or the dismissed finding); null when published. */
  statusReason: string | null;
  createdAt: number;
};

/**
 * What became of a finding: posted with the review, withheld after verification, or suppressed by what
 * reviewers dismissed (NAMES.md "Verification of findings", "Memory").
 */
export const FINDING_STATUSES = ['published', 'withheld', 'suppressed'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

/** Which findings a read returns: the published ones (the default: what the review posted), or all. */
export type FindingFilter = { include?: 'published' | 'all' };

export type FindingOwner = Pick<FindingRecord, 'runId' | 'reviewKey' | 'repo' | 'prNumber' | 'headSha'>;
export type NewFinding = Pick<
  FindingRecord,
  'severity' | 'category' | 'path' | 'line' | 'title' | 'body' | 'fingerprint' | 'outsideDiff'
> &
  Partial<Pick<FindingRecord, 'endLine' | 'suggestion' | 'lineText' | 'status' | 'statusReason'>> & {
    stillOpen?: boolean;
  };

/** Most findings one pull request detail returns (operator-api 8: 2,000 per PR). */
export const MAX_FINDINGS_PER_PR = 2000;
const INSERT_CHUNK = 200;

function mapFinding(r: Record<string, unknown>): FindingRecord {
  return {
    id: Number(r.id),
    runId: String(r.run_id),
    reviewKey: String(r.review_key),
    repo: String(r.repo),
    prNumber: Number(r.pr_number),
    headSha: (r.head_sha as string | null) ?? null,
    severity: String(r.severity),
    category: String(r.category),
    path: (r.path as string | null) ?? null,
    line: numberOrNull(r.line),
    endLine: numberOrNull(r.end_line),
    suggestion: (r.suggestion as string | null | undefined) ?? null,
    lineText: (r.line_text as string | null | undefined) ?? null,
    title: String(r.title),
    body: String(r.body),
    fingerprint: String(r.fingerprint),
    outsideDiff: toBool(r.outside_diff),
    stillOpen: toBool(r.still_open),
    status: r.status === 'withheld' || r.status === 'suppressed' ? (r.status as FindingStatus) : 'published',
    statusReason: (r.status_reason as string | null | undefined) ?? null,
    createdAt: Number(r.created_at),
  };
}

export class FindingStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly shown: ShownWrites,
  ) {}

  /** Records a run's findings in one transaction: all of them or none. */
  async recordMany(
    owner: FindingOwner,
    findings: readonly NewFinding[],
    trx?: Knex.Transaction,
  ): Promise<void> {
    if (findings.length === 0) return;
    const now = this.clock.now();
    const rows = findings.map((f) => ({
      run_id: owner.runId,
      review_key: owner.reviewKey,
      repo: owner.repo,
      pr_number: owner.prNumber,
      head_sha: owner.headSha,
      severity: f.severity,
      category: f.category,
      path: f.path,
      line: f.line,
      end_line: f.line === null ? null : (f.endLine ?? f.line),
      suggestion: f.line === null ? null : (f.suggestion ?? null),
      line_text: f.line === null ? null : (f.lineText ?? null),
      title: f.title,
      body: f.body,
      fingerprint: f.fingerprint,
      outside_diff: f.outsideDiff,
      still_open: f.stillOpen ?? false,
      status: f.status ?? 'published',
      status_reason: f.status && f.status !== 'published' ? (f.statusReason ?? null) : null,
      created_at: now,
    }));
    const write = async (t: Knex.Transaction) => {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK)
        await t('findings').insert(rows.slice(i, i + INSERT_CHUNK));
    };
    if (trx) await write(trx).finally(() => this.shown.wrote());
    else await this.shown.transaction(this.knex, write);
  }

  /** A run's findings: the published ones, or with `include: 'all'` the withheld and suppressed ones too. */
  async listForRun(runId: string, filter: FindingFilter = {}): Promise<FindingRecord[]> {
    const query = this.knex('findings').where({ run_id: runId });
    if (filter.include !== 'all') query.where({ status: 'published' });
    const rows = await query.orderBy('id');
    return rows.map(mapFinding);
  }

  /**
   * The newest findings of a pull request (at most `limit`, default 2,000), newest run first: the
   * published ones, or with `include: 'all'` the withheld and suppressed ones too.
   */
  async listForPr(
    repo: string,
    prNumber: number,
    limit = MAX_FINDINGS_PER_PR,
    filter: FindingFilter = {},
  ): Promise<FindingRecord[]> {
    const query = this.knex('findings').where({ repo, pr_number: prNumber });
    if (filter.include !== 'all') query.where({ status: 'published' });
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'asc').limit(limit);
    return rows.map(mapFinding);
  }
}
