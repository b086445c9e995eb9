import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createVerdictClient, operatorCodeOf } from '../../src/trpc/client.js';
import { DEFAULT_REPORT_LIMITS, setReportLimits, type ReportLimits } from '../../src/reports/limits.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { TOKENS } from '../helpers/operator.js';
import { seedRun } from '../helpers/report-seed.js';

const run = promisify(execFile);

/** Noon UTC of a day, or the given hour/minute. */
const at = (day: string, hh = 12, mm = 0) =>
  Date.parse(`${day}T${String(hh).padStart(2, '0')}:${String(mm).padStart(2, '0')}:00Z`);
const sha = (c: string) => c.repeat(40);

/** A stored analysis result as the engine writes it (only the parts the report reads, plus filler). */
function result(opts: {
  head: string;
  complete?: boolean;
  resolved?: Array<{ fingerprint: string; disposition?: string }>;
  evidence?: Record<string, Array<{ path: string; quote: string }>>;
}) {
  return {
    headSha: opts.head,
    provider: 'openrouter',
    model: 'm',
    output: {
      summary: 'A summary that the report never reads. '.repeat(20),
      findings: [],
      priorFindingDispositions: (opts.resolved ?? []).map((r) => ({
        priorReviewKey: 'k',
        fingerprint: r.fingerprint,
        disposition: r.disposition ?? 'resolved',
        explanation: `closed ${r.fingerprint}`,
        evidence: (opts.evidence?.[r.fingerprint] ?? []).map((e) => ({ headSha: opts.head, ...e })),
      })),
    },
    ...(opts.complete === undefined
      ? {}
      : { coverage: { headSha: opts.head, complete: opts.complete, totalFiles: 3, files: [] } }),
    priorFindings: {
      supplied: opts.resolved?.length ?? 0,
      resolved: (opts.resolved ?? []).map((r) => ({
        fingerprint: r.fingerprint,
        disposition: r.disposition ?? 'resolved',
        explanation: `closed ${r.fingerprint}`,
      })),
      rejected: [],
      carriedOpen: [],
    },
  };
}

const CSV_TITLE = `=cmd|' /C calc'!A0`;
const CSV_BODY = 'He said "hi", then left,\nand a second line';

/**
 * The fixture: 2026-02-27 (Fri) … 2026-03-02 (Mon) crosses a month end (Feb 28 / Mar 1) and an ISO week
 * boundary (Sunday Mar 1 / Monday Mar 2); 2026-02-24 falls in the preceding equal-length period.
 */
async function seedFixture(app: RunningVerdict) {
  const { store } = app.verdict;
  const knex = store.db.knex;
  for (const [repo, number, head, title, author] of [
    ['acme/api', 1, 'b', 'Add cache', 'mona'],
    ['acme/api', 2, 'c', 'Refactor parser', 'octo'],
    ['acme/api', 3, 'd', 'Old work', 'octo'],
    ['acme/web', 7, 'e', 'Fix links', 'mona'],
  ] as const) {
    await store.pullRequests.upsert({ repo, number, headSha: sha(head), title, author });
  }

  // acme/api#1: four findings in a1; a2 raises one again and closes two (one with evidence, one without).
  const stale = {
    severity: 'blocker',
    category: 'correctness',
    fingerprint: 'fp-open',
    title: 'Stale read',
    path: 'src/cache.ts',
  };
  await seedRun(
    knex,
    {
      id: 'a1',
      repo: 'acme/api',
      pr: 1,
      head: sha('a'),
      createdAt: at('2026-02-27', 10),
      result: result({ head: sha('a'), complete: true }),
    },
    [
      stale,
      {
        severity: 'high',
        category: 'security',
        fingerprint: 'fp-gone',
        title: 'SQL injection in the query builder',
        path: 'src/db.ts',
        line: 12,
      },
      {
        severity: 'medium',
        category: 'performance',
        fingerprint: 'fp-fixed',
        title: 'Slow loop',
        path: null,
      },
      { severity: 'low', category: 'style', fingerprint: 'fp-noev', title: 'Naming', path: 'src/a.ts' },
    ],
  );
  await seedRun(
    knex,
    {
      id: 'a2',
      repo: 'acme/api',
      pr: 1,
      head: sha('b'),
      createdAt: at('2026-03-01', 9),
      verdict: 'clear',
      result: result({
        head: sha('b'),
        complete: false,
        resolved: [{ fingerprint: 'fp-fixed' }, { fingerprint: 'fp-noev' }],
        evidence: {
          'fp-fixed': [{ path: 'src/loop.ts', quote: 'for (const item of items) total += item;' }],
        },
      }),
    },
    [stale],
  );
  // acme/api#2: a review on Monday, then a failed run (not a review).
  await seedRun(
    knex,
    {
      id: 'b1',
      repo: 'acme/api',
      pr: 2,
      head: sha('c'),
      createdAt: at('2026-03-02', 8),
      result: result({ head: sha('c'), complete: true }),
    },
    [
      { severity: 'weird', category: '', fingerprint: 'fp-b1', title: 'Odd thing' },
      { severity: 'info', category: 'docs', fingerprint: '', title: 'No fingerprint', path: null },
    ],
  );
  await seedRun(knex, {
    id: 'b2',
    repo: 'acme/api',
    pr: 2,
    head: sha('c'),
    createdAt: at('2026-03-02', 10),
    status: 'failed',
    analysis: 'failed',
    verdict: null,
    result: { headSha: sha('c'), degraded: false },
  });
  // acme/web#7: Saturday night, no stored result (coverage unknown); its finding has CSV-hostile text.
  await seedRun(
    knex,
    { id: 'c1', repo: 'acme/web', pr: 7, head: sha('e'), createdAt: at('2026-02-28', 23, 30), result: null },
    [
      {
        severity: 'high',
        category: 'bug',
        fingerprint: 'fp-csv',
        title: CSV_TITLE,
        body: CSV_BODY,
        path: 'web/a,b.ts',
      },
    ],
  );
  // acme/api#3: in the preceding period only.
  await seedRun(
    knex,
    {
      id: 'd1',
      repo: 'acme/api',
      pr: 3,
      head: sha('d'),
      createdAt: at('2026-02-24', 9),
      result: result({ head: sha('d'), complete: true }),
    },
    [{ severity: 'low', category: 'tests', fingerprint: 'fp-prev', title: 'Missing test' }],
  );

  // Comments: the ledger's review/reply texts (a check run is not a comment) and a comment command.
  // A ledger row of a run, on the run's pull request.
  const ledger = async (runId: string, row: Record<string, unknown>) => {
    const { repo, pr_number } = await knex('runs').where({ id: runId }).first();
    const published = { mode: 'live', status: 'published', receipt: null, error: null };
    await knex('publications').insert({ run_id: runId, repo, pr_number, ...published, ...row });
  };
  await ledger('a1', { kind: 'review', body: 'Review of a1', created_at: at('2026-02-27', 11) });
  await ledger('a1', { kind: 'check_run', body: 'check', created_at: at('2026-02-27', 11) });
  await ledger('c1', { kind: 'reply', body: '@mona thanks', created_at: at('2026-02-28', 23, 45) });
  await ledger('a2', {
    kind: 'review',
    mode: 'shadow',
    status: 'shadowed',
    body: 'x'.repeat(2500),
    created_at: at('2026-03-01', 10),
  });
  await knex('comment_commands').insert({
    key: 'acme/api#1@99',
    repo: 'acme/api',
    pr_number: 1,
    comment_id: 99,
    verb: 'review',
    author: 'mona',
    outcome: 'enqueued',
    created_at: at('2026-03-01', 8),
    updated_at: at('2026-03-01', 8),
  });
  // Traces of a1 (30 s) and a2 (60 s).
  for (const [id, runId, start, ms] of [
    ['t1', 'a1', at('2026-02-27', 10), 30_000],
    ['t2', 'a2', at('2026-03-01', 9), 60_000],
  ] as const) {
    await knex('traces').insert({
      id,
      run_id: runId,
      repo: 'acme/api',
      pr_number: 1,
      name: 'review',
      status: 'ok',
      started_at: start,
      ended_at: start + ms,
    });
  }
}

/** RFC 4180 parser (quoted fields, doubled quotes, CRLF records). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i++;
      } else {
        field += c;
        i++;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      if (c === '\n' || c === '\r' || c === '"')
        throw new Error(`bare ${JSON.stringify(c)} outside quotes at ${i}`);
      field += c;
      i++;
    }
  }
  if (field !== '' || row.length > 0) throw new Error('the last record does not end with CRLF');
  return rows;
}

/** CSV rows as objects keyed by the header row. */
function csvObjects(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  for (const r of rows) expect(r.length).toBe(header!.length);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}

describe('operator reports (operator-api 2.7, 4.2, 7, 8)', () => {
  let app: RunningVerdict;
  let readKey: string;
  let memoryKey: string;
  beforeAll(async () => {
    app = await startVerdict({ ...TOKENS, VERDICT_WORKER_INLINE: '0', VERDICT_SCHEDULER: '0' });
    await seedFixture(app);
    const { store } = app.verdict;
    readKey = (await store.apiKeys.create({ name: 'reader', scopes: ['read'], actor: 't' })).token;
    memoryKey = (await store.apiKeys.create({ name: 'mem', scopes: ['memory:write'], actor: 't' })).token;
  });
  afterAll(() => app.stop());

  async function get(path: string, token: string | null = 'read-secret') {
    const res = await fetch(app.baseUrl + path, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    const type = res.headers.get('content-type') ?? '';
    const body = type.includes('json') ? ((await res.json()) as any) : Buffer.from(await res.arrayBuffer());
    return { status: res.status, body, headers: res.headers };
  }
  const report = async (query: string) => {
    const res = await get(`/operator/api/reports?${query}`);
    expect([query, res.status]).toEqual([query, 200]);
    return res.body;
  };
  const WINDOW = 'from=2026-02-27&to=2026-03-02';

  test('the report object: schema, echoed filters and options, source, counts', async () => {
    const r = await report(WINDOW);
    expect(r.schema).toBe('verdict.reports.v1');
    expect(Number.isNaN(Date.parse(r.generatedAt))).toBe(false);
    expect(r.ok).toBeUndefined();
    expect(r.filters).toEqual({
      repo: null,
      author: null,
      team: null,
      q: null,
      from: '2026-02-27',
      to: '2026-03-02',
      severity: null,
      status: null,
      security: 'all',
    });
    expect(r.options).toEqual({ granularity: 'day', page: 1, pageSize: 25, paginated: true });
    expect(r.period).toEqual({ from: '2026-02-27', to: '2026-03-02', bounded: true });
    expect(r.source).toMatchObject({
      scope: 'all repositories',
      runs: 6,
      heads: 5,
      findingRows: 9,
      traces: 2,
    });
    expect(r.summary).toMatchObject({
      reviewedPrs: 3,
      runs: { total: 5, reviews: 4, byStatus: { completed: 4, failed: 1 } },
      findings: {
        total: 7,
        bySeverity: { P0: 1, P1: 2, P2: 1, P3: 1, info: 1, unknown: 1 },
        byStatus: { open: 3, addressed: 1, not_reobserved: 2, unknown: 1 },
        bySecurity: { true: 1, false: 5, unknown: 1 },
        withoutPath: 2,
        withoutLine: 6,
      },
      comments: { total: 4, byKind: { review: 2, reply: 1, command: 1 } },
      verdicts: { clear: 1, 'needs-attention': 2 },
      traces: { total: 2, byStatus: { ok: 2 }, medianMs: 30_000, p90Ms: 60_000 },
    });
    expect(Object.keys(r).sort()).toEqual(
      [
        'comments',
        'comparison',
        'coverage',
        'filters',
        'findings',
        'generatedAt',
        'notes',
        'options',
        'period',
        'rankings',
        'reviewedPrs',
        'schema',
        'series',
        'source',
        'summary',
      ].sort(),
    );
  });

  test('finding status: open, addressed only with evidence, a disappeared finding is not_reobserved, unknown', async () => {
    const r = await report(`${WINDOW}&pageSize=100`);
    const byFp = Object.fromEntries(r.findings.items.map((f: any) => [f.fingerprint, f]));
    expect(byFp['fp-open']).toMatchObject({
      status: 'open',
      statusReason: 'raised_by_latest_review',
      occurrences: 2,
      resolution: null,
    });
    // Raised in a1, absent from a2 with no claim: it disappeared, which is not a fix.
    expect(byFp['fp-gone']).toMatchObject({
      status: 'not_reobserved',
      statusReason: 'absent_from_later_review',
      resolution: null,
    });
    expect(byFp['fp-fixed']).toMatchObject({
      status: 'addressed',
      statusReason: 'closure_claim_with_evidence',
      resolution: {
        runId: 'a2',
        disposition: 'resolved',
        at: new Date(at('2026-03-01', 9)).toISOString(),
        evidence: [
          { path: 'src/loop.ts', headSha: sha('b'), quote: 'for (const item of items) total += item;' },
        ],
      },
    });
    // A closure claim recorded without evidence is not enough.
    expect(byFp['fp-noev']).toMatchObject({ status: 'not_reobserved', resolution: null });
    // b2 failed (no analysis): b1 is still the latest review of #2.
    expect(byFp['fp-b1']).toMatchObject({
      status: 'open',
      severity: 'unknown',
      storedSeverity: 'weird',
      security: null,
    });
    expect(byFp['']).toMatchObject({ status: 'unknown', statusReason: 'no_fingerprint', severity: 'info' });
    expect(byFp['fp-csv']).toMatchObject({ status: 'open', path: 'web/a,b.ts', line: null });
    // Location is never invented: a null path stays null; a stored line is kept.
    expect(byFp['fp-fixed'].path).toBeNull();
    expect(byFp['fp-gone']).toMatchObject({ path: 'src/db.ts', line: 12, security: true, severity: 'P1' });
    const codes = r.notes.map((n: any) => n.code);
    expect(codes).toEqual(
      expect.arrayContaining([
        'status_rules',
        'status_unknown',
        'claims_without_evidence',
        'location_nullable',
        'severity_unknown',
        'security_heuristic',
        'coverage_unknown',
        'comments_definition',
        'shadow_publications',
      ]),
    );
    expect(r.notes.find((n: any) => n.code === 'claims_without_evidence').message).toMatch(/^1 finding/);
    for (const status of ['open', 'addressed', 'not_reobserved', 'unknown']) {
      const only = await report(`${WINDOW}&status=${status}`);
      expect([status, only.findings.total]).toEqual([status, r.summary.findings.byStatus[status]]);
      expect(only.findings.items.every((f: any) => f.status === status)).toBe(true);
    }
  });

  test('findings order and pagination (page, pageSize, totals)', async () => {
    const all = await report(`${WINDOW}&pageSize=100`);
    expect(all.findings.items.map((f: any) => f.fingerprint)).toEqual([
      'fp-open',
      'fp-csv',
      'fp-gone',
      'fp-fixed',
      'fp-noev',
      '',
      'fp-b1',
    ]);
    const page2 = await report(`${WINDOW}&page=2&pageSize=2`);
    expect(page2.findings).toMatchObject({ page: 2, pageSize: 2, total: 7 });
    expect(page2.findings.items.map((f: any) => f.fingerprint)).toEqual(['fp-gone', 'fp-fixed']);
    expect(page2.reviewedPrs).toMatchObject({ page: 2, pageSize: 2, total: 3 });
    expect(page2.reviewedPrs.items).toHaveLength(1);
    expect(page2.comments).toMatchObject({ page: 2, pageSize: 2, total: 4 });
    const beyond = await report(`${WINDOW}&page=100000&pageSize=100`);
    expect(beyond.findings).toMatchObject({ page: 100000, total: 7, items: [] });
  });

  test('series by day, ISO week and month across Feb 28 / Mar 1 and Sunday / Monday', async () => {
    const pick = (s: any) => [
      s.bucket,
      s.from,
      s.to,
      s.runs,
      s.reviews,
      s.reviewedPrs,
      s.findings,
      s.comments,
    ];
    expect((await report(WINDOW)).series.map(pick)).toEqual([
      ['2026-02-27', '2026-02-27', '2026-02-27', 1, 1, 1, 4, 1],
      ['2026-02-28', '2026-02-28', '2026-02-28', 1, 1, 1, 1, 1],
      ['2026-03-01', '2026-03-01', '2026-03-01', 1, 1, 1, 0, 2],
      ['2026-03-02', '2026-03-02', '2026-03-02', 2, 1, 1, 2, 0],
    ]);
    const weeks = await report(`${WINDOW}&granularity=week`);
    expect(weeks.series.map(pick)).toEqual([
      ['2026-W09', '2026-02-27', '2026-03-01', 3, 3, 2, 5, 4],
      ['2026-W10', '2026-03-02', '2026-03-02', 2, 1, 1, 2, 0],
    ]);
    expect(weeks.options.granularity).toBe('week');
    expect(weeks.notes.map((n: any) => n.code)).toContain('series_partial_buckets');
    const months = await report(`${WINDOW}&granularity=month`);
    expect(months.series.map(pick)).toEqual([
      ['2026-02', '2026-02-27', '2026-02-28', 2, 2, 2, 5, 2],
      ['2026-03', '2026-03-01', '2026-03-02', 3, 2, 2, 2, 2],
    ]);
    expect(months.series[0].bySeverity).toEqual({ P0: 1, P1: 2, P2: 1, P3: 1, info: 0, unknown: 0 });
    // Without from/to the series spans the data, and there is no comparison.
    const open = await report('granularity=month');
    expect(open.series.map((s: any) => s.bucket)).toEqual(['2026-02', '2026-03']);
    expect(open.period).toEqual({ from: '2026-02-24', to: '2026-03-02', bounded: false });
    expect(open.comparison).toBeNull();
    expect(open.notes.map((n: any) => n.code)).toContain('comparison_unavailable');
    expect(open.summary.findings.total).toBe(8);
  });

  test('comparison with the preceding period of equal length', async () => {
    const r = await report(WINDOW);
    expect(r.comparison.current).toMatchObject({ from: '2026-02-27', to: '2026-03-02', reviewedPrs: 3 });
    expect(r.comparison.previous).toMatchObject({
      from: '2026-02-23',
      to: '2026-02-26',
      reviewedPrs: 1,
      runs: { total: 1, reviews: 1 },
      findings: { total: 1, bySeverity: { P3: 1 }, byStatus: { open: 1 } },
      comments: { total: 0 },
    });
    expect(r.comparison.change).toEqual({
      reviewedPrs: { delta: 2, ratio: 2 },
      runs: { delta: 4, ratio: 4 },
      findings: { delta: 6, ratio: 6 },
      comments: { delta: 4, ratio: null },
    });
    // One day: the preceding period is the day before.
    const oneDay = await report('from=2026-03-02&to=2026-03-02');
    expect(oneDay.comparison.previous).toMatchObject({
      from: '2026-03-01',
      to: '2026-03-01',
      reviewedPrs: 1,
    });
    expect((await report('from=2026-03-02')).comparison).toBeNull();
    expect((await report('to=2026-03-02')).comparison).toBeNull();
  });

  test('rankings, coverage and reviewed pull requests', async () => {
    const r = await report(WINDOW);
    expect(r.rankings.repositories.items).toEqual([
      { repo: 'acme/api', reviewedPrs: 2, findings: 6, p0p1: 2, open: 2, installed: null, enabled: null },
      { repo: 'acme/web', reviewedPrs: 1, findings: 1, p0p1: 1, open: 1, installed: null, enabled: null },
    ]);
    expect(r.rankings.authors.items).toEqual([
      { author: 'mona', reviewedPrs: 2, findings: 5, p0p1: 3 },
      { author: 'octo', reviewedPrs: 1, findings: 2, p0p1: 0 },
    ]);
    expect(r.rankings.categories.total).toBe(7);
    // Ties (one finding each) go to the most P0/P1 findings, then the name.
    expect(r.rankings.categories.items.slice(0, 3).map((c: any) => c.category)).toEqual([
      'bug',
      'correctness',
      'security',
    ]);
    expect(r.rankings.categories.items[0]).toEqual({
      category: 'bug',
      findings: 1,
      p0p1: 1,
      security: false,
    });
    expect(r.rankings.categories.items.find((c: any) => c.category === 'security')).toEqual({
      category: 'security',
      findings: 1,
      p0p1: 1,
      security: true,
    });
    // Files: only findings with a path; the same path in two repositories would be two rows.
    expect(r.rankings.files.total).toBe(5);
    expect(r.rankings.files.items.slice(0, 3)).toEqual([
      { repo: 'acme/api', path: 'src/cache.ts', findings: 1, p0p1: 1 },
      { repo: 'acme/api', path: 'src/db.ts', findings: 1, p0p1: 1 },
      { repo: 'acme/web', path: 'web/a,b.ts', findings: 1, p0p1: 1 },
    ]);
    expect(r.coverage).toEqual({
      basis: 'the latest analysed run in the period of each reviewed pull request',
      reviewedPrs: 3,
      complete: 1,
      incomplete: 1,
      unknown: 1,
      completeShare: 0.3333,
      completeShareOfKnown: 0.5,
    });
    const pr1 = r.reviewedPrs.items.find((p: any) => p.number === 1);
    expect(pr1).toMatchObject({
      repo: 'acme/api',
      title: 'Add cache',
      author: 'mona',
      runs: 2,
      reviews: 2,
      latestReview: { runId: 'a2', verdict: 'clear', coverage: 'incomplete' },
      findings: { total: 4, open: 1, addressed: 1, not_reobserved: 2, unknown: 0 },
    });
    expect(r.reviewedPrs.items.map((p: any) => `${p.repo}#${p.number}`)).toEqual([
      'acme/api#2',
      'acme/api#1',
      'acme/web#7',
    ]);
  });

  test('filters: repo, author (any case), team (no data), q, severity, security', async () => {
    const api = await report(`${WINDOW}&repo=acme/api`);
    expect(api.source.scope).toBe('repository acme/api');
    expect(api.findings.total).toBe(6);
    expect(api.reviewedPrs.total).toBe(2);
    const mona = await report(`${WINDOW}&author=MONA`);
    expect(mona.reviewedPrs.items.map((p: any) => p.number).sort()).toEqual([1, 7]);
    expect(mona.findings.total).toBe(5);
    const team = await report(`${WINDOW}&team=backend`);
    expect(team.findings.total).toBe(0);
    expect(team.reviewedPrs.total).toBe(0);
    expect(team.notes.map((n: any) => n.code)).toContain('team_unknown');
    const cache = await report(`${WINDOW}&q=cache`);
    expect(cache.findings.total).toBe(4); // every finding of "Add cache"
    expect(cache.reviewedPrs.items.map((p: any) => p.number)).toEqual([1]);
    const injection = await report(`${WINDOW}&q=Injection`);
    expect(injection.findings.items.map((f: any) => f.fingerprint)).toEqual(['fp-gone']);
    expect(injection.reviewedPrs.total).toBe(1);
    expect(
      (await report(`${WINDOW}&severity=unknown`)).findings.items.map((f: any) => f.fingerprint),
    ).toEqual(['fp-b1']);
    expect((await report(`${WINDOW}&severity=P1`)).findings.total).toBe(2);
    expect((await report(`${WINDOW}&security=true`)).findings.items.map((f: any) => f.fingerprint)).toEqual([
      'fp-gone',
    ]);
    expect(
      (await report(`${WINDOW}&security=unknown`)).findings.items.map((f: any) => f.fingerprint),
    ).toEqual(['fp-b1']);
    expect((await report(`${WINDOW}&security=false`)).findings.total).toBe(5);
    expect((await report(`${WINDOW}&security=all`)).findings.total).toBe(7);
    const empty = await report('q=&author=');
    expect(empty.filters).toMatchObject({ q: null, author: null });
  });

  test('comments: ledger texts and comment commands, newest first, bodies cut at 2000 characters', async () => {
    const r = await report(WINDOW);
    expect(
      r.comments.items.map((c: any) => [c.id.split(':')[0], c.kind, c.origin, c.mode, c.status]),
    ).toEqual([
      ['ledger', 'review', 'verdict', 'shadow', 'shadowed'],
      ['command', 'command', 'user', null, 'enqueued'],
      ['ledger', 'reply', 'verdict', 'live', 'published'],
      ['ledger', 'review', 'verdict', 'live', 'published'],
    ]);
    expect(r.comments.items[0]).toMatchObject({ bodyTruncated: true, bodyLength: 2500 });
    expect(r.comments.items[0].body).toHaveLength(2000);
    expect(r.comments.items[1]).toMatchObject({ author: 'mona', verb: 'review', body: null });
  });

  test('every parameter rule: 400 invalid_request / invalid_parameter naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['foo=1', 'foo'],
      ['repo=acme/api&repo=acme/web', 'repo'],
      ['from=2026-03-01&from=2026-03-01', 'from'],
      ['repo=nope', 'repo'],
      [`repo=a/${'b'.repeat(299)}`, 'repo'],
      [`author=${'x'.repeat(301)}`, 'author'],
      [`team=${'x'.repeat(301)}`, 'team'],
      [`q=${'x'.repeat(301)}`, 'q'],
      ['author=a%00b', 'author'],
      ['from=2026-02-30', 'from'],
      ['from=2026-3-1', 'from'],
      ['to=yesterday', 'to'],
      ['from=2026-03-02&to=2026-03-01', 'from'],
      ['granularity=year', 'granularity'],
      ['severity=P4', 'severity'],
      ['severity=p0', 'severity'],
      ['status=fixed', 'status'],
      ['security=yes', 'security'],
      ['page=0', 'page'],
      ['page=100001', 'page'],
      ['page=1.5', 'page'],
      ['page=abc', 'page'],
      ['pageSize=0', 'pageSize'],
      ['pageSize=101', 'pageSize'],
      ['pageSize=', 'pageSize'],
    ];
    for (const path of ['/operator/api/reports', '/operator/api/reports/export']) {
      for (const [query, name] of cases) {
        const res = await get(`${path}?${query}`);
        expect([path, query, res.status]).toEqual([path, query, 400]);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'message']);
        expect(res.body).toMatchObject({ error: 'invalid_request', code: 'invalid_parameter' });
        expect([query, res.body.message]).toEqual([query, expect.stringContaining(`parameter ${name}`)]);
      }
    }
    // The edges are accepted.
    for (const ok of [
      'page=100000',
      'pageSize=100',
      'pageSize=1',
      `q=${'x'.repeat(300)}`,
      'from=2024-02-29&to=2024-02-29',
    ]) {
      expect([ok, (await get(`/operator/api/reports?${ok}`)).status]).toEqual([ok, 200]);
    }
  });

  test('authentication: 401 without or with a wrong token, a read key may read, other keys 403', async () => {
    for (const path of ['/operator/api/reports', '/operator/api/reports/export']) {
      for (const token of [null, 'wrong', 'admin-secret', 'command-secret', 'bridge-secret']) {
        const res = await get(path, token);
        expect([path, token, res.status]).toEqual([path, token, 401]);
        expect(res.body).toEqual({ ok: false, error: 'unauthorized' });
      }
      expect((await get(path, memoryKey)).status).toBe(403);
      expect((await get(`${path}?${WINDOW}`, readKey)).status).toBe(200);
    }
  });

  test('413 report_too_large over each source bound; narrowing by repository gets under it', async () => {
    const bounds: Array<[keyof ReportLimits, number]> = [
      ['runs', 5],
      ['heads', 4],
      ['ledgerRows', 3],
      ['traces', 1],
      ['findings', 8],
      ['findingsPerRun', 3],
      ['findingsPerPr', 4],
      ['inputBytes', 500],
    ];
    for (const [bound, limit] of bounds) {
      const restore = setReportLimits({ [bound]: limit });
      try {
        const res = await get(`/operator/api/reports?${WINDOW}`);
        expect([bound, res.status]).toEqual([bound, 413]);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'message']);
        expect(res.body).toMatchObject({ error: 'report_too_large', code: 'report_too_large' });
        expect(res.body.message).toContain(`at most ${limit}`);
        expect(res.body.message).toContain('repo=owner/name');
      } finally {
        restore();
      }
    }
    // configs: two repository rows, a bound of 1.
    await app.verdict.store.db.knex('repositories').insert(
      ['acme/api', 'acme/web'].map((full) => ({
        full_name: full,
        owner: 'acme',
        name: full.split('/')[1],
        installed: true,
        config: JSON.stringify({ enabled: full === 'acme/api' }),
        created_at: 1,
        updated_at: 1,
      })),
    );
    const restore = setReportLimits({ configs: 1, findings: 2 });
    try {
      expect((await get(`/operator/api/reports?${WINDOW}`)).status).toBe(413);
      // acme/web alone has one configuration and one finding: the same report, narrowed, is answered.
      const web = await get(`/operator/api/reports?${WINDOW}&repo=acme/web`);
      expect(web.status).toBe(200);
      expect(web.body.findings.total).toBe(1);
      expect(web.body.rankings.repositories.items[0]).toMatchObject({
        repo: 'acme/web',
        installed: true,
        enabled: false,
      });
    } finally {
      restore();
    }
    // The series bound is real at its default: 9,862 days is over 5,000 points.
    const long = await get('/operator/api/reports?from=2000-01-01&to=2026-12-31');
    expect(long.status).toBe(413);
    expect(long.body).toMatchObject({ error: 'report_too_large', code: 'report_too_large' });
    expect(long.body.message).toContain('granularity=week or month');
    expect((await get('/operator/api/reports?from=2000-01-01&to=2026-12-31&granularity=month')).status).toBe(
      200,
    );
  });

  test('the ZIP export: members, CSV parsed back, formula protection, every item despite pageSize', async () => {
    const res = await get(`/operator/api/reports/export?${WINDOW}&pageSize=1&page=3`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="verdict-report-\d{8}T\d{6}Z\.zip"$/,
    );
    expect(Number(res.headers.get('content-length'))).toBe((res.body as Buffer).length);
    const dir = mkdtempSync(join(tmpdir(), 'verdict-report-'));
    try {
      const zipPath = join(dir, 'report.zip');
      writeFileSync(zipPath, res.body as Buffer);
      const listing = await run('/usr/bin/unzip', ['-l', zipPath]);
      for (const name of ['report.json', 'findings.csv', 'reviewed-prs.csv', 'comments.csv']) {
        expect(listing.stdout).toContain(name);
      }
      await run('/usr/bin/unzip', ['-o', zipPath, '-d', join(dir, 'out')]);
      const read = (name: string) => readFileSync(join(dir, 'out', name), 'utf8');
      const json = JSON.parse(read('report.json'));
      expect(json.schema).toBe('verdict.reports.v1');
      expect(json.options).toEqual({ granularity: 'day', page: null, pageSize: null, paginated: false });
      expect(json.findings).toMatchObject({ page: 1, pageSize: 7, total: 7 });
      expect(json.findings.items).toHaveLength(7);
      expect(json.reviewedPrs.items).toHaveLength(3);
      expect(json.comments.items).toHaveLength(4);
      const restReport = (await get(`/operator/api/reports?${WINDOW}`)).body;
      expect({ ...json.summary }).toEqual(restReport.summary);
      expect(json.series).toEqual(restReport.series);

      const findingsCsv = read('findings.csv');
      expect(findingsCsv.endsWith('\r\n')).toBe(true);
      const findings = csvObjects(findingsCsv);
      expect(findings).toHaveLength(7);
      expect(findings.map((f) => f.fingerprint)).toEqual(json.findings.items.map((f: any) => f.fingerprint));
      const hostile = findings.find((f) => f.fingerprint === 'fp-csv')!;
      expect(hostile.title).toBe(`'${CSV_TITLE}`); // formula protection
      expect(hostile.body).toBe(CSV_BODY); // quotes, comma, newline survive
      expect(hostile.path).toBe('web/a,b.ts');
      expect(hostile.line).toBe('');
      expect(hostile.security).toBe('false');
      expect(findings.find((f) => f.fingerprint === 'fp-b1')!.security).toBe('unknown');
      expect(findings.find((f) => f.fingerprint === 'fp-fixed')).toMatchObject({
        status: 'addressed',
        resolution_run_id: 'a2',
        resolution_evidence_paths: 'src/loop.ts',
        path: '',
      });
      const prs = csvObjects(read('reviewed-prs.csv'));
      expect(prs.map((p) => `${p.repo}#${p.number}`)).toEqual(['acme/api#2', 'acme/api#1', 'acme/web#7']);
      expect(prs[1]).toMatchObject({
        coverage: 'incomplete',
        findings: '4',
        addressed: '1',
        not_reobserved: '2',
      });
      const comments = csvObjects(read('comments.csv'));
      expect(comments).toHaveLength(4);
      expect(comments.find((c) => c.kind === 'reply')!.body).toBe(`'@mona thanks`);
      expect(comments[0]).toMatchObject({ body_truncated: 'true', body_length: '2500' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the export over 20 MiB (here: a lowered bound) is a JSON 413 before any ZIP byte', async () => {
    expect(DEFAULT_REPORT_LIMITS.exportBytes).toBe(20 * 1024 * 1024);
    const restore = setReportLimits({ exportBytes: 1000 });
    try {
      const res = await get(`/operator/api/reports/export?${WINDOW}`);
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.body).toMatchObject({ error: 'report_too_large', code: 'report_too_large' });
      expect(res.body.message).toContain('1000 bytes');
    } finally {
      restore();
    }
  });

  test('the tRPC reports query answers what REST answers, with the same validation and bounds', async () => {
    const client = createVerdictClient({ baseUrl: app.baseUrl, token: 'read-secret' });
    const viaTrpc = await client.reports.query({
      from: '2026-02-27',
      to: '2026-03-02',
      granularity: 'week',
      pageSize: 3,
    });
    const viaRest = await report(`${WINDOW}&granularity=week&pageSize=3`);
    expect({ ...viaTrpc, generatedAt: 0 }).toEqual({ ...viaRest, generatedAt: 0 });
    const keyed = createVerdictClient({ baseUrl: app.baseUrl, token: readKey });
    expect((await keyed.reports.query({ repo: 'acme/web' })).findings.total).toBe(1);
    const refusal = async (call: Promise<unknown>) => {
      try {
        await call;
      } catch (error) {
        return { httpStatus: (error as any).data?.httpStatus, code: operatorCodeOf(error) };
      }
      throw new Error('expected a refusal');
    };
    expect(await refusal(client.reports.query({ pageSize: 101 }))).toMatchObject({ httpStatus: 400 });
    expect(await refusal(client.reports.query({ from: '2026-03-02', to: '2026-03-01' }))).toMatchObject({
      httpStatus: 400,
    });
    expect(await refusal(client.reports.query({ bogus: 1 } as any))).toMatchObject({ httpStatus: 400 });
    expect(
      await refusal(createVerdictClient({ baseUrl: app.baseUrl, token: memoryKey }).reports.query({})),
    ).toMatchObject({ httpStatus: 403 });
    const restore = setReportLimits({ findings: 1 });
    try {
      expect(await refusal(client.reports.query({}))).toEqual({ httpStatus: 413, code: 'report_too_large' });
    } finally {
      restore();
    }
  });

  test('scripts/export-report.ts writes the same export from the store, or from a running server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-report-cli-'));
    try {
      const config = app.verdict.config.store;
      if (config.client !== 'sqlite') throw new Error('expected SQLite');
      const env = { ...process.env, VERDICT_DB_PATH: config.filename, LOG_LEVEL: 'silent' as const };
      const direct = join(dir, 'direct.zip');
      const out = await run(
        'npx',
        [
          'tsx',
          'scripts/export-report.ts',
          '--out',
          direct,
          '--from',
          '2026-02-27',
          '--to',
          '2026-03-02',
          '--repo',
          'acme/api',
        ],
        { env },
      );
      expect(out.stdout).toMatch(/wrote .*direct\.zip .*6 finding\(s\), 2 reviewed pull request\(s\)/);
      await run('/usr/bin/unzip', ['-o', direct, '-d', join(dir, 'direct')]);
      expect(csvObjects(readFileSync(join(dir, 'direct', 'findings.csv'), 'utf8'))).toHaveLength(6);

      const served = join(dir, 'served.zip');
      await run(
        'npx',
        ['tsx', 'scripts/export-report.ts', '--out', served, '--url', app.baseUrl, '--severity', 'P1'],
        {
          env: { ...env, VERDICT_OPERATOR_READ_TOKEN: readKey },
        },
      );
      await run('/usr/bin/unzip', ['-o', served, '-d', join(dir, 'served')]);
      const json = JSON.parse(readFileSync(join(dir, 'served', 'report.json'), 'utf8'));
      expect(json.filters.severity).toBe('P1');
      expect(json.findings.items.map((f: any) => f.fingerprint).sort()).toEqual(['fp-csv', 'fp-gone']);

      const bad = await run(
        'npx',
        ['tsx', 'scripts/export-report.ts', '--out', join(dir, 'x.zip'), '--from', '2026-13-01'],
        { env },
      ).then(
        () => null,
        (e: any) => e,
      );
      expect(bad?.code).toBe(1);
      expect(bad?.stderr).toContain('invalid_parameter');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  // Last: it leaves a run over a default bound in the store.
  test('the real default bound of 1,000 findings in one run: 413, and other repositories still answer', async () => {
    const knex = app.verdict.store.db.knex;
    await seedRun(knex, { id: 'big', repo: 'acme/big', pr: 1, head: sha('f'), createdAt: at('2026-03-01') });
    const rows = Array.from({ length: DEFAULT_REPORT_LIMITS.findingsPerRun + 1 }, (_, i) => ({
      run_id: 'big',
      review_key: 'acme/big#1',
      repo: 'acme/big',
      pr_number: 1,
      severity: 'low',
      category: 'style',
      title: `Nit ${i}`,
      body: 'b',
      fingerprint: `fp-big-${i}`,
      outside_diff: false,
      created_at: at('2026-03-01'),
    }));
    for (let i = 0; i < rows.length; i += 200) await knex('findings').insert(rows.slice(i, i + 200));
    for (const query of ['', 'repo=acme/big']) {
      const res = await get(`/operator/api/reports?${query}`);
      expect([query, res.status]).toEqual([query, 413]);
      expect(res.body).toMatchObject({ error: 'report_too_large', code: 'report_too_large' });
      expect(res.body.message).toContain('1001 findings in one run');
      expect(res.body.message).toContain('at most 1000');
    }
    expect((await get('/operator/api/reports/export')).status).toBe(413);
    expect((await get('/operator/api/reports?repo=acme/web')).status).toBe(200);
  });
});
