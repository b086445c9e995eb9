import type { Knex } from 'knex';
import type { Clock } from '../clock.js';

export type PublicationKind = 'review' | 'check_run' | 'description' | 'reply' | 'reaction' | 'comment';
export type PublicationRecord = {
  id: number;
  runId: string | null;
  repo: string;
  prNumber: number | null;
  kind: PublicationKind;
  mode: 'live' | 'shadow';
  status: 'published' | 'shadowed' | 'failed';
  receipt: string | null;
  body: string | null;
  error: string | null;
  createdAt: number;
};

export class PublicationStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  async record(entry: Omit<PublicationRecord, 'id' | 'createdAt'>): Promise<void> {
    await this.knex('publications').insert({
      run_id: entry.runId,
      repo: entry.repo,
      pr_number: entry.prNumber,
      kind: entry.kind,
      mode: entry.mode,
      status: entry.status,
      receipt: entry.receipt,
      body: entry.body,
      error: entry.error,
      created_at: this.clock.now(),
    });
  }

  async listForPr(repo: string, prNumber: number): Promise<PublicationRecord[]> {
    const rows = await this.knex('publications').where({ repo, pr_number: prNumber }).orderBy('id');
    return rows.map((row: Record<string, unknown>) => ({
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
      createdAt: Number(row.created_at),
    }));
  }
}
