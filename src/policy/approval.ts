import type { ReviewPolicy } from './policy.schema.js';
import { matchRules, type PrFacts } from './matcher.js';

/**
 * The conditions of auto approval that the pull request and the policy decide alone (no analysis): a
 * draft, and the approval and review filters. What stops approval, each named; empty when they hold.
 */
export function approvalGate(
  pr: { draft: boolean; facts: PrFacts },
  policy: Pick<ReviewPolicy, 'autoApprove' | 'filters'>,
): string[] {
  const reasons: string[] = [];
  if (pr.draft) reasons.push('the pull request is a draft');
  if (policy.autoApprove.filters.length > 0) {
    const m = matchRules(policy.autoApprove.filters, pr.facts);
    if (m.decision !== 'match') reasons.push(`autoApprove.filters: ${m.decision.replace('_', ' ')}`);
  }
  if (policy.filters.length > 0) {
    const m = matchRules(policy.filters, pr.facts);
    if (m.decision !== 'match') reasons.push(`review filters: ${m.decision.replace('_', ' ')}`);
  }
  return reasons;
}

/**
 * `autoApprove.instructions` go to the model when auto approval is possible: it is on, confidence is shown,
 * and the pull request passes the gate above. Null otherwise, or when there are none.
 */
export function approvalInstructions(
  pr: { draft: boolean; facts: PrFacts },
  policy: Pick<ReviewPolicy, 'autoApprove' | 'filters' | 'summary'>,
): string | null {
  const text = policy.autoApprove.instructions.trim();
  if (text === '' || !policy.autoApprove.enabled || !policy.summary.confidence.enabled) return null;
  return approvalGate(pr, policy).length === 0 ? text : null;
}
