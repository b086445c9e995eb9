import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { randomId, systemClock } from '../clock.js';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { createLogger } from '../logger.js';
import { openQueue } from '../queue/select.js';
import { localContext, OperatorError, runLocally, type OperationContext } from '../services/operation.js';
import { requeue } from '../services/requeue.js';
import { settingsOperations } from '../services/settings.js';
import { findRun } from '../services/runs.js';
import { saveHarnessRecord } from '../services/test-lab.js';
import { openConfiguredStore, type Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import type { UsageReport, UsageTotals } from '../store/usage.js';
import { CliError, type Io } from './io.js';
import { TESTLAB_HELP } from './testlab-help.js';
import { MEMORY_HELP, MEMORY_SUBCOMMAND_HELP } from './memory-help.js';
import { REVIEW_HELP, reviewCommand } from './review.js';
import { painter, statusColour, table, when, type Painter } from './table.js';

export { CliError, type Io } from './io.js';

const OPTIONS = {
  db: { type: 'string' },
  'queue-db': { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  variant: { type: 'string' },
  init: { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  name: { type: 'string' },
  provider: { type: 'string' },
  model: { type: 'string' },
  cases: { type: 'string' },
  concurrency: { type: 'string' },
  'judge-provider': { type: 'string' },
  'judge-model': { type: 'string' },
  corpus: { type: 'string' },
  record: { type: 'boolean' },
  'from-pr': { type: 'string' },
  bug: { type: 'string', multiple: true },
  severity: { type: 'string' },
  keywords: { type: 'string' },
  language: { type: 'string' },
  offline: { type: 'boolean' },
  payload: { type: 'string' },
  url: { type: 'string' },
  secret: { type: 'string' },
  repo: { type: 'string' },
  search: { type: 'string' },
  title: { type: 'string' },
  body: { type: 'string' },
  'body-file': { type: 'string' },
  path: { type: 'string', multiple: true },
  revision: { type: 'string' },
  label: { type: 'string' },
  category: { type: 'string' },
  action: { type: 'string' },
  number: { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  workspace: { type: 'boolean' },
  'all-paths': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const parse = (argv: string[]) =>
  parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
export type Options = ReturnType<typeof parse>['values'];

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

const COMMON = `  --db <path>        the SQLite store (default VERDICT_DB_PATH, ./data/verdict.sqlite; DATABASE_URL selects PostgreSQL)
  --init             create and migrate the store when --db names a file that does not exist
  --json             machine-readable output
  -h, --help         this help`;

const HELP: Record<string, string> = {
  main: `verdict: the Verdict operator CLI

Usage: verdict <command> [options]

Commands:
  runs                 the newest review runs
  show <reviewKey>     one run: its analysis, findings and publication ledger
  usage                model and chat usage for a UTC date range
  requeue <reviewKey>  queue a new review of a stored head (a new variant)
  harness <reviewKey>  save a run's analysis as a harness record (Test Lab)
  memory <subcommand>  list and edit memory: contexts, clusters, knowledge documents; preview a PR
  testlab run|compare|add  score the Test Lab corpus; compare two records; capture a PR as a case
  doctor [--offline]   check the configuration: store, webhook secret, GitHub App, model provider, ...
  webhook send <event.action>  sign an example webhook and post it to the running server
  review               review a local git change with the configured model (no App, server or store)
  jobs run <name>      run one scheduled job once (command-bridge, watchdog, maintenance, pr-agent-loop, nightly-audit)
  worker               run a worker process (the review and webhook lanes)
  serve                run the server (webhooks, operator API, inline worker, scheduled jobs)

Options:
${COMMON}

The exit code says whether the command worked (0) or not (1); it is never the review verdict.
Run "verdict <command> --help" for a command's options.`,
  runs: `Usage: verdict runs [--limit <n>] [--db <path>] [--json]

The newest review runs, newest first.

Options:
  --limit <n>        how many (1 to 1000, default 20)
${COMMON}`,
  show: `Usage: verdict show <reviewKey> [--db <path>] [--json]

One run by its review key ({owner}/{repo}#{pr}@{headSha}[:{variant}]): status, verdict, confidence,
findings and the publication ledger. The head may be abbreviated to 7 or more characters (as
"verdict runs" prints it) when only one run of that pull request matches.

Options:
${COMMON}`,
  usage: `Usage: verdict usage [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--db <path>] [--json]

Model and chat usage (tokens and cost) for UTC days, inclusive; by default from the start of this
month through today. A total some call did not report is "unknown", never 0.

Options:
  --from <day>       first UTC day
  --to <day>         last UTC day
${COMMON}`,
  requeue: `Usage: verdict requeue <reviewKey> [--variant <name>] [--queue-db <path>] [--db <path>] [--json]

Queues a new review. The key must be a stored review key, or name the stored head of the pull
request; the pull request needs an installation id. The new run's key carries the variant
(default operator-{timestamp}).

Options:
  --variant <name>   the variant of the new review key
  --queue-db <path>  enqueue into this SQLite queue file (what a worker with VERDICT_QUEUE_DB_PATH claims from)
                     instead of the store's own job table
${COMMON}`,
  harness: `Usage: verdict harness <reviewKey> [--name <name>] [--db <path>] [--json]

Saves an analysed run as a harness record (verdict, confidence, coverage and finding fingerprints),
a baseline that the Test Lab routes list. This writes to the store.

Options:
  --name <name>      a label for the record (default: the review key)
${COMMON}`,
  testlab: TESTLAB_HELP,
  memory: MEMORY_HELP,
  doctor: `Usage: verdict doctor [--offline] [--db <path>] [--json]

Checks the configuration npm start would use (the environment and ./.env) and prints one line per
check, "ok|warn|fail <check>: <detail>"; a warn or fail says what to set. Checks: config, store,
webhook-secret, github-app (GET /app with the App's JWT names the App), provider (its models list),
shadow-provider (when VERDICT_RUNNER_SHADOW_MODEL is set), dashboard, validation.

Exit 1 when a check fails, else 0 (warnings included).

Options:
  --offline          do not call GitHub or the model provider
${COMMON}`,
  webhook: `Usage: verdict webhook send <event.action> [--payload <file>] [--url <url>] [--secret <s>] [--json]

Signs a webhook payload with the webhook secret (x-hub-signature-256) and posts it to the running
server with x-github-event, a fresh x-github-delivery and content-type: application/json, then prints
the answer's status and body. Exit 0 on a 2xx answer, else 1.

<event.action> names the example payload of @octokit/webhooks-examples to send, e.g.
pull_request.opened, issue_comment.created, installation.created, or an event without actions (push).

Options:
  --payload <file>   send this JSON file instead of the example (the event still comes from the argument)
  --url <url>        where to post (default http://localhost:$PORT/github/webhooks, PORT default 8787)
  --secret <s>       the secret to sign with (default GITHUB_WEBHOOK_SECRET, else WEBHOOK_SECRET)
  --json             print {url, event, deliveryId, status, body}
  -h, --help         this help`,
  review: REVIEW_HELP,
  jobs: `Usage: verdict jobs run <name> [--db <path>] [--init]

Runs one scheduled job once against the configured store (and GitHub App), records its heartbeat and
artifact as a scheduled run does, and prints {job, status, artifact} as JSON. Exit 0 when it ran, 1 when
it failed.

Jobs:
  command-bridge     one pass of the command bridge (operator commands)
  watchdog           the heartbeat and artifact checks of the other jobs
  maintenance        expired dedupe markers, old deliveries and dashboard sessions
  pr-agent-loop      redeliver the App's failed webhook deliveries of the last 72 hours (at most 50) and
                     queue a review (trigger catch_up) of every open pull request whose head has no run
  nightly-audit      the night's consistency checks (unpublished analyses, dead letters, stuck commands,
                     unprocessed deliveries, failing repositories, the model budget), found ones as alerts;
                     scheduled at 23:30 Europe/London, run now whatever the time

Options:
${COMMON}`,
  worker: `Usage: verdict worker [--db <path>] [--queue-db <path>] [--init]

Runs a worker process against the store (what "npm run worker" runs). SIGTERM stops it gracefully.

Options:
  --queue-db <path>  claim review jobs from this SQLite queue file (VERDICT_QUEUE_DB_PATH)
${COMMON}`,
  serve: `Usage: verdict serve [--db <path>] [--init]

Runs the server (what "npm start" runs): PORT (default 8787) and HOST choose the address.

Options:
${COMMON}`,
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
  const print = (json: unknown, human: () => string) =>
    io.stdout(opts.json ? JSON.stringify(json, null, 2) : human());
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
        const run = await findRun(store, args[0]!);
        const findings = await store.findings.listForRun(run.id);
        const publications = (await store.publications.listForPr(run.repo, run.prNumber)).filter(
          (p) => p.runId === run.id,
        );
        print({ run, findings, publications }, () => showText(run, findings, publications, paint));
        return 0;
      }
      case 'usage': {
        expectArgs(0, '');
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
        return await testLabCommand(args, opts, io, store, config, paint, (message) => {
          throw new CliError(message);
        });
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

function showText(
  run: RunRecord,
  findings: Awaited<ReturnType<Store['findings']['listForRun']>>,
  publications: Awaited<ReturnType<Store['publications']['listForPr']>>,
  paint: Painter,
): string {
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
