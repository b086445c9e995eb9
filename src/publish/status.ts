import { approvalGate } from '../policy/approval.js';
import type { PrFacts } from '../policy/matcher.js';
import type { ReviewPolicy } from '../policy/policy.schema.js';
import type { ReviewOutput } from '../review/output.schema.js';
import type { RunResult, SemanticCoverage } from '../review/run-result.js';
import { isAlwaysKept } from '../review/strictness.js';
import { validationFailed, type ValidationReport } from '../validation/report.js';
import { plural } from './markdown.js';

export type MergeStatus = 'CLEAR' | 'CAUTION' | 'BLOCK';
export type CheckConclusion = 'success' | 'neutral' | 'failure';
export type Risk = 'low' | 'medium' | 'high' | 'critical';

/** What publication reads of an analysed run. */
export type PublishableAnalysis = {
  output: ReviewOutput;
  coverage: SemanticCoverage | null;
  /** Some part of the analysis failed (a failed chunk, or the fallback output). */
  degraded: boolean;
  /** Repo-native validation beside the review (absent or null: off). */
  validation?: ValidationReport | null;
  /** The memory the model was given (named in the body's footer; absent or null: none recorded). */
  memory?: MemoryUsed | null;
};

/** What the footer names of the memory a review was given. */
export type MemoryUsed = Pick<NonNullable<RunResult['memory']>, 'contexts' | 'knowledge' | 'linkedIssues'>;

/** What publication reads of a stored analysis. */
export function analysisOf(result: RunResult): PublishableAnalysis {
  return {
    output: result.output,
    coverage: result.coverage ?? null,
    degraded: result.degraded === true,
    validation: result.validation ?? null,
    memory: result.memory ?? null,
  };
}

const RISK_ORDER: Record<Risk, number> = { low: 0, medium: 1, high: 2, critical: 3 };

/**
 * The merge status (review-engine 3.1; the exact rule is in docs/publication.md):
 * - `BLOCK`: a `blocker` or `high` finding;
 * - `CAUTION`: otherwise, when the verdict is `needs-attention`, a `medium` finding is present, a
 *   validation is missing, a validation check failed or did not finish, the semantic coverage is missing
 *   or incomplete, or the analysis is degraded;
 * - `CLEAR`: none of these.
 */
export function mergeStatus(a: PublishableAnalysis): MergeStatus {
  const severities = new Set(a.output.findings.map((f) => f.severity));
  if (severities.has('blocker') || severities.has('high')) return 'BLOCK';
  if (
    a.output.verdict === 'needs-attention' ||
    severities.has('medium') ||
    a.output.missingValidations.length > 0 ||
    validationFailed(a.validation) ||
    a.coverage === null ||
    !a.coverage.complete ||
    a.degraded
  ) {
    return 'CAUTION';
  }
  return 'CLEAR';
}

/**
 * Why the merge status is what it is, in words: `1 blocker, 2 high findings` for BLOCK; the conditions
 * that hold for CAUTION (`1 medium finding; 2 missing validations`); `no finding needs attention` for CLEAR.
 */
export function mergeStatusCause(a: PublishableAnalysis): string {
  const count = (severity: string) => a.output.findings.filter((f) => f.severity === severity).length;
  const status = mergeStatus(a);
  if (status === 'BLOCK') {
    const parts = [];
    if (count('blocker') > 0) parts.push(plural(count('blocker'), 'blocker'));
    if (count('high') > 0) parts.push(plural(count('high'), 'high finding'));
    return parts.join(', ');
  }
  if (status === 'CAUTION') {
    const parts = [];
    if (count('medium') > 0) parts.push(plural(count('medium'), 'medium finding'));
    if (a.output.verdict === 'needs-attention') parts.push('the model asks for attention');
    if (a.output.missingValidations.length > 0) {
      parts.push(plural(a.output.missingValidations.length, 'missing validation'));
    }
    if (validationFailed(a.validation)) {
      const failed = (a.validation?.commands ?? []).filter((c) => !c.passed).map((c) => c.command);
      parts.push(`validation failed${failed.length > 0 ? `: ${failed.join(', ')}` : ''}`);
    }
    if (a.coverage === null) parts.push('no semantic coverage');
    else if (!a.coverage.complete) parts.push('semantic coverage incomplete');
    if (a.degraded) parts.push('part of the analysis failed');
    return parts.join('; ');
  }
  return 'no finding needs attention';
}

/** Words of a merge verdict that call the change ready, against a status that is not CLEAR. */
const READY = /\b(?:safe|ready|good|fine|ok(?:ay)?) to (?:merge|ship|land)\b|\blgtm\b|\bapprove(?:d)?\b/i;
/** Words that ask to hold the change, against a CLEAR status. */
const HOLD =
  /\b(?:do not|don't|must not|should not|not safe to|not ready to) (?:merge|ship|land)\b|\bblock(?:s|ed|ing)? (?:the )?merge\b/i;

/** Whether the model's merge verdict contradicts the computed status. */
export function verdictContradicts(status: MergeStatus, mergeVerdict: string): boolean {
  if (status === 'CLEAR') return HOLD.test(mergeVerdict);
  return READY.test(mergeVerdict) && !HOLD.test(mergeVerdict);
}

/**
 * The risk auto approval compares with `autoApprove.maxRisk`: `critical` with a blocker finding, `high`
 * with a high one, `medium` with any other finding or a non-clear merge status, `low` otherwise.
 */
export function riskOf(a: PublishableAnalysis): Risk {
  const severities = new Set(a.output.findings.map((f) => f.severity));
  if (severities.has('blocker')) return 'critical';
  if (severities.has('high')) return 'high';
  if (a.output.findings.length > 0 || mergeStatus(a) !== 'CLEAR') return 'medium';
  return 'low';
}

/** Whether the coverage was computed on `headSha` and covers every changed file. */
export function coveragePinned(coverage: SemanticCoverage | null, headSha: string): boolean {
  return coverage !== null && coverage.headSha === headSha;
}

/**
 * The check conclusion of review-engine 3.1. With `statusChecks.requiredConfidence` above 0, a missing or
 * lower confidence gives `failure`. Then (whatever the confidence setting) missing, incomplete or unpinned
 * coverage gives `neutral`, a merge status other than `CLEAR` gives `neutral`, and `success` otherwise.
 */
export function checkConclusion(
  a: PublishableAnalysis,
  opts: { requiredConfidence: number; headSha: string },
): CheckConclusion {
  if (opts.requiredConfidence > 0) {
    const confidence = a.output.confidenceScore;
    if (!Number.isInteger(confidence) || confidence < opts.requiredConfidence) return 'failure';
  }
  if (!coveragePinned(a.coverage, opts.headSha) || !a.coverage!.complete) return 'neutral';
  if (mergeStatus(a) !== 'CLEAR') return 'neutral';
  return 'success';
}

export type ApprovalDecision = { approve: true } | { approve: false; reasons: string[] };

/**
 * Auto approval (review-engine 3.2): every condition must hold, and each one that does not is named.
 * Findings here are the ones that will be published (after the strictness filter). Verdict's severities
 * have no `nit` or `info` level, so any published finding stops approval.
 */
export function autoApproval(
  a: PublishableAnalysis,
  pr: { draft: boolean; headSha: string; facts: PrFacts },
  policy: ReviewPolicy,
): ApprovalDecision {
  const reasons: string[] = [];
  if (!policy.autoApprove.enabled) reasons.push('autoApprove.enabled is off');
  if (!policy.summary.confidence.enabled) reasons.push('summary.confidence is disabled');
  if (a.output.confidenceScore !== 5) reasons.push(`confidence is ${a.output.confidenceScore}/5, not 5`);
  if (a.coverage === null) reasons.push('no semantic coverage was recorded');
  else {
    if (!a.coverage.complete || a.coverage.failed > 0 || a.coverage.skipped > 0 || a.coverage.partial > 0) {
      reasons.push('semantic coverage is incomplete');
    }
    if (a.coverage.headSha !== pr.headSha) {
      reasons.push(`the head moved since the coverage was computed (${a.coverage.headSha.slice(0, 7)})`);
    }
  }
  if (a.degraded) reasons.push('the analysis is degraded');
  if (a.output.missingValidations.length > 0) reasons.push('validations are missing');
  const nonTrivial = a.output.findings.filter(
    (f) => !['nit', 'info'].includes(f.severity as string) || isAlwaysKept(f),
  );
  if (nonTrivial.length > 0) reasons.push(`${nonTrivial.length} finding(s) above nit/info level`);
  const risk = riskOf(a);
  if (RISK_ORDER[risk] > RISK_ORDER[policy.autoApprove.maxRisk]) {
    reasons.push(`risk ${risk} is above autoApprove.maxRisk ${policy.autoApprove.maxRisk}`);
  }
  reasons.push(...approvalGate(pr, policy));
  return reasons.length === 0 ? { approve: true } : { approve: false, reasons };
}
