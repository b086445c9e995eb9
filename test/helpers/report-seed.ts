import type { Knex } from 'knex';

/** A run row of the report's source history. */
export type RunSeed = {
  id: string;
  repo: string;
  pr: number;
  head: string;
  createdAt: number;
  status?: string;
  analysis?: string;
  verdict?: string | null;
  /** The stored result; `null` stores none. */
  result?: unknown;
};

/** A finding row of that run. */
export type FindingSeed = {
  severity: string;
  category: string;
  fingerprint: string;
  title: string;
  body?: string;
  path?: string | null;
  line?: number | null;
};

/** Inserts a run and its findings as the store holds them (the report reads these rows). */
export async function seedRun(knex: Knex, r: RunSeed, findings: FindingSeed[] = []) {
  const reviewKey = `${r.repo}#${r.pr}@${r.head}:${r.id}`;
  await knex('runs').insert({
    id: r.id,
    review_key: reviewKey,
    repo: r.repo,
    pr_number: r.pr,
    head_sha: r.head,
    trigger: 'synchronize',
    status: r.status ?? 'completed',
    analysis_status: r.analysis ?? 'analysed',
    publish_status: 'published',
    verdict: r.verdict === undefined ? 'needs-attention' : r.verdict,
    confidence: 4,
    result: r.result === null || r.result === undefined ? null : JSON.stringify(r.result),
    created_at: r.createdAt,
    updated_at: r.createdAt,
  });
  for (const f of findings) {
    await knex('findings').insert({
      run_id: r.id,
      review_key: reviewKey,
      repo: r.repo,
      pr_number: r.pr,
      head_sha: r.head,
      severity: f.severity,
      category: f.category,
      path: f.path === undefined ? 'src/x.ts' : f.path,
      line: f.line ?? null,
      title: f.title,
      body: f.body ?? 'Body.',
      fingerprint: f.fingerprint,
      outside_diff: false,
      created_at: r.createdAt,
    });
  }
}
