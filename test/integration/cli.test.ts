import { jest } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, randomId, type Clock } from '../../src/clock.js';
import { openStore } from '../../src/store/index.js';
import { openDb } from '../../src/store/db.js';
import { review } from '../helpers/review-harness.js';
import { eventually } from '../helpers/webhooks.js';

/**
 * The operator CLI (review-engine 4.5) run as a child process against a fixture store. Each start compiles
 * the TypeScript sources through tsx: seconds on an idle machine, much longer on a loaded one, so a test
 * (two or three starts) may take up to two minutes before it counts as hung.
 */
jest.setTimeout(120_000);
const BIN = join(process.cwd(), 'bin', 'verdict.mjs');
const HEAD = 'e'.repeat(40);
const KEY = `acme/web#12@${HEAD}`;
const TODAY = new Date().toISOString().slice(0, 10);

type Result = { code: number | null; stdout: string; stderr: string };

function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', ...env },
        timeout: 110_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'verdict-cli-'));
  db = join(dir, 'verdict.sqlite');
  const clock = new ManualClock(Date.now() - 60_000);
  const store = await openStore(
    { client: 'sqlite', filename: db },
    {
      clock: clock as Clock,
      ids: randomId,
      dedupeTtlSeconds: 604800,
    },
  );
  await store.pullRequests.upsert({
    repo: 'acme/web',
    number: 12,
    headSha: HEAD,
    installationId: 77,
    title: 'Cache',
  });
  const { run } = await store.runs.createOrGet({
    reviewKey: KEY,
    repo: 'acme/web',
    prNumber: 12,
    headSha: HEAD,
    trigger: 'opened',
    installationId: 77,
  });
  await store.runs.recordAnalysis(
    { runId: run.id, reviewKey: KEY, repo: 'acme/web', prNumber: 12, headSha: HEAD },
    { analysisStatus: 'analysed', verdict: 'needs-attention', confidence: 4, result: { output: review() } },
    [
      {
        severity: 'high',
        category: 'concurrency',
        path: 'src/cache.ts',
        line: 14,
        title: 'Eviction races with concurrent writes',
        body: 'evict() runs between get and set.',
        fingerprint: 'f'.repeat(16),
        outsideDiff: false,
      },
    ],
    store.findings,
  );
  await store.runs.update(run.id, { status: 'completed', publishStatus: 'published' });
  await store.publications.record({
    runId: run.id,
    repo: 'acme/web',
    prNumber: 12,
    kind: 'review',
    mode: 'live',
    status: 'published',
    receipt: '31337',
    body: null,
    error: null,
  });
  // Model telemetry today: one call that reported everything, one that reported no cost.
  await store.traces.start({
    id: 'tr1',
    runId: run.id,
    reviewKey: KEY,
    repo: 'acme/web',
    prNumber: 12,
    name: 'review',
  });
  for (const [spanId, cost] of [
    ['s1', 0.25],
    ['s2', null],
  ] as const) {
    await store.traces.addSpan({
      traceId: 'tr1',
      spanId,
      kind: 'model',
      name: 'chunk',
      status: 'ok',
      provider: 'openai',
      model: 'gpt-4o-mini',
      inputTokens: 1000,
      outputTokens: 200,
      costUsd: cost,
      startedAt: Date.now() - 30_000,
    });
  }
  await store.close();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('verdict CLI', () => {
  test('runs: a table for people, JSON for machines; --limit is validated', async () => {
    const human = await cli(['runs', '--db', db]);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toMatch(
      /^REVIEW KEY\s+STATUS\s+ANALYSIS\s+PUBLISH\s+VERDICT\s+CONF\s+CREATED \(UTC\)\n/,
    );
    expect(human.stdout).toContain('acme/web#12@eeeeeeeeeeee');
    expect(human.stdout).toMatch(/completed\s+analysed\s+published\s+needs-attention\s+4\/5/);
    // Not a terminal: no colour codes.
    expect(human.stdout).not.toContain('\u001b[');
    const json = await cli(['runs', '--db', db, '--json', '--limit', '5']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.runs).toHaveLength(1);
    expect(parsed.runs[0]).toMatchObject({ reviewKey: KEY, verdict: 'needs-attention', confidence: 4 });
    expect(parsed.runs[0].result).toBeUndefined();
    const bad = await cli(['runs', '--db', db, '--limit', 'lots']);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toBe('verdict runs: --limit must be an integer from 1 to 1000 (got "lots")\n');
  });

  test('show <reviewKey>: the run, its findings and ledger; an unknown key exits 1 with one line', async () => {
    const human = await cli(['show', KEY, '--db', db]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('src/cache.ts:14');
    expect(human.stdout).toContain('Eviction races with concurrent writes');
    expect(human.stdout).toMatch(/review\s+live\s+published\s+31337/);
    const json = JSON.parse((await cli(['show', KEY, '--db', db, '--json'])).stdout);
    expect(json.run).toMatchObject({ reviewKey: KEY, analysisStatus: 'analysed' });
    expect(json.findings.map((f: any) => [f.severity, f.path, f.line])).toEqual([
      ['high', 'src/cache.ts', 14],
    ]);
    expect(json.publications.map((p: any) => p.receipt)).toEqual(['31337']);
    const missing = await cli(['show', `acme/web#12@${'0'.repeat(40)}`, '--db', db]);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toBe(`verdict show: no run with review key acme/web#12@${'0'.repeat(40)}\n`);
  });

  test('usage: known totals, and unknown (never 0) where a call did not report', async () => {
    const json = JSON.parse(
      (await cli(['usage', '--db', db, '--json', '--from', TODAY, '--to', TODAY])).stdout,
    );
    expect(json).toMatchObject({ from: TODAY, to: TODAY });
    // The settings usage service answers it; the CLI's JSON keeps its own shape (no API notes).
    expect(json.notes).toBeUndefined();
    expect(json.model).toMatchObject({
      calls: 2,
      inputTokens: 2000,
      outputTokens: 400,
      costUsd: null,
      complete: false,
    });
    const human = await cli(['usage', '--db', db, '--from', TODAY, '--to', TODAY]);
    expect(human.stdout).toMatch(/model\s+2\s+2000\s+400\s+unknown/);
    const reversed = await cli(['usage', '--db', db, '--from', '2026-02-02', '--to', '2026-02-01']);
    expect(reversed).toMatchObject({ code: 1, stderr: 'verdict usage: --from must not be after --to\n' });
  });

  test('requeue: a new run with the variant; the exit code is never the verdict', async () => {
    const json = await cli(['requeue', KEY, '--db', db, '--variant', 'cli-1', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ outcome: 'enqueued', reviewKey: `${KEY}:cli-1` });
    const generated = await cli(['requeue', KEY, '--db', db]);
    expect(generated.code).toBe(0);
    expect(generated.stdout).toMatch(
      new RegExp(`^queued acme/web#12@${HEAD}:operator-\\d+ \\(run run_[0-9a-f]+, enqueued\\)\\n$`),
    );
    const runs = JSON.parse((await cli(['runs', '--db', db, '--json'])).stdout).runs;
    expect(runs).toHaveLength(3);
    // Into a separate SQLite queue file, as a worker with VERDICT_QUEUE_DB_PATH claims.
    const queueDb = join(dir, 'queue.sqlite');
    const queued = await cli([
      'requeue',
      KEY,
      '--db',
      db,
      '--variant',
      'cli-2',
      '--queue-db',
      queueDb,
      '--json',
    ]);
    expect(queued.code).toBe(0);
    const queueStore = await openDb({ client: 'sqlite', filename: queueDb });
    const jobs = await queueStore.knex('jobs').where({ queue: 'reviews' });
    await queueStore.close();
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0].payload)).toMatchObject({ reviewKey: `${KEY}:cli-2`, installationId: 77 });
    // A head that is not stored is refused.
    const unknown = await cli(['requeue', `acme/web#12@${'1'.repeat(40)}`, '--db', db]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^verdict requeue: no stored review .* is not the stored head of acme\/web#12\n$/,
    );
  });

  test('harness: saves the analysed run as a record the Test Lab lists', async () => {
    const saved = await cli(['harness', KEY, '--db', db, '--name', 'baseline', '--json']);
    expect(saved.code).toBe(0);
    const record = JSON.parse(saved.stdout).harness;
    expect(record).toMatchObject({ name: 'baseline', reviewKey: KEY, repo: 'acme/web', prNumber: 12 });
    // Saved by the Test Lab service for the local operator (no USER in this environment).
    expect(record.actor).toBe('cli:operator');
    expect(record.record).toMatchObject({
      verdict: 'needs-attention',
      confidence: 4,
      findings: [{ fingerprint: 'f'.repeat(16), severity: 'high', path: 'src/cache.ts', line: 14 }],
    });
    const store = await openDb({ client: 'sqlite', filename: db });
    expect(await store.knex('harness_records').count({ n: '*' })).toEqual([{ n: 1 }]);
    await store.close();
    const queuedRun = JSON.parse((await cli(['runs', '--db', db, '--json'])).stdout).runs.find(
      (r: any) => r.analysisStatus === 'pending',
    );
    const refused = await cli(['harness', queuedRun.reviewKey, '--db', db]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not analyzed \(analysis pending\)\n$/);
  });

  // One process per test: each CLI start costs seconds on a loaded machine, so no test waits on a dozen.
  test.each([
    'runs',
    'show',
    'usage',
    'requeue',
    'harness',
    'memory',
    'doctor',
    'webhook',
    'worker',
    'serve',
  ])('verdict %s --help exits 0 with its usage', async (command) => {
    const help = await cli([command, '--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain(`Usage: verdict ${command}`);
  });

  test('verdict --help exits 0; no command exits 1', async () => {
    const main = await cli(['--help']);
    expect(main.code).toBe(0);
    expect(main.stdout).toContain('never the review verdict');
    expect(main.stdout).toMatch(/^ {2}doctor \[--offline\] +check the configuration/m);
    expect(main.stdout).toMatch(/^ {2}webhook send <event\.action> +sign an example webhook/m);
    expect((await cli([])).code).toBe(1);
  });

  test('usage errors exit 1 with one line', async () => {
    const unknown = await cli(['frobnicate']);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: 'verdict: unknown command "frobnicate" (run verdict --help)\n',
    });
    const badOption = await cli(['runs', '--colour']);
    expect(badOption.code).toBe(1);
    expect(badOption.stderr.split('\n')).toHaveLength(2);
    expect((await cli(['show', '--db', db])).stderr).toBe('verdict show: needs exactly one review key\n');
  });

  test('never creates a database at a missing path unless --init is given', async () => {
    const missing = join(dir, 'nested', 'new.sqlite');
    const refused = await cli(['runs', '--db', missing]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `verdict runs: no Verdict database at ${missing} (check --db, or pass --init to create one there)\n`,
    );
    expect(existsSync(missing)).toBe(false);
    const created = await cli(['runs', '--db', missing, '--init', '--json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ runs: [] });
    expect(existsSync(missing)).toBe(true);
  });

  test('npm run bridge -- --once: the command bridge as its own process executes a queued command', async () => {
    const store = await openStore(
      { client: 'sqlite', filename: db },
      {
        clock: new ManualClock(Date.now()) as Clock,
        ids: randomId,
        dedupeTtlSeconds: 604800,
      },
    );
    await store.commands.create({
      id: 'cmd-bridge-process',
      kind: 'requeue',
      payload: { reviewKey: KEY, variant: 'bridge-process' },
      reviewKey: KEY,
      actor: 'test',
    });
    await store.close();
    const pass = await new Promise<Result>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', join(process.cwd(), 'src', 'bridge', 'main.ts'), '--once'],
        {
          env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', VERDICT_DB_PATH: db },
          timeout: 60_000,
        },
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
      );
    });
    expect(pass).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(pass.stdout)).toEqual({
      authority: 'live',
      dryRun: false,
      executed: [{ id: 'cmd-bridge-process', kind: 'requeue', status: 'succeeded' }],
      skipped: [],
    });
    const shown = JSON.parse((await cli(['show', `${KEY}:bridge-process`, '--db', db, '--json'])).stdout);
    expect(shown.run).toMatchObject({ status: 'queued', trigger: 'operator_requeue' });
  });

  test('show takes the head as runs prints it (12 characters, or down to 7); ambiguous or shorter is refused', async () => {
    const listed = (await cli(['runs', '--db', db])).stdout.match(/acme\/web#12@e{12}(?=\s)/)![0];
    const shown = await cli(['show', listed, '--db', db, '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).run.reviewKey).toBe(KEY);
    expect(
      JSON.parse((await cli(['show', 'acme/web#12@eeeeeee', '--db', db, '--json'])).stdout).run.reviewKey,
    ).toBe(KEY);
    const short = await cli(['show', 'acme/web#12@eeeeee', '--db', db]);
    expect(short).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'verdict show: review key acme/web#12@eeeeee abbreviates the head to 6 characters: give at least 7\n',
    });
    // A second head of the same pull request that starts with the same seven characters.
    const other = `eeeeeee${'1'.repeat(33)}`;
    const store = await openStore(
      { client: 'sqlite', filename: db },
      { clock: new ManualClock(Date.now()) as Clock, ids: randomId, dedupeTtlSeconds: 604800 },
    );
    await store.runs.createOrGet({
      reviewKey: `acme/web#12@${other}`,
      repo: 'acme/web',
      prNumber: 12,
      headSha: other,
      trigger: 'synchronize',
      installationId: 77,
    });
    await store.close();
    const ambiguous = await cli(['show', 'acme/web#12@eeeeeee', '--db', db]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(
      /^verdict show: review key acme\/web#12@eeeeeee is ambiguous: it matches acme\/web#12@(e{40}|eeeeeee1{33}), acme\/web#12@(e{40}|eeeeeee1{33}) \(give more of the head\)\n$/,
    );
    expect(
      JSON.parse((await cli(['show', 'acme/web#12@eeeeeeee', '--db', db, '--json'])).stdout).run.reviewKey,
    ).toBe(KEY);
  });

  test('serve and worker run until SIGTERM and exit 0', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const start = (args: string[], env: Record<string, string>) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info', ...env },
      });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      // The exit code, or the signal that ended the process (so a failure says which).
      const exited = new Promise<number | string | null>((r) =>
        child.on('exit', (code, signal) => r(code ?? signal)),
      );
      return { child, output: () => out, exited };
    };
    const server = start(['serve', '--db', db], {
      PORT: String(port),
      HOST: '127.0.0.1',
      VERDICT_SCHEDULER: '0',
    });
    const worker = start(['worker', '--db', db], {});
    try {
      const health = await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
        return res?.ok ? ((await res.json()) as any) : null;
      }, 30_000);
      expect(health).toMatchObject({ ok: true });
      await eventually(async () => worker.output().includes('worker started'), 30_000);
    } finally {
      server.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  }, 90_000);
});
