import type { DismissedFinding, MatchableCluster } from '../store/suppression.js';
import { AlikeIndex, type AlikeText } from './alike.js';
import type { ClusterMemory } from './cluster-index.js';
import { clusterSuppresses } from './match.js';

/**
 * Which new findings are withheld because reviewers dismissed findings like them (NAMES.md "Memory",
 * "Suppression"), as a pure decision over what the store read:
 *
 * 1. a finding like one dismissed on the same pull request (its fingerprint, or alike its text: a 👎,
 *    `@verdict ignore`, or a thread a person resolved leaving its lines) is never posted there again;
 * 2. a finding belongs to the cluster of its repository most alike it (as feedback is folded); it is
 *    withheld when that cluster suppresses (`clusterSuppresses`: action `suppress`, or at least two
 *    dismissals and no 👍 unless its action is `keep`). A finding most like a `keep` cluster is posted,
 *    however alike it is to a suppressing one.
 */

export type Suppression =
  | { reason: 'dismissed'; like: DismissedFinding; score: number }
  | { reason: 'cluster'; cluster: MatchableCluster; score: number };

export type SuppressibleFinding = AlikeText & { fingerprint: string };

export class Suppressor {
  private readonly dismissed: AlikeIndex<DismissedFinding>;
  private readonly dismissedFingerprints: Map<string, DismissedFinding>;

  constructor(
    private readonly clusters: ClusterMemory,
    dismissed: readonly DismissedFinding[],
  ) {
    this.dismissed = new AlikeIndex(dismissed);
    this.dismissedFingerprints = new Map(dismissed.map((d) => [d.fingerprint, d]));
  }

  /** A suppressor over clusters as the store lists them (tests; the review uses `clusterMemory`). */
  static of(clusters: readonly MatchableCluster[], dismissed: readonly DismissedFinding[]): Suppressor {
    const memory = { index: new AlikeIndex(clusters), standing: new Map(clusters.map((c) => [c.id, c])) };
    return new Suppressor(memory, dismissed);
  }

  /** Nothing can be withheld: no cluster and nothing dismissed on the pull request. */
  get empty(): boolean {
    return this.clusters.standing.size === 0 && this.dismissed.items.length === 0;
  }

  /** Why `finding` is withheld, or null when it is posted. */
  decide(finding: SuppressibleFinding): Suppression | null {
    const same = this.dismissedFingerprints.get(finding.fingerprint);
    if (same) return { reason: 'dismissed', like: same, score: 1 };
    const dismissed = this.dismissed.best(finding);
    if (dismissed) return { reason: 'dismissed', like: dismissed.match, score: dismissed.score };
    const found = this.clusters.index.best(finding);
    const standing = found ? this.clusters.standing.get(found.match.id) : undefined;
    if (found && standing && clusterSuppresses(standing)) {
      return { reason: 'cluster', cluster: { ...standing, ...found.match }, score: found.score };
    }
    return null;
  }
}

/** What the finding's stored record says of why it was withheld. */
export function suppressionReason(s: Suppression): string {
  return s.reason === 'dismissed'
    ? `like a finding dismissed on this pull request: "${s.like.title}"`
    : `like memory cluster ${s.cluster.id} ("${s.cluster.title}"), whose findings reviewers dismissed`;
}
