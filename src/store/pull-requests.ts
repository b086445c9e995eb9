import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { numberOrNull, parseJson, toBool, type ShownWrites } from './db.js';

export type PullRequestRecord = {
  repo: string;
  number: number;
  headSha: string | null;
  baseRef: string | null;
  headRef: string | null;
  title: string | null;
  body: string | null;
  author: string | null;
  draft: boolean;
  labels: string[];
  state: string | null;
  changedFiles: number | null;
  installationId: number | null;
  createdAt: number;
  updatedAt: number;
};

export type PullRequestUpsert = Partial<
  Omit<PullRequestRecord, 'repo' | 'number' | 'createdAt' | 'updatedAt'>
> & {
  repo: string;
  number: number;
};

type Raw = Record<string, unknown>;

function mapPr(row: Raw): PullRequestRecord {
  return {
    repo: String(row.repo),
    number: Number(row.number),
    headSha: (row.head_sha as string | null) ?? null,
    baseRef: (row.base_ref as string | null) ?? null,
    headRef: (row.head_ref as string | null) ?? null,
    title: (row.title as string | null) ?? null,
    body: (row.body as string | null) ?? null,
    author: (row.author as string | null) ?? null,
    draft: toBool(row.draft),
    labels: parseJson<string[]>(row.labels, []),
    state: (row.state as string | null) ?? null,
    changedFiles: numberOrNull(row.changed_files),
    installationId: row.installation_id === null ? null : Number(row.installation_id),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const COLUMNS: Record<string, string> = {
  headSha: 'head_sha',
  baseRef: 'base_ref',
  headRef: 'head_ref',
  title: 'title',
  body: 'body',
  author: 'author',
  draft: 'draft',
  labels: 'labels',
  state: 'state',
  changedFiles: 'changed_files',
  installationId: 'installation_id',
};

export class PullRequestStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly shown: ShownWrites,
  ) {}

  async get(
    repo: string,
    number: number,
    trx: Knex | Knex.Transaction = this.knex,
  ): Promise<PullRequestRecord | null> {
    const row = await trx('pull_requests').where({ repo, number }).first();
    return row ? mapPr(row) : null;
  }

  /** Inserts or updates the stored PR; only the fields given are written. */
  async upsert(input: PullRequestUpsert, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    const now = this.clock.now();
    const values: Record<string, unknown> = {};
    for (const [field, column] of Object.entries(COLUMNS)) {
      const value = (input as Record<string, unknown>)[field];
      if (value === undefined) continue;
      values[column] = field === 'labels' ? JSON.stringify(value) : value;
    }
    await trx('pull_requests')
      .insert({ repo: input.repo, number: input.number, ...values, created_at: now, updated_at: now })
      .onConflict(['repo', 'number'])
      .merge({ ...values, updated_at: now });
    this.shown.wrote();
  }
}
