import { resolve } from 'node:path';
import pino from 'pino';
import type { Config } from '../config/index.js';
import type { GitHubClient } from '../github/client.js';
import { createProbot } from '../github/probot.js';
import { FINDING_SEVERITIES } from '../review/output.schema.js';
import type { Store } from '../store/index.js';
import { capturePullRequest, parseBugSpec, type BugSpec } from '../testlab/capture.js';
import { CASE_LANGUAGES } from '../testlab/case.js';
import {
  compareRecords,
  percent as pct,
  saveTestLabRun,
  scoreLine,
  verificationLine,
} from '../testlab/record.js';
import { runTestLab, type TestLabRun } from '../testlab/runner.js';
import type { CallLog, RecordedCall } from '../testlab/live.js';
import { adversarialLines } from '../testlab/adversarial.js';
import type { LabCaseResult } from '../testlab/samples.js';
import type { TestLabRecord } from '../store/testlab.js';
import { CliError } from './io.js';
import type { Options } from './options.js';
import { table, type Painter } from './table.js';

function caught(c: LabCaseResult): string {
  if (c.status === 'skipped') return '-';
  if (c.reviewBench) return `${c.reviewBench.coveredTp}/${c.reviewBench.goldenTp} golden`;
  return c.clean ? 'clean' : `${c.bugs.filter((b) => b.finding !== null).length}/${c.bugs.length}`;
}

function matchOrFalse(c: LabCaseResult): string {
  if (c.status === 'skipped') return 'live only';
  if (c.reviewBench) return `${c.reviewBench.matched} matched, ${c.reviewBench.unmatched} unmatched`;
  return c.clean ? String(c.falseFindings) : c.bugs.map((b) => b.matchedBy ?? 'missed').join(',');
}

function caseRows(cases: LabCaseResult[]): string[][] {
  return cases.map((c) => [
    c.name,
    c.language,
    caught(c),
    matchOrFalse(c),
    String(c.findings.length),
    c.status,
    String(c.tokens.input + c.tokens.output),
    `${(c.wallMs / 1000).toFixed(1)}s`,
  ]);
}

/** A run as a table of cases, then its scores, tokens, cost and time. */
export function renderRun(run: TestLabRun, paint: Painter): string {
  return [
    table(
      ['case', 'lang', 'caught', 'match / false', 'findings', 'status', 'tokens', 'time'],
      caseRows(run.cases),
      paint,
      (col, v) =>
        col === 5 && v !== 'analysed' && v !== 'skipped'
          ? 'red'
          : col === 3 && /missed/.test(v)
            ? 'yellow'
            : null,
    ),
    '',
    run.mode === 'replay'
      ? `pipeline check (replay of authored answers, not a measure of review quality): ${scoreLine(run.scores)}`
      : `${run.provider}/${run.model}: ${scoreLine(run.scores)}`,
    ...reviewBenchLines(run),
    `tokens ${run.scores.tokens.input} in / ${run.scores.tokens.output} out · cost ${run.scores.costUsd === null ? 'unknown' : `$${run.scores.costUsd}`} · ${(run.scores.wallMs / 1000).toFixed(1)} s`,
    verificationLine(run.scores),
    ...adversarialLines(run.scores.adversarial),
    `median review prompt per case: ${run.scores.medianPromptTokens ?? '-'} tokens sent, ${run.scores.medianMessageTokens ?? '-'} of them the request (without the system prompt and schema)`,
  ].join('\n');
}

/** ReviewBench's scores, the cases replay skipped, each sample's scores and the refused recorded calls. */
function reviewBenchLines(run: TestLabRun): string[] {
  const out: string[] = [];
  if (run.mode !== 'replay') {
    out.push(
      `${run.mode} run, ${run.scores.samples} sample(s)${run.scores.samples > 1 ? ': every ratio is the mean of the samples' : ''}`,
    );
  }
  const rb = run.scores.reviewBench;
  if (rb) {
    out.push(
      `real pull requests (ReviewBench rules, ${rb.cases} cases): grounded recall ${pct(rb.groundedRecall)} (${rb.coveredTp}/${rb.goldenTp} tp golden findings), grounded precision ${pct(rb.groundedPrecision)} (${rb.matchedTp}/${rb.matched} matched), ${rb.matchedFp} on fp golden findings, ${rb.unmatched} unmatched; precision with unmatched counted false ${pct(rb.precisionAllCounted)}`,
    );
  }
  if (run.scores.skippedCases > 0) {
    out.push(
      `${run.scores.skippedCases} case(s) skipped: live only (real pull requests without authored answers)`,
    );
  }
  if (run.scores.samples > 1) {
    for (const s of run.scores.perSample) {
      out.push(
        `  sample ${s.sample}: recall ${pct(s.recall)}, precision ${pct(s.precision)}, false findings per clean case ${s.falseFindingsPerCleanCase ?? '-'}, anchor accuracy ${pct(s.anchorAccuracy)}${s.reviewBench ? `, ReviewBench grounded recall ${pct(s.reviewBench.groundedRecall)} precision ${pct(s.reviewBench.groundedPrecision)}` : ''}, ${s.tokens.input + s.tokens.output} tokens, ${(s.wallMs / 1000).toFixed(1)} s`,
      );
    }
  }
  for (const r of run.refusals) out.push(`refused: ${r}`);
  return out;
}

/** The calls a live run recorded (its first sample's), by case, to replay with their prompt hashes. */
export function recordedCalls(record: TestLabRecord): CallLog {
  const calls: CallLog = new Map();
  for (const c of record.cases as unknown as LabCaseResult[]) {
    const first = (c.samples?.[0]?.calls ?? []) as RecordedCall[];
    if (first.length > 0) calls.set(c.name, first);
  }
  return calls;
}

type LabCommand = {
  rest: string[];
  opts: Options;
  io: { stdout: (t: string) => void; env: NodeJS.ProcessEnv };
  store: Store;
  config: Config;
  paint: Painter;
};

/** `verdict testlab run|compare|add`: resolves with the exit code. */
export async function testLabCommand(
  args: string[],
  opts: Options,
  io: LabCommand['io'],
  store: Store,
  config: Config,
  paint: Painter,
): Promise<number> {
  const [sub, ...rest] = args;
  const command = { rest, opts, io, store, config, paint };
  if (sub === 'run') return labRun(command);
  if (sub === 'compare') return labCompare(command);
  if (sub === 'add') return labAdd(command);
  throw new CliError('needs a subcommand: run, compare or add');
}

async function labRun({ rest, opts, io, store, paint }: LabCommand): Promise<number> {
  if (rest.length > 0) throw new CliError('run takes no arguments');
  const concurrency = opts.concurrency === undefined ? 4 : Number(opts.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) {
    throw new CliError('--concurrency must be an integer from 1 to 32');
  }
  const samples = opts.samples === undefined ? 1 : Number(opts.samples);
  if (!Number.isInteger(samples) || samples < 1 || samples > 20) {
    throw new CliError('--samples must be an integer from 1 to 20');
  }
  let recorded: Parameters<typeof runTestLab>[0]['recorded'];
  let cases = opts.cases;
  if (opts['from-record']) {
    const source = await store.testLab.get(opts['from-record']);
    if (!source) throw new CliError(`no Test Lab record ${opts['from-record']}`);
    const calls = recordedCalls(source);
    if (calls.size === 0)
      throw new CliError(`Test Lab record ${source.id} recorded no answers (it is not a live run)`);
    recorded = {
      calls,
      provider: source.provider,
      providerModel: source.model,
      model: `recorded:${source.id}`,
    };
    cases ??= [...calls.keys()].join(',');
  }
  const run = await runTestLab({
    corpus: resolve(opts.corpus ?? 'fixtures/testlab'),
    cases,
    concurrency,
    samples,
    recorded,
    env: io.env,
    provider: opts.provider,
    model: opts.model,
    judgeProvider: opts['judge-provider'],
    judgeModel: opts['judge-model'],
    record: opts.record === true,
    log: pino({ level: io.env.LOG_LEVEL ?? 'warn' }),
  });
  const record = await saveTestLabRun(store, run, {
    name: opts.name,
    actor: `cli:${io.env.USER ?? 'operator'}`,
  });
  if (opts.json) {
    io.stdout(JSON.stringify({ record: { id: record.id, ...run } }, null, 2));
  } else {
    io.stdout(`${renderRun(run, paint)}\n${paint('saved', 'green')} Test Lab record ${record.id}`);
  }
  return run.scores.failedCases > 0 ? 1 : 0;
}

async function labCompare({ rest, opts, io, store }: LabCommand): Promise<number> {
  if (rest.length !== 2) throw new CliError('compare needs two Test Lab record ids');
  const [a, b] = await Promise.all(rest.map((id) => store.testLab.get(id)));
  if (!a) throw new CliError(`no Test Lab record ${rest[0]}`);
  if (!b) throw new CliError(`no Test Lab record ${rest[1]}`);
  const cmp = compareRecords(a, b);
  if (opts.json) {
    io.stdout(JSON.stringify(cmp, null, 2));
    return 0;
  }
  const list = (items: typeof cmp.onlyA) =>
    items.length === 0
      ? '  (none)'
      : items.map((d) => `  ${d.case}: ${d.bug} (${d.category}, ${d.path}:${d.lines.join('-')})`).join('\n');
  const lines = [
    `${a.id} ${a.provider}/${a.model}: recall ${pct(a.scores.recall as number | null)}`,
    `${b.id} ${b.provider}/${b.model}: recall ${pct(b.scores.recall as number | null)}`,
    '',
    `Caught by ${a.id}, missed by ${b.id}:`,
    list(cmp.onlyA),
    `Caught by ${b.id}, missed by ${a.id}:`,
    list(cmp.onlyB),
  ];
  if (cmp.falseFindings.length > 0) {
    lines.push('False findings on clean cases that differ:');
    for (const f of cmp.falseFindings) lines.push(`  ${f.case}: ${f.a} vs ${f.b}`);
  }
  if (cmp.notInBoth.length > 0) lines.push(`Reviewed by only one run: ${cmp.notInBoth.join(', ')}`);
  io.stdout(lines.join('\n'));
  return 0;
}

/** `add --from-pr owner/repo#n`: captures a real pull request as a case of the corpus. */
async function labAdd({ rest, opts, io, config, paint }: LabCommand): Promise<number> {
  if (rest.length > 0) throw new CliError('add takes no arguments (use --from-pr)');
  const ref = /^([A-Za-z0-9][A-Za-z0-9-]*)\/([A-Za-z0-9._-]+)#(\d+)$/.exec(opts['from-pr'] ?? '');
  if (!ref) throw new CliError('--from-pr must be owner/repo#number');
  const [, owner, repo, number] = ref;
  const severity = opts.severity ?? 'high';
  if (!(FINDING_SEVERITIES as readonly string[]).includes(severity)) {
    throw new CliError(`--severity must be one of ${FINDING_SEVERITIES.join(', ')}`);
  }
  const language = opts.language;
  if (language !== undefined && !(CASE_LANGUAGES as readonly string[]).includes(language)) {
    throw new CliError(`--language must be one of ${CASE_LANGUAGES.join(', ')}`);
  }
  let bugs: BugSpec[];
  try {
    bugs = (opts.bug ?? []).map(parseBugSpec);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  if (!config.github.hasCredentials)
    throw new CliError('capturing a pull request needs the App credentials (APP_ID, PRIVATE_KEY)');
  const probot = createProbot(config.github, pino({ level: 'silent' }));
  const app = await probot.auth();
  const { data: installation } = await app.rest.apps.getRepoInstallation({ owner: owner!, repo: repo! });
  const gh = (await probot.auth(installation.id)) as GitHubClient;
  const created = await capturePullRequest({
    gh,
    owner: owner!,
    repo: repo!,
    number: Number(number),
    bugs,
    corpus: resolve(opts.corpus ?? 'fixtures/testlab'),
    name: opts.name,
    severity: severity as (typeof FINDING_SEVERITIES)[number],
    keywords: opts.keywords
      ?.split(',')
      .map((k) => k.trim())
      .filter(Boolean),
    language: language as (typeof CASE_LANGUAGES)[number] | undefined,
  });
  const changed = created.files.filter((f) => f.changed).length;
  if (opts.json)
    io.stdout(JSON.stringify({ case: created.name, dir: created.dir, changed, bugs: created.bugs }, null, 2));
  else
    io.stdout(
      `${paint('added', 'green')} case ${created.name} (${created.meta.language}, ${changed} changed file(s), ${created.clean ? 'clean' : `${created.bugs.length} planted bug(s)`}) in ${created.dir}`,
    );
  return 0;
}
