import { alike } from '../memory/alike.js';
import { clusterIndex } from '../memory/cluster-index.js';
import { Suppressor, suppressionReason, type Suppression } from '../memory/suppress.js';
import type { Clock } from '../clock.js';
import type { GitHubClient } from '../github/client.js';
import type { FindingRecord } from '../store/findings.js';
import type { Store } from '../store/index.js';
import type { WithheldEntry } from '../store/suppression.js';
import type { Anchored } from './anchor.stage.js';
import type { AnchoredFinding } from './anchors.js';
import { cachedReader } from './concurrency.js';
import { continuePrior, matchAcrossPushes, type PriorConcern } from './cross-push.js';
import { findingFingerprint, normaliseFindingPath } from './fingerprint.js';
import type { Gathered } from './gather.stage.js';
import { compareHeads } from './gather.js';
import { findLineText, followLine } from './line-map.js';
import type { Plan } from './plan.stage.js';
import type { PriorFinding, RecallReport } from './run-result.js';
import type { RunScope, Stage } from './stage.js';

/**
 * Stage `recall`: what the review remembers of earlier reviews and of what reviewers did with them
 * (NAMES.md "Memory"; docs/memory.md), between the anchor check and the record:
 *
 * 1. **Cross-push matching** (cross-push.ts): a new finding that continues a prior finding of the pull
 *    request in other words (same path, anchor at or near the prior anchor followed to this head, text
 *    alike) takes that finding's title and category, and so its fingerprint and its thread.
 * 2. **Suppression** (memory/suppress.ts): a finding like one dismissed on this pull request, or whose
 *    most alike cluster of the repository suppresses, is withheld: stored as `suppressed` with why, never
 *    posted, counted in the body; it joins its cluster (`size`), once however often the run is retried.
 *    A prior finding dismissed on the pull request is not carried as still open either (record stage).
 *
 * Findings from failing checks (validation) are facts, not opinions: they are neither matched nor
 * withheld. Reading GitHub here (the compare of an earlier head) never fails the review: a comparison
 * that cannot be read falls back to finding the anchored line's text at this head.
 */

export type RecallInput = {
  run: RunScope;
  /** The review's clock (how long the cluster index is trusted on its stamp). */
  clock: Pick<Clock, 'now'>;
  gh: GitHubClient;
  store: Pick<Store, 'findings' | 'suppression'>;
  gathered: Pick<Gathered, 'prior' | 'fileAtHead'>;
  plan: Pick<Plan, 'review'>;
  anchored: Anchored;
};

export type SuppressedFinding = { finding: AnchoredFinding; suppression: Suppression; reason: string };

export type Recalled = {
  /** The anchor stage's output with the withheld findings taken out and the continued ones renamed. */
  anchored: Anchored;
  suppressed: SuppressedFinding[];
  /** What the run result keeps of it (`recall`). */
  recall: RecallReport;
  /** The fingerprints of the findings dismissed on the pull request (no longer carried as open). */
  dismissed: ReadonlySet<string>;
};

async function recall(input: RecallInput): Promise<Recalled> {
  const { anchored, run, store } = input;
  const fromChecks = new Set(anchored.fromValidation.map((f) => `${f.path}\u0000${f.title}`));
  const isCheck = (f: AnchoredFinding) => fromChecks.has(`${f.path}\u0000${f.title}`);
  let findings = anchored.report.findings;
  const opinions = findings.filter((f) => !isCheck(f));
  const memory: RecallReport = { continued: [], suppressed: [] };
  const dismissed = await store.suppression.dismissedOnPr(run.repo, run.prNumber);
  const gone = new Set(dismissed.map((d) => d.fingerprint));
  if (opinions.length === 0) return { anchored, suppressed: [], recall: memory, dismissed: gone };

  // 1. Cross-push matching.
  const priors = await priorsAtHead(input, opinions);
  const matches = matchAcrossPushes(opinions, priors);
  if (matches.length > 0) {
    const renamed = new Map(matches.map((m) => [opinions[m.index]!, m]));
    findings = findings.map((f) => {
      const m = renamed.get(f);
      return m ? continuePrior(f, m.prior) : f;
    });
    memory.continued = matches.map((m) => ({
      fingerprint: m.prior.fingerprint,
      title: m.title,
      priorTitle: m.prior.title,
      score: Math.round(m.score * 1000) / 1000,
    }));
  }

  // 2. Suppression.
  const clusters = await clusterIndex(store.suppression, run.repo, input.clock.now());
  const suppressor = new Suppressor(clusters, dismissed);
  const candidates = suppressor.empty ? [] : findings.filter((f) => !isCheck(f));
  const decisions = await suppressor.decide(
    candidates.map((f) => ({ ...f, fingerprint: findingFingerprint(f) })),
    (ids) => store.suppression.standing(ids),
  );
  const decided = new Map(candidates.map((f, i) => [f, decisions[i]!]));
  const suppressed: SuppressedFinding[] = [];
  const kept: AnchoredFinding[] = [];
  for (const f of findings) {
    const why = decided.get(f) ?? null;
    if (why) suppressed.push({ finding: f, suppression: why, reason: suppressionReason(why) });
    else kept.push(f);
  }
  if (suppressed.length > 0) {
    const entries: WithheldEntry[] = suppressed.map((s) => ({
      fingerprint: findingFingerprint(s.finding),
      clusterId: s.suppression.reason === 'cluster' ? s.suppression.cluster.id : null,
      reason: s.suppression.reason,
    }));
    await store.suppression.recordWithheld(run, entries);
    memory.suppressed = suppressed.map(({ finding: f, suppression: s }) => ({
      fingerprint: findingFingerprint(f),
      severity: f.severity,
      title: f.title,
      path: f.path.trim() === '' ? null : f.path,
      line: f.line,
      reason: s.reason,
      clusterId: s.reason === 'cluster' ? s.cluster.id : null,
      like: s.reason === 'cluster' ? s.cluster.title : s.like.title,
    }));
  }
  if (matches.length === 0 && suppressed.length === 0) {
    return { anchored, suppressed, recall: memory, dismissed: gone };
  }
  const report = { ...anchored.report, findings: kept };
  return {
    anchored: { ...anchored, report, findings: kept.map(({ lineText: _text, ...f }) => f) },
    suppressed,
    recall: memory,
    dismissed: gone,
  };
}

/**
 * The prior findings a new finding could continue, with their anchors followed to this head: those on
 * the path of a new finding that does not match a prior fingerprint, whose text is alike it (only they
 * are worth a comparison of heads). Their body, end line and line text come from their stored record.
 */
async function priorsAtHead(
  input: RecallInput,
  findings: readonly AnchoredFinding[],
): Promise<PriorConcern[]> {
  const { prior } = input.gathered;
  if (prior.length === 0) return [];
  const priorFingerprints = new Set(prior.map((p) => p.fingerprint));
  const fresh = findings.filter((f) => !priorFingerprints.has(findingFingerprint(f)));
  const raised = new Set(findings.map((f) => findingFingerprint(f)));
  const open = prior.filter(
    (p) => p.path !== null && !raised.has(p.fingerprint) && fresh.some((f) => samePath(f.path, p.path!)),
  );
  if (open.length === 0) return [];
  const records = new Map<string, FindingRecord>();
  for (const r of await input.store.findings.listForPr(input.run.repo, input.run.prNumber)) {
    if (!records.has(r.fingerprint)) records.set(r.fingerprint, r);
  }
  const comparisons = new HeadComparisons(input);
  const out: PriorConcern[] = [];
  for (const p of open) {
    const record = records.get(p.fingerprint);
    const text = { title: p.title, body: record?.body ?? '' };
    if (!fresh.some((f) => samePath(f.path, p.path!) && alike(f, text))) continue;
    out.push({
      fingerprint: p.fingerprint,
      title: p.title,
      body: text.body,
      category: p.category,
      path: p.path,
      at: await comparisons.follow(p, record ?? null),
    });
  }
  return out;
}

const samePath = (a: string, b: string) => normaliseFindingPath(a) === normaliseFindingPath(b);

/** The changed files between an earlier head and this one, read once per earlier head. */
class HeadComparisons {
  private readonly files = cachedReader((sinceSha) => this.read(sinceSha));

  constructor(private readonly input: RecallInput) {}

  /** A prior finding's anchor at this head (null: it had none). */
  async follow(
    p: PriorFinding,
    record: FindingRecord | null,
  ): Promise<{ line: number; endLine: number } | null> {
    const line = p.line ?? record?.line ?? null;
    if (line === null || p.path === null) return null;
    const endLine = record?.line === line && record.endLine !== null ? Math.max(line, record.endLine) : line;
    const { run } = this.input;
    if (p.headSha === null || p.headSha === run.headSha) return { line, endLine };
    const files = await this.files(p.headSha);
    const path = normaliseFindingPath(p.path);
    if (files !== null && (!files.has(path) || files.get(path) !== null)) {
      const patch = files.get(path) ?? null;
      const start = followLine(patch, line).line;
      return { line: start, endLine: Math.max(start, followLine(patch, endLine).line) };
    }
    // No comparison (a force push) or no patch: where the anchored line's text is now, else where it was.
    const source = await this.input.gathered.fileAtHead(p.path).catch(() => null);
    const found = source === null ? null : findLineText(source, record?.lineText ?? null, line);
    return found === null ? { line, endLine } : { line: found, endLine: found + (endLine - line) };
  }

  private async read(sinceSha: string): Promise<Map<string, string | null> | null> {
    const { plan, run, gh } = this.input;
    const toMap = (files: Array<{ filename: string; patch?: string | null }>) =>
      new Map(files.map((f) => [normaliseFindingPath(f.filename), f.patch ?? null]));
    if (plan.review.kind === 'incremental' && plan.review.sinceSha === sinceSha)
      return toMap(plan.review.files);
    try {
      const comparison = await compareHeads(gh, run.owner, run.name, sinceSha, run.headSha);
      if (comparison.status === 'identical') return new Map();
      if (comparison.status !== 'ahead' || comparison.truncated) return null;
      return toMap(comparison.files);
    } catch {
      return null;
    }
  }
}

export const recallStage: Stage<RecallInput, Recalled> = {
  name: 'recall',
  run: recall,
  counts: (r) => ({
    findings: r.anchored.findings.length,
    continued: r.recall.continued.length,
    suppressedByCluster: r.recall.suppressed.filter((s) => s.reason === 'cluster').length,
    suppressedAsDismissed: r.recall.suppressed.filter((s) => s.reason === 'dismissed').length,
  }),
};
