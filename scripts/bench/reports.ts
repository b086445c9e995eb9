/**
 * Reports benchmark: a SQLite store at the report's source bounds (operator-api 8): 10,000 runs (10,000
 * reviewed heads) over 2,500 pull requests in 20 repositories, 30,000 findings, 10,000 review texts and
 * 2,000 comment commands in the ledger, 10,000 traces. Verdict serves it (in this process, on a loopback
 * port); the report (`GET /operator/api/reports`, every repository, a from/to window so the comparison is
 * built too) and the ZIP export are requested a few times each. Prints the median and worst times, the
 * sizes, and the peak memory (RSS and heap, sampled every 5 ms), and whether the targets are met: the
 * report under 1 s, the export under 3 s.
 *
 *   npm run bench:reports [-- --runs 5] [-- --db /tmp/reports.sqlite]
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomId, systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { buildReport } from '../../src/reports/build.js';
import { reportLimits } from '../../src/reports/limits.js';
import { parseReportParams } from '../../src/reports/params.js';
import { createVerdict } from '../../src/compose/server.js';
import { openStore } from '../../src/store/index.js';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS_PER_MEASURE = Number(option('--runs') ?? 5) || 5;
const KEEP_DB = option('--db');

const RUNS = 10_000;
const FINDINGS_PER_RUN = 3;
const PRS = 2_500;
const REPOS = 20;
const COMMANDS = 2_000;
const TOKEN = 'bench-read-token';
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);

const repoOf = (pr: number) => `bench-org/repo-${pr % REPOS}`;
const numberOf = (pr: number) => 1 + Math.floor(pr / REPOS);
const sha = (n: number) => n.toString(16).padStart(40, '0');
const SEVERITIES = ['blocker', 'high', 'medium', 'low', 'high', 'medium'];
const CATEGORIES = ['correctness', 'security', 'performance', 'style', 'bug', 'maintainability', 'general'];

async function seed(file: string): Promise<void> {
  const store = await openStore(
    { client: 'sqlite', filename: file },
    { clock: systemClock, ids: randomId, dedupeTtlSeconds: 604800 },
  );
  const knex = store.db.knex;
  const insert = async (table: string, rows: Array<Record<string, unknown>>) => {
    await knex.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += 200) await trx(table).insert(rows.slice(i, i + 200));
    });
  };
  await insert(
    'repositories',
    Array.from({ length: REPOS }, (_, r) => ({
      full_name: `bench-org/repo-${r}`,
      owner: 'bench-org',
      name: `repo-${r}`,
      installed: true,
      config: JSON.stringify({ enabled: r % 5 !== 0 }),
      created_at: START,
      updated_at: START,
    })),
  );
  await insert(
    'pull_requests',
    Array.from({ length: PRS }, (_, pr) => ({
      repo: repoOf(pr),
      number: numberOf(pr),
      head_sha: sha(pr * 4 + 3),
      title: `Change ${pr}: ${pr % 2 ? 'cache the parser output' : 'rework the HTTP client'}`,
      body: 'A pull request description. '.repeat(40),
      author: `dev-${pr % 97}`,
      state: pr % 3 ? 'open' : 'closed',
      created_at: START,
      updated_at: START,
    })),
  );
  const runs: Array<Record<string, unknown>> = [];
  const findings: Array<Record<string, unknown>> = [];
  const ledger: Array<Record<string, unknown>> = [];
  const traces: Array<Record<string, unknown>> = [];
  for (let r = 0; r < RUNS; r++) {
    const pr = r % PRS;
    const attempt = Math.floor(r / PRS); // 0..3: four reviews of each PR, one head each
    const head = sha(pr * 4 + attempt);
    const key = `${repoOf(pr)}#${numberOf(pr)}@${head}`;
    const at = START + Math.floor((pr / PRS) * 80 * DAY) + attempt * 3 * DAY + (r % 86) * 1000;
    // Each review keeps the first finding, drops the second (claimed resolved, with evidence, every
    // other time) and adds a new one.
    const fps = [`fp-${pr}-keep`, `fp-${pr}-${attempt}-a`, `fp-${pr}-${attempt}-b`];
    const resolved = attempt > 0 && pr % 2 === 0 ? [`fp-${pr}-${attempt - 1}-a`] : [];
    const result = {
      headSha: head,
      provider: 'openrouter',
      model: 'bench/model',
      output: {
        overview: 'An overview of the change. '.repeat(10),
        summary: 'What changed and why it matters. '.repeat(15),
        verdict: 'needs-attention',
        findings: fps.map((fp) => ({ title: fp, body: 'see findings table' })),
        priorFindingDispositions: resolved.map((fp) => ({
          priorReviewKey: key,
          fingerprint: fp,
          disposition: 'resolved',
          explanation: 'The loop now checks the bound.',
          evidence: [
            { headSha: head, path: 'src/module.ts', quote: 'if (index >= items.length) return null;' },
          ],
        })),
      },
      coverage: {
        headSha: head,
        complete: r % 7 !== 0,
        totalFiles: 12,
        analysed: 12,
        files: Array.from({ length: 12 }, (_, f) => ({ path: `src/module-${f}.ts`, state: 'analysed' })),
      },
      warnings: [],
      priorFindings: {
        supplied: attempt > 0 ? 3 : 0,
        resolved: resolved.map((fp) => ({ fingerprint: fp, disposition: 'resolved', explanation: 'fixed' })),
        rejected: [],
        carriedOpen: [],
      },
    };
    runs.push({
      id: `run-${r}`,
      review_key: key,
      repo: repoOf(pr),
      pr_number: numberOf(pr),
      head_sha: head,
      trigger: 'synchronize',
      status: 'completed',
      analysis_status: r % 50 === 0 ? 'degraded' : 'analysed',
      publish_status: 'published',
      verdict: r % 4 ? 'needs-attention' : 'clear',
      confidence: 1 + (r % 5),
      result: JSON.stringify(result),
      installation_id: 1,
      created_at: at,
      updated_at: at,
    });
    fps.forEach((fp, f) => {
      findings.push({
        run_id: `run-${r}`,
        review_key: key,
        repo: repoOf(pr),
        pr_number: numberOf(pr),
        head_sha: head,
        severity: SEVERITIES[(r + f) % SEVERITIES.length],
        category: CATEGORIES[(r + f) % CATEGORIES.length],
        path: f === 2 && r % 3 === 0 ? null : `src/module-${(r + f) % 40}.ts`,
        line: null,
        title: `Finding ${fp}: the bound is not checked`,
        body: 'The loop reads past the end of the array when the input is empty; check the bound first. '.repeat(
          3,
        ),
        fingerprint: fp,
        outside_diff: false,
        still_open: f === 0 && attempt > 0,
        created_at: at,
      });
    });
    ledger.push({
      run_id: `run-${r}`,
      repo: repoOf(pr),
      pr_number: numberOf(pr),
      kind: 'review',
      mode: 'live',
      status: 'published',
      body: 'Verdict review: needs attention. Three findings, one blocker. '.repeat(6),
      created_at: at + 60_000,
    });
    ledger.push({
      run_id: `run-${r}`,
      repo: repoOf(pr),
      pr_number: numberOf(pr),
      kind: 'check_run',
      mode: 'live',
      status: 'published',
      body: null,
      created_at: at + 60_000,
    });
    traces.push({
      id: `trace-${r}`,
      run_id: `run-${r}`,
      review_key: key,
      repo: repoOf(pr),
      pr_number: numberOf(pr),
      name: 'review',
      status: r % 40 === 0 ? 'error' : 'ok',
      started_at: at,
      ended_at: at + 20_000 + (r % 30) * 1000,
    });
  }
  await insert('runs', runs);
  await insert('findings', findings);
  await insert('publications', ledger);
  await insert('traces', traces);
  await insert(
    'comment_commands',
    Array.from({ length: COMMANDS }, (_, c) => ({
      key: `${repoOf(c % PRS)}#${numberOf(c % PRS)}@${1000 + c}`,
      repo: repoOf(c % PRS),
      pr_number: numberOf(c % PRS),
      comment_id: 1000 + c,
      verb: 'review',
      author: `dev-${c % 97}`,
      outcome: 'enqueued',
      created_at: START + c * 3_600_000,
      updated_at: START + c * 3_600_000,
    })),
  );
  await store.close();
}

/** Peak RSS and heap while `fn` runs (sampled every 5 ms, plus before and after). */
async function withPeak<T>(fn: () => Promise<T>): Promise<{ value: T; rss: number; heap: number }> {
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  };
  sample();
  const timer = setInterval(sample, 5);
  try {
    const value = await fn();
    sample();
    return { value, rss, heap };
  } finally {
    clearInterval(timer);
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = KEEP_DB ? null : mkdtempSync(join(tmpdir(), 'verdict-bench-reports-'));
  const file = KEEP_DB ?? join(dir!, 'verdict.sqlite');
  const seedStart = performance.now();
  const seeded = !existsSync(file);
  if (seeded) await seed(file);
  const seedMs = performance.now() - seedStart;

  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    VERDICT_DB_PATH: file,
    VERDICT_OPERATOR_READ_TOKEN: TOKEN,
    VERDICT_WORKER_INLINE: '0',
    VERDICT_SCHEDULER: '0',
    VERDICT_OPERATOR_CACHE_MS: '0',
  });
  const verdict = await createVerdict(config, { log: createLogger('silent'), reviewExecutor: null });
  const port = await verdict.listen();
  const base = `http://127.0.0.1:${port}`;
  const query = 'from=2026-01-01&to=2026-03-31&granularity=week';
  const headers = { authorization: `Bearer ${TOKEN}` };
  try {
    // The parts, once, for orientation: source read vs build.
    const filters = parseReportParams(Object.fromEntries(new URLSearchParams(query)));
    let t = performance.now();
    const source = await verdict.store.reads.reportSource({ repo: null }, reportLimits());
    const loadMs = performance.now() - t;
    t = performance.now();
    buildReport(source, filters, { now: Date.now(), limits: reportLimits(), paginate: true });
    const buildMs = performance.now() - t;

    const report = await withPeak(async () => {
      const times: number[] = [];
      let bytes = 0;
      let body: any = null;
      for (let i = 0; i < RUNS_PER_MEASURE; i++) {
        const start = performance.now();
        const res = await fetch(`${base}/operator/api/reports?${query}`, { headers });
        const text = await res.text();
        times.push(performance.now() - start);
        if (res.status !== 200) throw new Error(`report answered ${res.status}: ${text.slice(0, 300)}`);
        bytes = text.length;
        body = JSON.parse(text);
      }
      return { times, bytes, body };
    });
    const exported = await withPeak(async () => {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < RUNS_PER_MEASURE; i++) {
        const start = performance.now();
        const res = await fetch(`${base}/operator/api/reports/export?${query}`, { headers });
        const buffer = Buffer.from(await res.arrayBuffer());
        times.push(performance.now() - start);
        if (res.status !== 200)
          throw new Error(`export answered ${res.status}: ${buffer.toString().slice(0, 300)}`);
        bytes = buffer.length;
      }
      return { times, bytes };
    });

    const s = report.value.body;
    const reportMedian = median(report.value.times);
    const exportMedian = median(exported.value.times);
    const lines = [
      `reports benchmark: SQLite store with ${RUNS} runs (${s.source.heads} heads), ${RUNS * FINDINGS_PER_RUN} findings, ${PRS} pull requests in ${REPOS} repositories, ${s.source.ledgerRows} ledger rows, ${s.source.traces} traces${seeded ? ` (seeded in ${(seedMs / 1000).toFixed(1)} s)` : ''}`,
      `source read ${Math.round(loadMs)} ms (${mb(source.inputBytes)} of source text), build ${Math.round(buildMs)} ms; report window ${query}: ${s.findings.total} findings, ${s.reviewedPrs.total} reviewed PRs, ${s.comments.total} comments, ${s.series.length} series points`,
      `GET /operator/api/reports          median ${Math.round(reportMedian)} ms  max ${Math.round(Math.max(...report.value.times))} ms  (${RUNS_PER_MEASURE} runs, ${mb(report.value.bytes)} JSON)  peak RSS ${mb(report.rss)}  heap ${mb(report.heap)}`,
      `GET /operator/api/reports/export   median ${Math.round(exportMedian)} ms  max ${Math.round(Math.max(...exported.value.times))} ms  (${RUNS_PER_MEASURE} runs, ${mb(exported.value.bytes)} ZIP)  peak RSS ${mb(exported.rss)}  heap ${mb(exported.heap)}`,
      `bench:reports: report ${Math.round(reportMedian)} ms, export ${Math.round(exportMedian)} ms at the source bounds (target report under 1 s, export under 3 s, medians): ${reportMedian < 1000 && exportMedian < 3000 ? 'met' : 'missed'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await verdict.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
