import type { Logger } from 'pino';
import { loadConfig, type Config } from '../config/index.js';
import { ScratchReview, TERMINAL_RUN_STATUSES } from '../compose/scratch-review.js';
import {
  selectProviders,
  type ModelProvider,
  type ModelRequest,
  type ProviderSelection,
} from '../review/providers/index.js';
import type { VerificationReportRecord } from '../review/run-result.js';
import type { StageTap } from '../review/run-trace.js';
import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { adversarialBehaviour, ObservedProvider, outcomeOf } from './adversarial.js';
import { loadCorpus, type TestLabCase } from './case.js';
import { caseSource, TESTLAB_OWNER } from './github-server.js';
import { scoreGolden } from './golden.js';
import { modelJudge } from './judge.js';
import { PromptRecorder, RecordedAnswersProvider, type CallLog } from './live.js';
import { RecordingProvider, REPLAY_MODEL, ReplayProvider } from './replay-provider.js';
import {
  emptyResult,
  labScores,
  sampleOf,
  skippedResult,
  type LabCaseResult,
  type LabScores,
  type RunMode,
} from './samples.js';
import { reviewPromptTokens, scoreCase, type Judge } from './score.js';

/** An environment as the configuration reads it. */
export type Env = Record<string, string | undefined>;

export type TestLabRunOptions = {
  /** The corpus folder (`fixtures/testlab`). */
  corpus: string;
  /** Case names to run: comma-separated globs (`*` and `?`); all when absent. */
  cases?: string;
  /** Cases reviewed at once (the review worker's concurrency). */
  concurrency: number;
  /** The environment provider selection reads (`VERDICT_RUNNER_PROVIDER`, keys, base URLs, prices). */
  env: Env;
  /** Overrides `VERDICT_RUNNER_PROVIDER` / `VERDICT_RUNNER_MODEL`; `replay` answers from the recordings. */
  provider?: string;
  model?: string;
  /** An optional judge model for the matches the rules cannot decide. */
  judgeProvider?: string;
  judgeModel?: string;
  log: Logger;
  /** Called as each case finishes (with the sample it belongs to). */
  onCase?: (result: LabCaseResult, sample: number) => void;
  /** Write what the provider answers into each case's `answers/` (a real provider only). */
  record?: boolean;
  /** The longest a case may take before it is recorded as not finished (default 15 minutes). */
  caseTimeoutMs?: number;
  /** How many times a live run reviews each case (default 1); every sample is scored. */
  samples?: number;
  /**
   * Replays the answers a live run recorded (its Test Lab record): each only to a call whose prompt hash
   * is the one it answered. `provider`/`providerModel` are the live run's, `model` the name the run reports.
   */
  recorded?: { calls: CallLog; provider: string; providerModel: string; model: string };
  /** Shown every request sent to the review's primary provider (the adversarial replay check reads them). */
  observe?: (req: ModelRequest) => void;
  /**
   * A hook on the review's stage outputs (run-trace.ts), passed to the engine: the mutation test breaks the
   * prompt (`budget`, `plan`) or the parser (`parse`) through it. Absent: the pipeline as it is.
   */
  tap?: StageTap;
  /** Replay only: the provider that answers instead of the authored answers' (derive-relies reads prompts). */
  replayProvider?: (cases: readonly TestLabCase[]) => ModelProvider;
};

export type TestLabRun = {
  provider: string;
  model: string;
  judge: { provider: string; model: string } | null;
  /** replay (authored answers), live (a real provider) or recorded (a live run's recorded answers). */
  mode: RunMode;
  scores: LabScores;
  cases: LabCaseResult[];
  /** Requests the local GitHub API did not know (empty when the engine read only what it serves). */
  unknownRequests: string[];
  /** Calls the replay of recorded answers refused, and why (a prompt that changed). */
  refusals: string[];
};

/** Case names matching comma-separated globs. */
export function selectCases(cases: readonly TestLabCase[], globs: string | undefined): TestLabCase[] {
  if (!globs || globs.trim() === '') return [...cases];
  const patterns = globs
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean)
    .map(
      (g) =>
        new RegExp(
          `^${g
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '.*')
            .replace(/\?/g, '.')}$`,
        ),
    );
  return cases.filter((c) => patterns.some((p) => p.test(c.name)));
}

/**
 * Reviews Test Lab cases through the real pipeline: a local GitHub API serves each case as a pull request
 * (`testlab/<case>#1`), a Probot App authenticates against it with a key made for the run, review jobs go
 * through the job table and the review worker, the engine calls the configured provider (or the replay
 * of recorded answers), and publication runs in shadow mode. Everything lives in a scratch store that is
 * deleted afterwards; the caller saves the returned run as a Test Lab record.
 *
 * Replay skips the live-only cases (imported real pull requests without authored answers) and counts them
 * as skipped. A live run (a real provider) records every model call with its prompt hash and, with
 * `samples` > 1, reviews every case that many times, each sample in a scratch of its own. `recorded`
 * replays a live run's recorded answers, refusing any call whose prompt hash changed.
 */
export async function runTestLab(opts: TestLabRunOptions): Promise<TestLabRun> {
  const all = loadCorpus(opts.corpus);
  const selected = selectCases(all, opts.cases);
  if (selected.length === 0) {
    throw new Error(`no Test Lab case matches "${opts.cases ?? ''}" in ${opts.corpus}`);
  }
  const providerName = (opts.provider ?? opts.env.VERDICT_RUNNER_PROVIDER ?? '').trim().toLowerCase();
  const mode: RunMode = opts.recorded ? 'recorded' : providerName === 'replay' ? 'replay' : 'live';
  const samples = opts.samples ?? 1;
  if (!Number.isInteger(samples) || samples < 1 || samples > 20) {
    throw new Error('samples must be an integer from 1 to 20');
  }
  if (samples > 1 && mode !== 'live') throw new Error('several samples need a live run (a real provider)');
  const skipped = mode === 'replay' ? selected.filter((c) => c.meta.liveOnly) : [];
  const cases = selected.filter((c) => !skipped.includes(c));
  const runs: SampleRun[] = [];
  for (let sample = 1; sample <= samples; sample++) {
    runs.push(cases.length === 0 ? emptySample(opts, mode) : await reviewSample(opts, cases, mode, sample));
  }
  const order = new Map(selected.map((c, i) => [c.name, i]));
  const withSkipped = runs.map((r) => ({
    wallMs: r.wallMs,
    results: [...r.results, ...skipped.map((c) => skippedResult(c, c.meta.liveOnly!))].sort(
      (a, b) => order.get(a.name)! - order.get(b.name)!,
    ),
  }));
  const first = withSkipped[0]!.results.map((r) => ({
    ...r,
    ...(r.status === 'skipped'
      ? {}
      : {
          samples: withSkipped.map((s, i) =>
            sampleOf(
              s.results.find((x) => x.name === r.name)!,
              i + 1,
              runs[i]!.calls.get(r.name) ?? [],
            ),
          ),
        }),
  }));
  const scores = labScores(
    withSkipped.map((s, i) => ({ results: i === 0 ? first : s.results, wallMs: s.wallMs })),
    mode,
  );
  const head = runs[0]!;
  return {
    provider: head.provider,
    model: head.model,
    judge: head.judge,
    mode,
    scores,
    cases: first,
    unknownRequests: [...new Set(runs.flatMap((r) => r.unknownRequests))],
    refusals: runs.flatMap((r) => r.refusals),
  };
}

type SampleRun = {
  provider: string;
  model: string;
  judge: TestLabRun['judge'];
  results: LabCaseResult[];
  calls: CallLog;
  unknownRequests: string[];
  refusals: string[];
  wallMs: number;
};

/** A run in which nothing was reviewed (every selected case was skipped). */
function emptySample(opts: TestLabRunOptions, mode: RunMode): SampleRun {
  return {
    provider: mode === 'live' ? (opts.provider ?? opts.env.VERDICT_RUNNER_PROVIDER ?? '') : 'replay',
    model: mode === 'replay' ? REPLAY_MODEL : (opts.model ?? opts.env.VERDICT_RUNNER_MODEL ?? ''),
    judge: null,
    results: [],
    calls: new Map(),
    unknownRequests: [],
    refusals: [],
    wallMs: 0,
  };
}

/** The providers of one sample: replay, a recorded live run's answers, or the configured ones, recorded. */
function sampleProviders(
  opts: TestLabRunOptions,
  cases: readonly TestLabCase[],
  mode: RunMode,
  config: Config,
  log: CallLog,
): { providers: ProviderSelection; recorded: RecordedAnswersProvider | null; replay: ReplayProvider | null } {
  if (mode === 'replay' || mode === 'recorded') {
    if (opts.record) throw new Error('--record needs a real provider (replay serves authored answers)');
    const recorded =
      mode === 'recorded' ? new RecordedAnswersProvider(opts.recorded!.calls, opts.recorded!.model) : null;
    const replay = mode === 'replay' && !opts.replayProvider ? new ReplayProvider(cases) : null;
    const primary = recorded ?? replay ?? opts.replayProvider!(cases);
    return { providers: { primary: observed(opts, primary), shadow: null }, recorded, replay };
  }
  const providers: ProviderSelection = { ...selectProviders(config.review.providers), shadow: null };
  if (opts.record) {
    providers.primary = new RecordingProvider(providers.primary, new Map(cases.map((c) => [c.name, c])));
  }
  providers.primary = observed(opts, new PromptRecorder(providers.primary, log));
  if (providers.verifier) providers.verifier = new PromptRecorder(providers.verifier, log);
  return { providers, recorded: null, replay: null };
}

const observed = (opts: TestLabRunOptions, provider: ModelProvider): ModelProvider =>
  opts.observe ? new ObservedProvider(provider, opts.observe) : provider;

/** One review of every case (one sample), in a scratch of its own. */
async function reviewSample(
  opts: TestLabRunOptions,
  cases: readonly TestLabCase[],
  mode: RunMode,
  sample: number,
): Promise<SampleRun> {
  const log: CallLog = new Map();
  let recorded: RecordedAnswersProvider | null = null;
  let replay: ReplayProvider | null = null;
  const scratch = await ScratchReview.open({
    sources: cases.map(caseSource),
    env: {
      ...opts.env,
      ...(opts.provider && mode === 'live' ? { VERDICT_RUNNER_PROVIDER: opts.provider } : {}),
      ...(opts.model && mode === 'live' ? { VERDICT_RUNNER_MODEL: opts.model } : {}),
      // Replay: a part budget under which the large cases are reviewed in several parts.
      ...(mode === 'replay'
        ? { VERDICT_RUNNER_PROVIDER: undefined, VERDICT_REVIEW_CHUNK_TOKENS: '12000' }
        : {}),
      // A recorded live run is replayed with the provider and model it was recorded with.
      ...(mode === 'recorded'
        ? {
            VERDICT_RUNNER_PROVIDER: opts.recorded!.provider,
            VERDICT_RUNNER_MODEL: opts.recorded!.providerModel,
          }
        : {}),
    },
    concurrency: opts.concurrency,
    log: opts.log,
    ...(opts.tap ? { tap: opts.tap } : {}),
    providers: (config) => {
      const chosen = sampleProviders(opts, cases, mode, config, log);
      recorded = chosen.recorded;
      replay = chosen.replay;
      return chosen.providers;
    },
  });
  try {
    const { providers, store, server } = scratch;
    const judge = judgeFor(opts, scratch.env, mode !== 'live');
    const started = Date.now();
    const queued: Array<{ c: TestLabCase; runId: string }> = [];
    for (const c of cases) {
      const runId = await scratch.request(server.source(TESTLAB_OWNER, c.name)!, { trigger: 'opened' });
      queued.push({ c, runId });
    }
    const timeout = opts.caseTimeoutMs ?? 15 * 60_000;
    const results = await Promise.all(
      queued.map(async ({ c, runId }) => {
        const run = await scratch.settled(runId, timeout);
        const refusals = (replay as ReplayProvider | null)?.refusals.get(c.name) ?? [];
        const scored = failedByReplay(await caseResult(store, c, run, timeout, judge?.judge), refusals);
        const adversarial = adversarialBehaviour(c, scored, outcomeOf(run));
        const result = adversarial ? { ...scored, adversarial } : scored;
        opts.onCase?.(result, sample);
        return result;
      }),
    );
    return {
      provider: providers.primary.name,
      model: providers.primary.model,
      judge: judge ? { provider: judge.provider.name, model: judge.provider.model } : null,
      results,
      calls: log,
      unknownRequests: [...new Set(server.requests.unknown)],
      refusals: [
        ...((recorded as RecordedAnswersProvider | null)?.refusals ?? []),
        ...[...((replay as ReplayProvider | null)?.refusals ?? new Map<string, string[]>())].flatMap(
          ([name, messages]) => messages.map((m) => `${name}: ${m}`),
        ),
      ],
      wallMs: Date.now() - started,
    };
  } finally {
    await scratch.close();
  }
}

/**
 * A case whose authored answers replay refused (the prompt lacked a line they rely on, or no answer covers
 * a part's files) fails, whatever the review made of the other parts: its error says what was missing.
 */
function failedByReplay(result: LabCaseResult, refusals: readonly string[]): LabCaseResult {
  if (refusals.length === 0) return result;
  return { ...result, status: 'failed', error: `replay refused: ${refusals.join(' | ')}` };
}

function judgeFor(
  opts: TestLabRunOptions,
  env: Env,
  replay: boolean,
): { provider: ModelProvider; judge: Judge } | null {
  if (!opts.judgeProvider && !opts.judgeModel) return null;
  if (replay && (opts.judgeProvider ?? 'replay') === 'replay') {
    throw new Error('the replay provider cannot judge: name a real --judge-provider');
  }
  const judgeEnv = {
    ...env,
    VERDICT_RUNNER_PROVIDER: opts.judgeProvider ?? opts.env.VERDICT_RUNNER_PROVIDER,
    VERDICT_RUNNER_MODEL: opts.judgeModel ?? opts.env.VERDICT_RUNNER_MODEL,
    VERDICT_RUNNER_SHADOW_MODEL: undefined,
  };
  const provider = selectProviders(loadConfig(judgeEnv).review.providers).primary;
  return { provider, judge: modelJudge(provider) };
}

/** A run's tokens, cost, time, prompt size and parts, from its trace (the spans that carry token counts). */
async function usageOf(store: Store, run: RunRecord) {
  const traces = await store.traces.list({ runId: run.id, limit: 10 });
  const spans = (await Promise.all(traces.map((t) => store.traces.get(t.traceId)))).flatMap(
    (t) => t?.spans ?? [],
  );
  // The model calls: the spans that carry token counts.
  const models = spans.filter((s) => s.inputTokens !== null || s.outputTokens !== null);
  const costs = models.map((s) => s.costUsd);
  const trace = traces[0];
  return {
    tokens: {
      input: models.reduce((n, s) => n + (s.inputTokens ?? 0), 0),
      output: models.reduce((n, s) => n + (s.outputTokens ?? 0), 0),
    },
    costUsd:
      costs.length === 0 || costs.some((x) => x === null)
        ? null
        : costs.reduce<number>((n, x) => n + (x ?? 0), 0),
    wallMs: trace?.durationMs ?? 0,
    promptTokens: reviewPromptTokens(spans),
    messageTokens: reviewPromptTokens(spans, 'messageTokens'),
    parts: Number((run.result as { chunks?: { total?: number } } | null)?.chunks?.total ?? 0),
  };
}

async function caseResult(
  store: Store,
  c: TestLabCase,
  run: RunRecord | null,
  timeoutMs: number,
  judge?: Judge,
): Promise<LabCaseResult> {
  const base = emptyResult(c);
  if (!run) return { ...base, error: 'the review run disappeared' };
  const usage = await usageOf(store, run);
  if (!TERMINAL_RUN_STATUSES.has(run.status)) {
    return {
      ...base,
      ...usage,
      status: 'error',
      error: `not finished within ${Math.round(timeoutMs / 1000)} s`,
    };
  }
  // Scored twice: what was published (with verification) and every candidate it saw (without: the
  // published findings and those it withheld).
  const stored = await store.findings.listForRun(run.id, { include: 'all' });
  const scored = (f: (typeof stored)[number]) => ({
    severity: f.severity,
    category: f.category,
    path: f.path,
    line: f.line,
    endLine: f.endLine,
    title: f.title,
    body: f.body,
  });
  const findings = stored.filter((f) => f.status === 'published').map(scored);
  const score = await scoreCase(c, findings, judge);
  const withheld = stored.filter((f) => f.status === 'withheld');
  const all = withheld.length === 0 ? score : await scoreCase(c, stored.map(scored), judge);
  const report = (run.result as { verification?: VerificationReportRecord } | null)?.verification;
  const result: LabCaseResult = {
    ...base,
    ...usage,
    status: run.analysisStatus === 'pending' ? run.status : run.analysisStatus,
    error:
      run.error ??
      (run.analysisStatus === 'refused'
        ? `not reviewed: ${JSON.stringify((run.result as { admission?: unknown } | null)?.admission ?? run.reason)}`
        : null),
    findings: findings.map((f, i) => ({ ...f, caught: score.matches[i] ?? null })),
    bugs: score.bugs,
    falseFindings: score.falseFindings,
    verification: report
      ? {
          status: report.status,
          candidates: report.candidates,
          withheld: report.withheld,
          unverified: report.unverified,
          calls: report.calls,
        }
      : null,
    withoutVerification: {
      caught: all.bugs.filter((b) => b.finding !== null).length,
      truePositives: all.matches.filter((m) => m !== null).length,
      falseFindings: all.falseFindings,
    },
  };
  if ((c.golden ?? []).length === 0) return result;
  // An imported real pull request: scored against its golden findings by ReviewBench's rules; a finding
  // that takes an fp golden finding is a false finding.
  const golden = await scoreGolden(c, findings, judge);
  return {
    ...result,
    findings: findings.map((f, i) => ({ ...f, caught: golden.matches[i] ?? null })),
    falseFindings: golden.matchedFp,
    reviewBench: golden,
    withoutVerification: undefined,
  };
}
