import type { Logger } from 'pino';
import { loadConfig } from '../config/index.js';
import { ScratchReview, TERMINAL_RUN_STATUSES } from '../compose/scratch-review.js';
import { selectProviders, type ModelProvider, type ProviderSelection } from '../review/providers/index.js';
import type { VerificationReportRecord } from '../review/run-result.js';
import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import { loadCorpus, type TestLabCase } from './case.js';
import { caseSource, TESTLAB_OWNER } from './github-server.js';
import { modelJudge } from './judge.js';
import { RecordingProvider, ReplayProvider } from './replay-provider.js';
import {
  overallScores,
  reviewPromptTokens,
  scoreCase,
  type CaseResult,
  type Judge,
  type Scores,
} from './score.js';

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
  /** Called as each case finishes. */
  onCase?: (result: CaseResult) => void;
  /** Write what the provider answers into each case's `answers/` (a real provider only). */
  record?: boolean;
  /** The longest a case may take before it is recorded as not finished (default 15 minutes). */
  caseTimeoutMs?: number;
};

export type TestLabRun = {
  provider: string;
  model: string;
  judge: { provider: string; model: string } | null;
  scores: Scores;
  cases: CaseResult[];
  /** Requests the local GitHub API did not know (empty when the engine read only what it serves). */
  unknownRequests: string[];
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
 */
export async function runTestLab(opts: TestLabRunOptions): Promise<TestLabRun> {
  const all = loadCorpus(opts.corpus);
  const cases = selectCases(all, opts.cases);
  if (cases.length === 0) throw new Error(`no Test Lab case matches "${opts.cases ?? ''}" in ${opts.corpus}`);
  const providerName = (opts.provider ?? opts.env.VERDICT_RUNNER_PROVIDER ?? '').trim().toLowerCase();
  const replay = providerName === 'replay';
  const scratch = await ScratchReview.open({
    sources: cases.map(caseSource),
    env: {
      ...opts.env,
      ...(opts.provider && !replay ? { VERDICT_RUNNER_PROVIDER: opts.provider } : {}),
      ...(opts.model ? { VERDICT_RUNNER_MODEL: opts.model } : {}),
      // Replay: the part split the recordings were made with (a large case is reviewed in several parts).
      ...(replay ? { VERDICT_RUNNER_PROVIDER: undefined, VERDICT_REVIEW_CHUNK_TOKENS: '12000' } : {}),
    },
    concurrency: opts.concurrency,
    log: opts.log,
    providers: (config) => {
      const providers: ProviderSelection = replay
        ? { primary: new ReplayProvider(cases), shadow: null }
        : { ...selectProviders(config.review.providers), shadow: null };
      if (opts.record) {
        if (replay) throw new Error('--record needs a real provider (replay answers from the recordings)');
        providers.primary = new RecordingProvider(providers.primary, new Map(cases.map((c) => [c.name, c])));
      }
      return providers;
    },
  });
  try {
    const { providers, store, server } = scratch;
    const judge = judgeFor(opts, scratch.env, replay);
    const started = Date.now();
    const queued: Array<{ c: TestLabCase; runId: string }> = [];
    for (const c of cases) {
      const runId = await scratch.request(server.source(TESTLAB_OWNER, c.name)!, { trigger: 'opened' });
      queued.push({ c, runId });
    }
    const results = await Promise.all(
      queued.map(async ({ c, runId }) => {
        const run = await scratch.settled(runId, opts.caseTimeoutMs ?? 15 * 60_000);
        const result = await caseResult(store, c, run, opts.caseTimeoutMs ?? 15 * 60_000, judge?.judge);
        opts.onCase?.(result);
        return result;
      }),
    );
    const scores = { ...overallScores(results), wallMs: Date.now() - started };
    return {
      provider: providers.primary.name,
      model: providers.primary.model,
      judge: judge ? { provider: judge.provider.name, model: judge.provider.model } : null,
      scores,
      cases: results,
      unknownRequests: [...new Set(server.requests.unknown)],
    };
  } finally {
    await scratch.close();
  }
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

async function caseResult(
  store: Store,
  c: TestLabCase,
  run: RunRecord | null,
  timeoutMs: number,
  judge?: Judge,
): Promise<CaseResult> {
  const base: CaseResult = {
    name: c.name,
    language: c.meta.language,
    kind: c.meta.kind,
    clean: c.clean,
    status: 'error',
    error: null,
    findings: [],
    bugs: [],
    falseFindings: 0,
    tokens: { input: 0, output: 0 },
    costUsd: null,
    wallMs: 0,
    promptTokens: 0,
    parts: 0,
  };
  if (!run) return { ...base, error: 'the review run disappeared' };
  const traces = await store.traces.list({ runId: run.id, limit: 10 });
  const spans = (await Promise.all(traces.map((t) => store.traces.get(t.traceId)))).flatMap(
    (t) => t?.spans ?? [],
  );
  // The model calls: the spans that carry token counts.
  const models = spans.filter((s) => s.inputTokens !== null || s.outputTokens !== null);
  const costs = models.map((s) => s.costUsd);
  const trace = traces[0];
  const usage = {
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
  const all = withheld.length === 0 ? null : await scoreCase(c, stored.map(scored), judge);
  const report = (run.result as { verification?: VerificationReportRecord } | null)?.verification;
  return {
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
    withoutVerification: all
      ? {
          caught: all.bugs.filter((b) => b.finding !== null).length,
          truePositives: all.matches.filter((m) => m !== null).length,
          falseFindings: all.falseFindings,
        }
      : {
          caught: score.bugs.filter((b) => b.finding !== null).length,
          truePositives: score.matches.filter((m) => m !== null).length,
          falseFindings: score.falseFindings,
        },
  };
}
