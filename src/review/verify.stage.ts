import type { ReviewConfig } from '../config/index.js';
import { checkFindingAnchors } from './anchors.js';
import { mapConcurrent } from './concurrency.js';
import type { ChangedFile } from './context.js';
import { normaliseFindingPath } from './fingerprint.js';
import type { FileAtHead } from './dispositions.js';
import { callModel, type ModelCallEnv } from './model-call.js';
import type { Finding } from './output.schema.js';
import type { Parsed } from './parse.stage.js';
import type { ModelProvider } from './providers/index.js';
import type { VerificationReportRecord } from './run-result.js';
import type { RunScope, Stage } from './stage.js';
import {
  batchCandidates,
  citedCode,
  decide,
  parseVerification,
  verificationJsonSchema,
  verificationPrompt,
  VERIFICATION_SYSTEM,
  type Candidate,
  type VerificationSettings,
} from './verification.js';

/**
 * Stage `verify` (NAMES.md "Verification of findings"): every candidate the parts raised is checked
 * against the code it cites before it can be posted. Candidates go in batches (a file's together, at most
 * eight a call, the calls `VERDICT_REVIEW_CONCURRENCY` at a time), each call a `verification` model span
 * with its tokens and cost; the verdicts decide (verification.ts `decide`): published, or withheld with
 * the verifier's reason. A call that fails or answers unusably publishes its candidates unverified, and
 * so does an answer that leaves a candidate out: no finding is lost to verification. Off (settings), the
 * candidates pass as they are.
 */

export type VerifyInput = {
  run: RunScope;
  pr: { title: string };
  parsed: Pick<Parsed, 'outputs'>;
  gathered: { changed: ChangedFile[]; fileAtHead: FileAtHead };
  /** The verifier (`VERDICT_VERIFIER_MODEL`) or, without one, the primary model. */
  providers: { primary: ModelProvider; verifier?: ModelProvider | null };
  settings: VerificationSettings;
  config: Pick<ReviewConfig, 'timeoutMs' | 'concurrency'>;
  env: ModelCallEnv;
};

/** One candidate's fate; for an unverified candidate the reason says why it is unverified. */
export type CandidateReport = VerificationReportRecord['results'][number];

/** A candidate withheld after verification, with what the record stage stores. */
export type WithheldFinding = {
  finding: Finding;
  chunk: number;
  reason: string;
  verdict: string;
  score: number;
};

export type Verified = {
  /** The parts' outputs with only the findings to publish (verified, or unverified after a failed call). */
  outputs: Parsed['outputs'];
  withheld: WithheldFinding[];
  report: VerificationReportRecord;
};

/** Results kept in the run's result at most (the counts cover them all). */
const MAX_REPORTED = 200;

async function verify(input: VerifyInput): Promise<Verified> {
  const { settings, parsed } = input;
  const provider = input.providers.verifier ?? input.providers.primary;
  const candidates: Candidate[] = [];
  parsed.outputs.forEach((o, output) =>
    o.output.findings.forEach((finding, index) =>
      candidates.push({ id: `c${candidates.length + 1}`, chunk: o.chunk, output, index, finding }),
    ),
  );
  const report: VerificationReportRecord = {
    status: !settings.enabled ? 'off' : candidates.length === 0 ? 'none' : 'verified',
    reason: settings.reason,
    provider: provider.name,
    model: provider.model,
    threshold: settings.threshold,
    candidates: candidates.length,
    published: 0,
    withheld: 0,
    unverified: 0,
    calls: 0,
    failedCalls: 0,
    errors: [],
    results: [],
  };
  if (report.status === 'off' || report.status === 'none') {
    return { outputs: parsed.outputs, withheld: [], report };
  }
  // The report names a candidate's lines only where its anchor holds on the diff (anchors.ts).
  const anchors = checkFindingAnchors(
    candidates.map((c) => c.finding),
    input.gathered.changed,
  ).findings.map((f) => f.line);
  const outcomes = new Map<string, CandidateReport>();
  const batches = batchCandidates(candidates);
  report.calls = batches.length;
  await mapConcurrent(batches, input.config.concurrency, async (batch, index) => {
    if (input.env.signal.aborted) throw new Error('aborted');
    const answered = await verifyBatch(input, provider, batch, index, batches.length);
    if (answered.error !== null) {
      report.failedCalls++;
      report.errors.push(answered.error);
    }
    for (const r of answered.results) outcomes.set(r.id, r);
  });
  const kept = parsed.outputs.map((o) => ({ ...o, output: { ...o.output, findings: [] as Finding[] } }));
  const withheld: WithheldFinding[] = [];
  for (const c of candidates) {
    const r = { ...outcomes.get(c.id)!, line: anchors[candidates.indexOf(c)] ?? null };
    if (r.outcome === 'withheld') {
      withheld.push({
        finding: c.finding,
        chunk: c.chunk,
        reason: r.reason,
        verdict: r.verdict!,
        score: r.score!,
      });
    } else kept[c.output]!.output.findings.push(c.finding);
    report[r.outcome]++;
    // Every withheld candidate is kept (the body lists them); the others up to the bound.
    if (r.outcome === 'withheld' || report.results.length < MAX_REPORTED) report.results.push(r);
  }
  report.status =
    report.failedCalls === 0 ? 'verified' : report.failedCalls === batches.length ? 'failed' : 'partial';
  return { outputs: kept, withheld, report };
}

/** One batch: its call, and each of its candidates' fate. Never throws for the call's failure. */
async function verifyBatch(
  input: VerifyInput,
  provider: ModelProvider,
  batch: Candidate[],
  index: number,
  total: number,
): Promise<{ results: CandidateReport[]; error: string | null }> {
  const { run, gathered, env } = input;
  const patches = new Map(gathered.changed.map((f) => [normaliseFindingPath(f.filename), f]));
  const paths = [...new Set(batch.map((c) => c.finding.path))];
  const code = await Promise.all(
    paths.map(async (path) => {
      const file = patches.get(normaliseFindingPath(path));
      const findings = batch.filter((c) => c.finding.path === path).map((c) => c.finding);
      return {
        path,
        text: await citedCode(
          { path: file?.filename ?? path, patch: file?.patch ?? null, status: file?.status ?? null },
          findings,
          gathered.fileAtHead,
        ),
      };
    }),
  );
  const pr = { repo: run.repo, number: run.prNumber, title: input.pr.title, headSha: run.headSha };
  const called = await callModel(env, {
    provider,
    spanName: 'verification',
    system: VERIFICATION_SYSTEM,
    messages: [{ role: 'user', content: verificationPrompt(pr, code, batch) }],
    timeoutMs: input.config.timeoutMs,
    attributes: { batch: index, batches: total, candidates: batch.length, files: paths.length },
    jsonSchema: VERIFICATION_SCHEMA,
    schemaName: 'verification',
  });
  const base = (c: Candidate) => ({
    id: c.id,
    severity: c.finding.severity,
    path: c.finding.path,
    line: c.finding.line ?? null,
    title: c.finding.title,
  });
  const unverified = (c: Candidate, reason: string): CandidateReport => ({
    ...base(c),
    outcome: 'unverified',
    verdict: null,
    score: null,
    reason,
  });
  const error = !called.ok
    ? `the verification call failed: ${called.error}`
    : called.truncated
      ? 'the verification answer was cut at the output token limit'
      : null;
  if (error !== null || !called.ok) return { results: batch.map((c) => unverified(c, error!)), error };
  const parsed = parseVerification(called.text, new Set(batch.map((c) => c.id)));
  if (!parsed.ok) {
    const why = `the verification answer could not be used: ${parsed.error}`;
    return { results: batch.map((c) => unverified(c, why)), error: why };
  }
  const results = batch.map((c): CandidateReport => {
    const r = parsed.results.get(c.id);
    if (!r) return unverified(c, 'the verification answer left this candidate out');
    const outcome = decide(c.finding.severity, r, input.settings.threshold);
    return { ...base(c), outcome, verdict: r.verdict, score: r.score, reason: r.reason.trim() };
  });
  return { results, error: null };
}

const VERIFICATION_SCHEMA = verificationJsonSchema();

export const verifyStage: Stage<VerifyInput, Verified> = {
  name: 'verify',
  run: verify,
  counts: ({ report }) => ({
    status: report.status,
    ...(report.reason ? { reason: report.reason } : {}),
    candidates: report.candidates,
    published: report.published,
    withheld: report.withheld,
    unverified: report.unverified,
    calls: report.calls,
    failedCalls: report.failedCalls,
    threshold: report.threshold,
  }),
};
