import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { parseJson } from './db.js';

/** A saved review baseline (the CLI's `harness`): what one run concluded, for later comparison. */
export type HarnessRecord = {
  id: string;
  name: string;
  reviewKey: string;
  runId: string;
  repo: string;
  prNumber: number;
  record: Record<string, unknown>;
  actor: string;
  createdAt: number;
};

type Raw = Record<string, unknown>;

function mapRecord(row: Raw): HarnessRecord {
  return {
    id: String(row.id),
    name: String(row.name),
    reviewKey: String(row.review_key),
    runId: String(row.run_id),
    repo: String(row.repo),
    prNumber: Number(row.pr_number),
    record: parseJson<Record<string, unknown>>(row.record, {}),
    actor: String(row.actor),
    createdAt: Number(row.created_at),
  };
}

export class HarnessStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  async save(input: Omit<HarnessRecord, 'createdAt'>): Promise<HarnessRecord> {
    const row = {
      id: input.id,
      name: input.name,
      review_key: input.reviewKey,
      run_id: input.runId,
      repo: input.repo,
      pr_number: input.prNumber,
      record: JSON.stringify(input.record),
      actor: input.actor,
      created_at: this.clock.now(),
    };
    await this.knex('harness_records').insert(row);
    return mapRecord(row);
  }

  async list(limit = 50): Promise<HarnessRecord[]> {
    const rows: Raw[] = await this.knex('harness_records')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    return rows.map(mapRecord);
  }

  async get(id: string): Promise<HarnessRecord | null> {
    const row = await this.knex('harness_records').where({ id }).first();
    return row ? mapRecord(row) : null;
  }
}
