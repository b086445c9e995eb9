import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { parseJson } from './db.js';

/** A saved Test Lab run: what a corpus run measured, with every case's result. */
export type TestLabRecord = {
  id: string;
  name: string;
  provider: string;
  model: string;
  promptVersion: string;
  commit: string | null;
  judge: { provider: string; model: string } | null;
  scores: Record<string, unknown>;
  cases: Array<Record<string, unknown>>;
  actor: string;
  createdAt: number;
};

/** A record without its per-case detail (the list of runs). */
export type TestLabSummary = Omit<TestLabRecord, 'cases'> & { caseCount: number };

type Raw = Record<string, unknown>;

function mapRecord(row: Raw): TestLabRecord {
  return {
    id: String(row.id),
    name: String(row.name),
    provider: String(row.provider),
    model: String(row.model),
    promptVersion: String(row.prompt_version),
    commit: row.commit === null || row.commit === undefined ? null : String(row.commit),
    judge: parseJson(row.judge, null),
    scores: parseJson<Record<string, unknown>>(row.scores, {}),
    cases: parseJson<Array<Record<string, unknown>>>(row.cases, []),
    actor: String(row.actor),
    createdAt: Number(row.created_at),
  };
}

export class TestLabStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  async save(input: Omit<TestLabRecord, 'createdAt'>): Promise<TestLabRecord> {
    const row = {
      id: input.id,
      name: input.name,
      provider: input.provider,
      model: input.model,
      prompt_version: input.promptVersion,
      commit: input.commit,
      judge: input.judge === null ? null : JSON.stringify(input.judge),
      scores: JSON.stringify(input.scores),
      cases: JSON.stringify(input.cases),
      actor: input.actor,
      created_at: this.clock.now(),
    };
    await this.knex('testlab_runs').insert(row);
    return mapRecord(row);
  }

  /** Newest first, without the per-case detail. */
  async list(limit = 50): Promise<TestLabSummary[]> {
    const rows: Raw[] = await this.knex('testlab_runs')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    return rows.map((row) => {
      const { cases, ...rest } = mapRecord(row);
      return { ...rest, caseCount: cases.length };
    });
  }

  async get(id: string): Promise<TestLabRecord | null> {
    const row = await this.knex('testlab_runs').where({ id }).first();
    return row ? mapRecord(row) : null;
  }
}
