import { existsSync } from 'node:fs';
import { randomId, systemClock } from '../clock.js';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { createLogger } from '../logger.js';
import { openQueue } from '../queue/select.js';
import { localContext, OperatorError, runLocally, type OperationContext } from '../services/operation.js';
import { requeue } from '../services/requeue.js';
import { settingsOperations } from '../services/settings.js';
import { runDetail, type RunDetail } from '../services/runs.js';
import { saveHarnessRecord } from '../services/test-lab.js';
import { openConfiguredStore } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import type { UsageReport, UsageTotals } from '../store/usage.js';
import { CliError, type Io, type Print } from './io.js';
import { parse, type Options } from './options.js';
import { HELP } from './help.js';
import { MEMORY_SUBCOMMAND_HELP } from './memory-help.js';
import { reviewCommand } from './review.js';
import { painter, statusColour, table, when, type Painter } from './table.js';

export { CliError, type Io } from './io.js';

/** A command that sets up what it needs itself (no store is opened for it); `env` has `--db` applied. */
export type StandaloneCommand = (args: string[], opts: Options, io: Io) => Promise<number>;

/**
 * The commands that need no store opened for them, by name: each module is imported only when its command
 * runs, so one command's imports never slow another down. A new command registers here (or in dispatch's
 * switch when it works on the store) and in HELP.
 */
const STANDALONE: Record<string, () => Promise<{ run: StandaloneCommand }>> = {
  doctor: () => import('./doctor.js'),
  webhook: () => import('./webhook.js'),
  jobs: () => import('./jobs.js'),
};

/** Runs one CLI invocation; resolves with the exit code, or null when a long-running command took over. */
export async function runCli(argv: string[], io: Io): Promise<number | null> {
  // `review` has its own options and needs no store (src/cli/review.ts).
  if (argv[0] === 'review') return reviewCommand(argv.slice(1), io);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.stderr(`verdict: ${(error as Error).message.split('\n')[0]}`);
    return 1;
  }
  const { values: opts, positionals } = parsed;
  const [command, ...args] = positionals;
  if (!command) {
    (opts.help ? io.stdout : io.stderr)(HELP.main!);
    return opts.help ? 0 : 1;
  }
  if (!(command in HELP) || command === 'main') {
    io.stderr(`verdict: unknown command "${command}" (run verdict --help)`);
    return 1;
  }
  if (opts.help) {
    // A command with subcommands answers `--help` for each (`verdict memory add-context --help`).
    const sub = command === 'memory' && args[0] !== undefined ? MEMORY_SUBCOMMAND_HELP[args[0]] : undefined;
    io.stdout(sub ?? HELP[command]!);
    return 0;
  }
  try {
    return await dispatch(command, args, opts, io);
  } catch (error) {
    const message =
      error instanceof CliError || error instanceof OperatorError || error instanceof ConfigError
        ? error.message
        : `${(error as Error)?.message ?? String(error)}`;
    io.stderr(`verdict ${command}: ${message.split('\n')[0]}`);
    return 1;
  }
}

async function dispatch(command: string, args: string[], opts: Options, io: Io): Promise<number | null> {
  const expectArgs = (n: number, what: string) => {
    if (args.length !== n) throw new CliError(n === 0 ? 'takes no arguments' : `needs exactly one ${what}`);
  };
  const standalone = STANDALONE[command];
  if (standalone) return (await standalone()).run(args, opts, { ...io, env: storeEnv(opts, io.env) });
  if (command === 'review') throw new CliError('put the command first: verdict review [options]');
  const server = command === 'worker' || command === 'serve';
  if (server) expectArgs(0, '');
  // `VERDICT_RUNNER_PROVIDER=replay` names the Test Lab's replay provider, which no other command knows.
  const replay = command === 'testlab' && io.env.VERDICT_RUNNER_PROVIDER?.trim().toLowerCase() === 'replay';
  const env = storeEnv(opts, replay ? { ...io.env, VERDICT_RUNNER_PROVIDER: undefined } : io.env);
  const config = loadConfig(env);
  ensureStoreExists(config, opts);
  if (server) {
    Object.assign(process.env, env);
    await import(command === 'worker' ? '../worker/main.js' : '../main.js');
    return null;
  }
  const store = await openConfiguredStore(config);
  const paint = painter(io.isTty && !opts.json);
  const print: Print = (json, human) => io.stdout(opts.json ? JSON.stringify(json, null, 2) : human());
  // What the CLI shares with the operator API runs as the same service, for the local operator.
  const ctx = localContext(
    { store, log: createLogger(config.logLevel, process.stderr, config.logFormat) },
    `cli:${io.env.USER ?? 'operator'}`,
  );
  try {
    switch (command) {
      case 'runs': {
        expectArgs(0, '');
        const runs = await store.runs.recent(limitOf(opts.limit));
        print({ runs: runs.map(summary) }, () => runsTable(runs, paint));
        return 0;
      }
      case 'show': {
        expectArgs(1, 'review key');
        await runDetail(store, args[0]!).then((detail) => print(detail, () => showText(detail, paint)));
        return 0;
      }
      case 'usage': {
        expectArgs(0, '');
        await usageCommand(ctx, opts, paint, print);
        return 0;
      }
      case 'requeue': {
        expectArgs(1, 'review key');
        const result = await requeueCommand(ctx, args[0]!, opts);
        print(
          result,
          () => `${paint('queued', 'green')} ${result.reviewKey} (run ${result.runId}, ${result.outcome})`,
        );
        return 0;
      }
      case 'testlab': {
        const { testLabCommand } = await import('./testlab.js');
        return await testLabCommand(args, opts, io, store, config, paint);
      }
      case 'memory': {
        const { memoryCommand } = await import('./memory.js');
        return await memoryCommand(args, opts, ctx, config, paint, print);
      }
      case 'harness': {
        expectArgs(1, 'review key');
        const record = await saveHarnessRecord(ctx, { reviewKey: args[0]!, name: opts.name });
        print(
          { harness: record },
          () => `${paint('saved', 'green')} harness record ${record.id} for ${record.reviewKey}`,
        );
        return 0;
      }
    }
    throw new CliError(`unknown command "${command}"`);
  } finally {
    await store.close();
  }
}

/** `verdict usage [--from] [--to]`: the usage report of the settings service. */
async function usageCommand(
  ctx: OperationContext,
  opts: Options,
  paint: Painter,
  print: Print,
): Promise<void> {
  const from = opts.from !== undefined ? utcDay(opts.from, '--from') : undefined;
  const to = opts.to !== undefined ? utcDay(opts.to, '--to') : undefined;
  if (from !== undefined && to !== undefined && from > to) {
    throw new CliError('--from must not be after --to');
  }
  const { notes: _notes, ...usage } = await runLocally(settingsOperations.usage, ctx, {
    from: opts.from,
    to: opts.to,
  });
  print(usage, () => usageText({ from: usage.from, to: usage.to }, usage, paint));
}

/** The environment with `--db` / `--queue-db` applied (`--db` names a SQLite file, so it wins over DATABASE_URL). */
function storeEnv(opts: Options, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' };
  if (opts.db !== undefined) {
    if (opts.db.trim() === '') throw new CliError('--db needs a path');
    out.VERDICT_DB_PATH = opts.db;
    delete out.DATABASE_URL;
  }
  if (opts['queue-db'] !== undefined) out.VERDICT_QUEUE_DB_PATH = opts['queue-db'];
  return out;
}

/** Unlike the original CLI, never creates a database at a path that does not exist unless asked. */
function ensureStoreExists(config: Config, opts: Options): void {
  if (config.store.client !== 'sqlite' || config.store.filename === ':memory:') return;
  if (!existsSync(config.store.filename) && !opts.init) {
    throw new CliError(
      `no Verdict database at ${config.store.filename} (check --db, or pass --init to create one there)`,
    );
  }
}

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return 20;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000) {
    throw new CliError(`--limit must be an integer from 1 to 1000 (got "${raw}")`);
  }
  return Number(raw);
}

function utcDay(raw: string, name: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
  const at = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || dayOf(at) !== raw) throw new CliError(`${name} must be a UTC day YYYY-MM-DD (got "${raw}")`);
  return at;
}

const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * `requeue`: the requeue service (as the bridge's `requeue` command runs it) for a new variant of a stored
 * head, into the store's job table or the `--queue-db` queue file.
 */
async function requeueCommand(ctx: OperationContext, key: string, opts: Options) {
  const queueDb = opts['queue-db'];
  const queue = queueDb
    ? await openQueue(
        { kind: 'sqlite', filename: queueDb },
        { store: ctx.store, clock: systemClock, ids: randomId, log: createLogger('silent') },
      )
    : null;
  try {
    const { outcome, reviewKey, runId, jobId } = await requeue(
      ctx,
      { reviewKey: key },
      { variant: opts.variant, queue: queue?.backend },
    );
    return { outcome, reviewKey, runId, jobId, ...(queueDb ? { queueDb } : {}) };
  } catch (error) {
    if (error instanceof OperatorError && error.code === 'invalid_variant') {
      throw new CliError('--variant must be 1 to 100 letters, digits, dots, dashes or underscores');
    }
    if (error instanceof OperatorError && error.code === 'review_exists') {
      throw new CliError(`${error.message}: choose another --variant`);
    }
    throw error;
  } finally {
    await queue?.close();
  }
}

function summary(run: RunRecord) {
  const { result: _result, shadowReview: _shadow, ...rest } = run;
  return rest;
}

const shortKey = (key: string) => key.replace(/@([0-9a-f]{12})[0-9a-f]+/, '@$1');

function runsTable(runs: RunRecord[], paint: Painter): string {
  if (runs.length === 0) return 'no runs';
  return table(
    ['REVIEW KEY', 'STATUS', 'ANALYSIS', 'PUBLISH', 'VERDICT', 'CONF', 'CREATED (UTC)'],
    runs.map((r) => [
      shortKey(r.reviewKey),
      r.status,
      r.analysisStatus,
      r.publishStatus,
      r.verdict ?? '-',
      r.confidence === null ? '-' : `${r.confidence}/5`,
      when(r.createdAt),
    ]),
    paint,
    (column, value) => (column >= 1 && column <= 4 && value !== '-' ? statusColour(value) : null),
  );
}

/** `verdict show <review key>`: the run, its findings and what was published for it. */
function showText({ run, findings, publications }: RunDetail, paint: Painter): string {
  const field = (label: string, value: string, colour?: boolean) =>
    `${paint(label.padEnd(12), 'bold')} ${colour && value !== '-' ? paint(value, statusColour(value)) : value}`;
  const lines = [
    field('review key', run.reviewKey),
    field('run', run.id),
    field('status', run.status, true),
    field('analysis', run.analysisStatus, true),
    field('publish', run.publishStatus, true),
    field('verdict', run.verdict ?? '-', true),
    field('confidence', run.confidence === null ? '-' : `${run.confidence}/5`),
    field('trigger', run.trigger),
    field('reason', run.reason ?? '-'),
    field('error', run.error ?? run.publishError ?? '-'),
    field('created', when(run.createdAt)),
    '',
    paint(`Findings (${findings.length})`, 'bold'),
  ];
  if (findings.length > 0) {
    lines.push(
      table(
        ['SEVERITY', 'CATEGORY', 'LOCATION', 'TITLE'],
        findings.map((f) => [
          f.severity,
          f.category,
          f.path === null ? '-' : f.line === null ? f.path : `${f.path}:${f.line}`,
          f.title,
        ]),
        paint,
      ),
    );
  }
  lines.push('', paint(`Publication ledger (${publications.length})`, 'bold'));
  if (publications.length > 0) {
    lines.push(
      table(
        ['KIND', 'MODE', 'STATUS', 'RECEIPT', 'AT (UTC)'],
        publications.map((p) => [p.kind, p.mode, p.status, p.receipt ?? p.error ?? '-', when(p.createdAt)]),
        paint,
        (column, value) => (column === 2 ? statusColour(value) : null),
      ),
    );
  }
  return lines.join('\n');
}

function usageText(range: { from: string; to: string }, report: UsageReport, paint: Painter): string {
  const n = (v: number | null, unit = '') => (v === null ? 'unknown' : `${v}${unit}`);
  const usd = (v: number | null) => (v === null ? 'unknown' : `$${v.toFixed(4)}`);
  const row = (label: string, t: UsageTotals) => [
    label,
    String(t.calls),
    n(t.inputTokens),
    n(t.outputTokens),
    usd(t.costUsd),
  ];
  const rows: string[][] = [];
  for (const [name, section] of [
    ['model', report.model],
    ['chat', report.chat],
  ] as const) {
    rows.push(row(name, section));
    for (const line of section.byModel)
      rows.push(row(`  ${line.provider ?? '?'}/${line.model ?? '?'}`, line));
  }
  return [
    paint(`Usage ${range.from} to ${range.to} (UTC)`, 'bold'),
    table(['', 'CALLS', 'INPUT TOKENS', 'OUTPUT TOKENS', 'COST'], rows, paint, (_c, v) =>
      v === 'unknown' ? 'yellow' : null,
    ),
  ].join('\n');
}
