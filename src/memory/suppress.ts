import type {
  ClusterStanding,
  ClusterText,
  DismissedFinding,
  MatchableCluster,
} from '../store/suppression.js';
import { AlikeIndex, type AlikeText } from './alike.js';
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

/** What a finding is most like: a finding dismissed on the pull request, or a cluster. */
export type Likeness =
  | { reason: 'dismissed'; like: DismissedFinding; score: number }
  | { reason: 'cluster'; cluster: ClusterText; score: number };

export type SuppressibleFinding = AlikeText & { fingerprint: string };

/** The standing of clusters by id, as read when they were matched. */
export type StandingOf = (ids: readonly string[]) => Promise<ReadonlyMap<string, ClusterStanding>>;

export class Suppressor {
  private readonly dismissed: AlikeIndex<DismissedFinding>;
  private readonly dismissedFingerprints: Map<string, DismissedFinding>;

  constructor(
    private readonly clusters: AlikeIndex<ClusterText>,
    dismissed: readonly DismissedFinding[],
  ) {
    this.dismissed = new AlikeIndex(dismissed);
    this.dismissedFingerprints = new Map(dismissed.map((d) => [d.fingerprint, d]));
  }

  /** Nothing can be withheld: no cluster and nothing dismissed on the pull request. */
  get empty(): boolean {
    return this.clusters.items.length === 0 && this.dismissed.items.length === 0;
  }

  /** What `finding` is most like, the dismissed findings first; null when nothing is alike it. */
  likeness(finding: SuppressibleFinding): Likeness | null {
    const same = this.dismissedFingerprints.get(finding.fingerprint);
    if (same) return { reason: 'dismissed', like: same, score: 1 };
    const dismissed = this.dismissed.best(finding);
    if (dismissed) return { reason: 'dismissed', like: dismissed.match, score: dismissed.score };
    const cluster = this.clusters.best(finding);
    return cluster ? { reason: 'cluster', cluster: cluster.match, score: cluster.score } : null;
  }

  /**
   * Why each finding is withheld, or null when it is posted; the standing of the clusters they are most
   * like is read once for all of them (`standingOf`), a cluster gone since is no reason.
   */
  async decide(
    findings: readonly SuppressibleFinding[],
    standingOf: StandingOf,
  ): Promise<(Suppression | null)[]> {
    const likeness = findings.map((f) => this.likeness(f));
    const ids = [...new Set(likeness.flatMap((l) => (l?.reason === 'cluster' ? [l.cluster.id] : [])))];
    const standing = ids.length > 0 ? await standingOf(ids) : new Map<string, ClusterStanding>();
    return likeness.map((l) => (l === null ? null : withholds(l, standing)));
  }
}

/** Whether a likeness withholds: a dismissed finding always, a cluster when it suppresses. */
export function withholds(l: Likeness, standing: ReadonlyMap<string, ClusterStanding>): Suppression | null {
  if (l.reason === 'dismissed') return l;
  const s = standing.get(l.cluster.id);
  return s && clusterSuppresses(s)
    ? { reason: 'cluster', cluster: { ...s, ...l.cluster }, score: l.score }
    : null;
}

/** What the finding's stored record says of why it was withheld. */
export function suppressionReason(s: Suppression): string {
  return s.reason === 'dismissed'
    ? `like a finding dismissed on this pull request: "${s.like.title}"`
    : `like memory cluster ${s.cluster.id} ("${s.cluster.title}"), whose findings reviewers dismissed`;
}
